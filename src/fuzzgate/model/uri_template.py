"""RFC 6570 URI templates as fuzzgate reads and fills them: the variables a resource template
declares, and the URI it names for generated values.

Written here rather than taken from `uritemplate`: that library percent-encodes every value, as a
well-behaved client must, while a fuzzer has to control the exact URI the server parses (its
values carry their own raw, percent- and double-encoded characters).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

_TEMPLATE_VARIABLE = re.compile(r"\{([+#./;?&]?)([^{}]*)\}")


def template_variables(template: str) -> list[str]:
    """The variable names of an RFC 6570 URI template, in order (`{a}`, `{+a}`, `{?a,b}`, `{a*}`, `{a:3}`)."""
    names: list[str] = []
    for match in _TEMPLATE_VARIABLE.finditer(template):
        for part in match.group(2).split(","):
            name = part.strip().rstrip("*").split(":", 1)[0]
            if name and name not in names:
                names.append(name)
    return names


def expand_template(template: str, values: Mapping[str, Any]) -> str:
    """The URI `template` names with `values` put in as they are, not percent-encoded: a fuzzer
    controls the exact URI (its values carry their own encodings); RFC 6570's operators keep their
    prefixes and separators. Missing variables expand to nothing, non-strings to their JSON."""

    def text(value: Any) -> str:
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

    def expand(match: re.Match[str]) -> str:
        operator, body = match.group(1), match.group(2)
        parts: list[str] = []
        for part in body.split(","):
            name = part.strip().rstrip("*").split(":", 1)[0]
            if name not in values:
                continue
            value = text(values[name])
            parts.append(f"{name}={value}" if operator in ("?", "&", ";") else value)
        if not parts:
            return ""
        first, separator = _OPERATORS.get(operator, ("", ","))
        return first + separator.join(parts)

    return _TEMPLATE_VARIABLE.sub(expand, template)


_OPERATORS = {"+": ("", ","), "#": ("#", ","), ".": (".", "."), "/": ("/", "/"), ";": (";", ";"),
              "?": ("?", "&"), "&": ("&", "&")}  # fmt: skip


