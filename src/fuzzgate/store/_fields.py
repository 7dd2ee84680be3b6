"""Checked reads of parsed JSON for the baseline's file parser: each failure is a `ValueError`
saying, in words for a user, which field is missing or of which wrong type."""

from __future__ import annotations

from enum import StrEnum
from typing import TypeVar

from fuzzgate.findings import JSONValue

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


def enum_field(enum: type[_E], data: dict[str, JSONValue], key: str) -> _E:
    raw = expect(required(data, key), str, f'"{key}"')
    try:
        return enum(raw)
    except ValueError:
        known = ", ".join(member.value for member in enum)
        raise ValueError(f'has an unknown {key} "{raw}" (expected one of: {known})') from None


def location(value: JSONValue) -> tuple[str, int]:
    loc = expect(value, dict, '"location"')
    path = expect(required(loc, "path", "location."), str, '"location.path"')
    line = expect(required(loc, "line", "location."), int, '"location.line"')
    return path, line
