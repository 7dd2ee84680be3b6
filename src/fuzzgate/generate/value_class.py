"""What a key's name and a string's shape say about a value: its class (`ValueClass`: an id, a path,
a URI, a name) from the key it came under (`id`, `note_id`, `noteId`, `file_path`, `url`, `title`)
or from its own shape (a UUID, an absolute path, `scheme://`), the hint words that name its entity
(`note` of `note_id`, of `list_notes`), whether a key names a secret, and the key a name matches
fields by. Pure; the dictionary and the fields it fills both read this."""

from __future__ import annotations

import re
from enum import StrEnum
from functools import lru_cache


class ValueClass(StrEnum):
    ID = "id"
    PATH = "path"
    URI = "uri"
    NAME = "name"


_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_ID_WORDS = frozenset({"id", "ids", "uuid", "uuids", "guid", "identifier"})
_URI_WORDS = frozenset({"uri", "uris", "url", "urls", "href", "link", "endpoint"})
_PATH_WORDS = frozenset({"path", "paths", "file", "files", "filename", "filepath", "dir", "directory", "folder", "cwd"})
_NAME_WORDS = frozenset({"name", "names", "title", "label", "slug"})
_CLASS_WORDS = _ID_WORDS | _URI_WORDS | _PATH_WORDS | _NAME_WORDS
_SECRET_WORDS = frozenset(
    {"token", "secret", "password", "passwd", "pwd", "credential", "credentials", "apikey", "key", "auth",
     "authorization", "cookie", "private", "signature", "bearer", "session"}
)  # fmt: skip


_VERB_WORDS = frozenset(
    {"get", "list", "search", "read", "show", "view", "describe", "fetch", "find", "query", "create", "new", "add",
     "make", "insert", "update", "set", "edit", "rename", "append", "modify", "patch", "put", "write", "delete",
     "remove", "drop", "destroy", "clear", "close", "archive", "all", "by", "for", "of", "the", "a", "an", "to"}
)  # fmt: skip
"""Words of a tool name that say what it does, not what it works on: `get` in `get_note` and
`get_user` must not make a user's id a hint for notes."""


UUID_SHAPE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
URI_SHAPE = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]{0,31}://[^\s\"'<>()\[\]{}`]+")
PATH_SHAPE = re.compile(r"(?<![\w/.:~-])(?:~)?/[\w.@+-]+(?:/[\w.@+-]+)*/?")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@lru_cache(maxsize=4096)
def words(name: str) -> tuple[str, ...]:
    """The words of a key or tool name (split at `_`, `-`, `.`, spaces and camelCase), lowercased."""
    return tuple(w.lower() for w in _WORD.findall(name))


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


@lru_cache(maxsize=4096)
def hint_words(name: str) -> frozenset[str]:
    """The words of `name` that may name an entity (`note` of `note_id`, of `list_notes`)."""
    return frozenset(_singular(w) for w in words(name) if w not in _CLASS_WORDS and w not in _VERB_WORDS)


@lru_cache(maxsize=4096)
def normal_key(name: str) -> str:
    return "".join(words(name))


@lru_cache(maxsize=4096)
def name_key(name: str | None) -> str:
    """The key a constant's name matches fields by: its last identifier, normalized like a field's
    (`mode`, `self.mode` and `args["mode"]` match a field `mode`; `len(items)` matches `items`)."""
    found = _IDENTIFIER.findall(name) if name else []
    return normal_key(found[-1]) if found else ""


@lru_cache(maxsize=4096)
def key_class(name: str) -> ValueClass | None:
    """The class a key's name gives its values: `id`, `note_id`, `noteId` -> ID; `path`, `file`,
    `dir` -> PATH; `uri`, `url` -> URI; `name`, `title` -> NAME."""
    found = words(name)
    if not found:
        return None
    if found[-1] in _ID_WORDS:
        return ValueClass.ID
    if any(w in _URI_WORDS for w in found):
        return ValueClass.URI
    if any(w in _PATH_WORDS for w in found):
        return ValueClass.PATH
    if found[-1] in _NAME_WORDS:
        return ValueClass.NAME
    return None


@lru_cache(maxsize=4096)
def secret_key(name: str) -> bool:
    """Whether a key names something secret: its values are never kept."""
    return any(w in _SECRET_WORDS for w in words(name))


def shape_class(value: str) -> ValueClass | None:
    """The class a string's own shape gives it: a UUID, `scheme://...`, an absolute path."""
    if UUID_SHAPE.fullmatch(value):
        return ValueClass.ID
    if URI_SHAPE.fullmatch(value):
        return ValueClass.URI
    if len(value) > 1 and PATH_SHAPE.fullmatch(value):
        return ValueClass.PATH
    return None
