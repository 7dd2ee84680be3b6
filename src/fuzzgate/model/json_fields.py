"""Checked reads of parsed JSON for the readers of fuzzgate's files (`findings.py`'s codec, the
baseline's entries): each failure is a `ValueError` saying, in words for a user, which field is
missing or of which wrong type."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, TypeVar

JSONValue = Any

_T = TypeVar("_T")


def required(data: dict[str, JSONValue], key: str, prefix: str = "") -> JSONValue:
    if key not in data:
        raise ValueError(f'is missing "{prefix}{key}"')
    return data[key]


def expect(value: JSONValue, kind: type[_T], what: str) -> _T:
    # bool is an int in Python, not in JSON.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        expected, found = _JSON_TYPE[kind], json_type(value)
        raise ValueError(f"has {what} of the wrong type: expected {expected}, found {found}")
    return value


_JSON_TYPE: dict[type, str] = {
    dict: "an object",
    list: "an array",
    str: "a string",
    int: "an integer",
    bool: "true or false",
}


def json_type(value: JSONValue) -> str:
    if value is None:
        return "null"
    return next((name for kind, name in _JSON_TYPE.items() if type(value) is kind), "a number")


_E = TypeVar("_E", bound=StrEnum)


def enum_field(enum: type[_E], data: dict[str, JSONValue], key: str, where: str = "", default: _E | None = None) -> _E:
    """`data[key]` as a member of `enum`; `default` when it is absent (else it is required)."""
    if default is not None and key not in data:
        return default
    raw = expect(required(data, key, where), str, f'"{where}{key}"')
    try:
        return enum(raw)
    except ValueError:
        known = ", ".join(member.value for member in enum)
        raise ValueError(f'has an unknown {where}{key} "{raw}" (expected one of: {known})') from None


def optional_enum(enum: type[_E], data: dict[str, JSONValue], key: str, where: str = "") -> _E | None:
    """`data[key]` as a member of `enum`; None when it is absent or null."""
    return None if data.get(key) is None else enum_field(enum, data, key, where)


def optional(data: dict[str, JSONValue], key: str, kind: type[_T], what: str) -> _T | None:
    """`data[key]` checked to be of `kind`; None when it is absent or null."""
    value = data.get(key)
    return None if value is None else expect(value, kind, what)


def location(value: JSONValue, where: str = "") -> tuple[str, int]:
    loc = expect(value, dict, f'"{where}location"')
    path = expect(required(loc, "path", f"{where}location."), str, f'"{where}location.path"')
    line = expect(required(loc, "line", f"{where}location."), int, f'"{where}location.line"')
    return path, line
