"""What a reply holds, found by one walk: the values `Dictionary` may keep, each with the key it came
under, its class and its hint words, in the order the walk meets them.

Finding is apart from keeping: the walk reads nothing but the reply, so one reply is parsed and
walked once per call, and both the run's dictionary (`Dictionary.keep_held`) and the values a
sequence step records (`dictionary.held_values`) are drawn from the same `Held` tuple.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from fuzzgate.generate.value_class import (
    PATH_SHAPE,
    URI_SHAPE,
    UUID_SHAPE,
    ValueClass,
    hint_words,
    key_class,
    normal_key,
    secret_key,
    shape_class,
)

MAX_DEPTH: Final = 12
MAX_TEXT_CHARS: Final = 10_000
"""Plain text past this length is not searched for tokens (JSON text is still parsed). Every
pattern here is linear in the text (bounded repeats where a match could start anywhere): a reply
is the server's, and a 64 KiB echo must not cost seconds."""

GENERIC_KEYS: Final = frozenset(
    {"text", "type", "result", "results", "content", "contents", "message", "error", "description", "mimetype",
     "iserror", "meta", "annotations", "structuredcontent", "data", "value", "status", "ok"}
)  # fmt: skip
"""Keys too generic to match a field by name alone (`text` would feed every reply back to every note)."""
_KEY_STEMS: Final = ("id", "path", "file", "dir", "folder", "cwd", "uri", "url", "href", "link", "endpoint", "name",
                     "title", "label", "slug")  # fmt: skip
"""Every class word holds one: a text holding none names no key, and is spared the token search."""
_TOKEN: Final = re.compile(
    r"\b([A-Za-z][A-Za-z0-9_]{0,63})(?![A-Za-z0-9_])"
    r"(?=(\s*[:=]\s*[\"'`]?|\s+#?)([A-Za-z0-9/~][\w.:/@+~-]{0,127})(?![\w.:/@+~-]))"
)
"""A key named like a class (`id`, `noteId`, `file_path`) and the token after it (`id: 42`,
`note_id=7`, `id 42`, `path: /srv/a`); a lookahead, so `with id 5` finds `id`."""


@dataclass(frozen=True, slots=True)
class Held:
    """One value a reply holds, before any dictionary judges it."""

    value: str | int
    key: str
    """The key it came under, as the reply spells it; "" for a token of text."""
    value_class: ValueClass | None
    hints: frozenset[str]


def parse_reply(payload: str) -> Any:
    """A reply's JSON text (`CallOutcome.payload`) parsed; None when it holds none."""
    try:
        return json.loads(payload) if payload else None
    except ValueError:
        return None


def held(source: str, payload: Any) -> tuple[Held, ...]:
    """The values `payload` (a parsed reply, a listing) holds, in walk order. `source` names where it
    came from (a tool's name): its words are hints for its values."""
    found: list[Held] = []
    if payload is not None:
        _walk(payload, "", hint_words(source), found, 0)
    return tuple(found)


def _walk(value: Any, key: str, hints: frozenset[str], found: list[Held], depth: int) -> None:
    if depth > MAX_DEPTH:
        return
    if isinstance(value, Mapping):
        for name, item in value.items():
            if not isinstance(name, str) or secret_key(name):
                continue
            inner = hints if normal_key(name) in GENERIC_KEYS else hints | hint_words(name)
            _walk(item, name, inner, found, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _walk(item, key, hints, found, depth + 1)
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int):
        found.append(Held(value, key, key_class(key), hints))
    elif isinstance(value, str):
        _string(value, key, hints, found, depth)


def _string(value: str, key: str, hints: frozenset[str], found: list[Held], depth: int) -> None:
    by_key = key_class(key)
    stripped = value.strip()
    if stripped[:1] in ("{", "[") and by_key is None:
        try:
            parsed = json.loads(stripped)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict | list):
            _walk(parsed, key, hints, found, depth + 1)
            return
    value_class = by_key or shape_class(value)
    if value_class is not None or (key and normal_key(key) not in GENERIC_KEYS):
        found.append(Held(value, key, value_class, hints))
    if by_key is None and (len(value) > 40 or any(c.isspace() for c in value)):
        _tokens(value, hints, found)


def _tokens(text: str, hints: frozenset[str], found: list[Held]) -> None:
    """Identifiers, UUIDs, URIs and paths in plain text (`Created note 7 (id: 42) at /tmp/n`)."""
    if len(text) > MAX_TEXT_CHARS:
        return
    lowered = text.lower()
    for match in _TOKEN.finditer(text) if any(stem in lowered for stem in _KEY_STEMS) else ():
        name, token = match.group(1), match.group(3).rstrip(".,;:")
        value_class = key_class(name)
        separated = match.group(2).strip(" \"'`#")
        # "id 42" counts; "name is ..." does not: only an identifier may follow its key bare.
        if value_class is None or secret_key(name) or (not separated and value_class is not ValueClass.ID):
            continue
        if value_class is ValueClass.ID and not any(c.isdigit() for c in token):
            continue
        found.append(Held(token, name, value_class, hints | hint_words(name)))
    for pattern, value_class, mark in (
        (UUID_SHAPE, ValueClass.ID, "-"),
        (URI_SHAPE, ValueClass.URI, "://"),
        (PATH_SHAPE, ValueClass.PATH, "/"),
    ):
        for match in pattern.finditer(text) if mark in text else ():
            token = match.group(0).rstrip(".,;:")
            if value_class is not ValueClass.PATH or len(token) > 1:
                found.append(Held(token, "", value_class, hints))
