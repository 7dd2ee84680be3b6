"""Payload taken out of what a server said, so that one bug keeps one signature whatever the
arguments that reached it. Part of the fingerprint contract (docs/fingerprints.md): a change here
changes fingerprints."""

from __future__ import annotations

import re
from typing import Any

_NORMALIZERS = (
    (re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"), "<uuid>"),
    (re.compile(r"0x[0-9a-fA-F]+|\b[0-9a-fA-F]{8,}\b"), "<hex>"),
    (re.compile(r"(['\"`]).*?\1"), "<str>"),
    (re.compile(r"(?:[A-Za-z]:)?(?:[/\\][\w.@-]+)+"), "<path>"),
    (re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"), "<num>"),
    (re.compile(r"\s+"), " "),
)


def normalize_message(text: str, arguments: Any = None) -> str:
    """An error message with the payload taken out: ids, quoted values, paths and numbers become
    placeholders, so the same bug reached with other arguments normalizes the same way. The string
    values of `arguments` (the request) are taken out too wherever they stand as whole words: a
    server that quotes them bare ("Invalid resourceType: NaN. Must be ...") would otherwise give one
    bug a fingerprint per value."""
    text = text.strip().splitlines()[0] if text.strip() else ""
    # Longest first, ties in a fixed order (a set's order varies with the interpreter's hash seed).
    for value in sorted(argument_strings(arguments), key=lambda v: (-len(v), v)):
        text = re.sub(rf"(?<!\w){re.escape(value)}(?!\w)", "<arg>", text)
    for pattern, placeholder in _NORMALIZERS:
        text = pattern.sub(placeholder, text)
    return text[:200]


def normalize_schema_path(path: str | None) -> str:
    """`properties/items/items/3/type` → `properties/items/items/*/type`: the failing keyword, not the index."""
    return re.sub(r"(?<=/)\d+(?=/|$)", "*", path or "")


_MAX_ARGUMENT_STRINGS = 64


def argument_strings(value: Any, *, multiline: bool = False, longest: int = 1000) -> set[str]:
    """The non-blank string values in a request's arguments (the first few dozen, of at most
    `longest` characters; one line each unless `multiline`)."""
    found: set[str] = set()
    stack = [value]
    while stack and len(found) < _MAX_ARGUMENT_STRINGS:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and item.strip() and (multiline or "\n" not in item) and len(item) <= longest:
            found.add(item)
    return found

