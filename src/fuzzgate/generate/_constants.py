"""Constants the server's own code compares against, and the values a field takes from them.

A bug behind `if mode == "turbo"` or `if 41 < n < 43` waits for a random draw to hit one string or
one number; libFuzzer's comparison tracing and Hypothesis's local-constant mining hand the fuzzer
those operands instead. The coverage collector reports them as (name, value): the variable,
attribute or key the code compares with, when there is one. `ConstantStore` keeps them for the
per-run dictionary (`Dictionary.learn_constants`), which offers a named one to the fields named
like it and an unnamed one, less often, to any field of its type; `mutate` nudges towards them.

A number comparison is rarely `==`: the values around a constant are offered with it (`c - 1`, `c`,
`c + 1`), so both sides of `<`, `<=`, `>` and `>=` get their turn.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Final, TypeAlias

Scalar: TypeAlias = str | int | float

MAX_CONSTANTS: Final = 1024
"""Named and unnamed constants kept each, first seen first; later ones are refused (a server's
own module is measured, and mined, before the libraries it loads on demand)."""
MAX_CONSTANT_CHARS: Final = 512


def usable(value: object) -> bool:
    """Whether `value` is a constant worth offering: a non-empty string no longer than
    `MAX_CONSTANT_CHARS`, or a finite number (not a boolean: a flag has two values, both tried)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, str):
        return 0 < len(value) <= MAX_CONSTANT_CHARS
    if isinstance(value, int):
        return True
    return isinstance(value, float) and math.isfinite(value)


def number_variants(value: int | float, *, integer: bool) -> tuple[int | float, ...]:
    """`value`, `value - 1` and `value + 1`, as a field of integers or of numbers takes them: a
    fractional constant gives an integer field the integers on either side of it."""
    if isinstance(value, float) and (integer or value.is_integer()):
        if not math.isfinite(value):
            return ()
        if value.is_integer():
            value = int(value)
        else:
            low = math.floor(value)
            return (low, low + 1)
    return (value, value - 1, value + 1)


def field_values(value: Scalar, types: Collection[str]) -> tuple[Scalar, ...]:
    """The values a field of JSON `types` takes from constant `value`: a string to a string field,
    a number to an integer or number field (`number_variants`); nothing across kinds (a code that
    compares a string field with 404 takes no "404")."""
    if isinstance(value, str):
        return (value,) if "string" in types else ()
    if "number" in types:
        return number_variants(value, integer=False)
    if "integer" in types:
        return number_variants(value, integer=True)
    return ()


def _number_text(value: int | float) -> str:
    """1 and 1.0 are one constant to the code that compares (and "1" another)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value)


class ConstantStore:
    """Constants by normalized name ("" for unnamed ones), each once, in first-seen order."""

    def __init__(self, limit: int = MAX_CONSTANTS) -> None:
        self._limit = limit
        self._named: dict[str, dict[tuple[bool, str], Scalar]] = {}
        self._named_count = 0
        self._unnamed: dict[tuple[bool, str], Scalar] = {}

    def __len__(self) -> int:
        return self._named_count + len(self._unnamed)

    def add(self, key: str, value: Scalar) -> bool:
        """Keep `value` under `key` (normalized; "" when the code compared it with no name); returns
        whether it is new. Values that are not `usable` and values past the limit are refused."""
        if not usable(value):
            return False
        slot = (isinstance(value, str), value if isinstance(value, str) else _number_text(value))
        if key:
            same = self._named.setdefault(key, {})
            if slot in same or self._named_count >= self._limit:
                return False
            same[slot] = value
            self._named_count += 1
            return True
        if slot in self._unnamed or len(self._unnamed) >= self._limit:
            return False
        self._unnamed[slot] = value
        return True

    def named(self, key: str) -> tuple[Scalar, ...]:
        return tuple(self._named.get(key, {}).values()) if key else ()

    def unnamed(self) -> tuple[Scalar, ...]:
        return tuple(self._unnamed.values())

    def items(self) -> tuple[tuple[str | None, Scalar], ...]:
        """Every constant as (key or None, value): named ones by name in first-seen order, then unnamed."""
        named = [(key, value) for key, same in self._named.items() for value in same.values()]
        return (*named, *((None, value) for value in self._unnamed.values()))
