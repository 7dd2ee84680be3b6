"""Checked reads of fuzzgate's JSON files (`report.json`, baseline entries, corpus entries, the
shared store's records, a repro given to `replay`): `parse_json`, the one parser of their bytes, and
the checks of parsed fields `findings.py`'s codec and the baseline's entries use. Each failure is a
`ValueError` saying, in words for a user, what is wrong: text that is not JSON, or JSON too deeply
nested to use; a field missing or of the wrong type."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any, TypeVar

JSONValue = Any

_T = TypeVar("_T")


class UnusableJSON(ValueError):
    """Bytes that are not JSON fuzzgate can use; the message says why (`not valid JSON (...)`)."""


def parse_json(data: bytes) -> JSONValue:
    """The JSON value `data` holds, or `UnusableJSON` saying why there is none. JSON nested deeper
    than Python's recursion limit, or holding an integer longer than Python converts, is refused
    here too: the parser would raise `RecursionError` or a `ValueError` of its own, which no reader
    of a user's file should see."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnusableJSON(f"not UTF-8 text (bad byte at offset {exc.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UnusableJSON(f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise UnusableJSON("not usable JSON (nested too deeply)") from None
    except ValueError as exc:
        # Python's own limits on what it parses (an integer of more than 4,300 digits).
        raise UnusableJSON(f"not usable JSON ({str(exc).partition(';')[0]})") from None


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
