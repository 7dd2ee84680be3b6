"""`${VAR}` expansion over a config file's raw text, as wallfacer does it, before any parsing."""

from __future__ import annotations

import re
from collections.abc import Mapping

from fuzzgate.model.errors import ConfigError

# `$$` first, so "$${X}" is a literal "${X}"; any other "$" is kept as written.
_REFERENCE = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def expand_variables(text: str, environ: Mapping[str, str], *, display: str) -> str:
    """`text` with every `${NAME}` replaced by `environ[NAME]` and every `$$` by `$`.

    Comments are expanded too (the text is not parsed yet), so an unset variable in a comment is
    an error as well; the hint says how to keep it literal.
    """

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name is None:
            return "$"
        value = environ.get(name)
        if value is None:
            raise _unset(text, match, display)
        return value

    return _REFERENCE.sub(replace, text)


def expanded_values(text: str, environ: Mapping[str, str]) -> tuple[str, ...]:
    """The values `expand_variables` puts into `text` (each once, in order; `$${X}` is no reference).

    Any of them may be a secret (a token passed in through the environment), wherever in the file it
    went, so the run's redactor takes them all."""
    values = (environ.get(match.group(1)) for match in _REFERENCE.finditer(text) if match.group(1) is not None)
    return tuple(dict.fromkeys(value for value in values if value))


def _unset(text: str, match: re.Match[str], display: str) -> ConfigError:
    name = match.group(1)
    line_start = text.rfind("\n", 0, match.start()) + 1
    line = text.count("\n", 0, match.start()) + 1
    column = match.start() - line_start + 1
    hint = f"set {name} in the environment, or write $${{{name}}} for a literal ${{{name}}}"
    if text[line_start : match.start()].lstrip().startswith("#"):
        hint += " (variables are expanded before parsing, comments included)"
    return ConfigError(
        f"{display}: line {line}, column {column}: environment variable ${{{name}}} is not set", hint=hint
    )
