"""Values near one a tool accepted: the value again, or changed a little, so that calls keep getting
past the tool's own checks and land on the code just behind them.

A tool that takes only a pool of values (time-zone names, known ids) refuses almost every random
string, and once each value it accepts was sent, a fuzzer that never sends the same request twice
has nothing left that gets through. Dictionary-driven fuzzers (AFL's and libFuzzer's dictionaries)
keep the tokens that worked and mutate around them; `nearby` does the same for one value: variant 0
is the value itself, the others change its case, add or drop one character, or add a path segment
before or after it, which is where a check that matches a prefix, or splits on `/`, lets through
what it should not. Pure: the same value and variant give the same result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

_STRING_VARIANTS: Final[tuple[tuple[str, Callable[[str], str]], ...]] = (
    ("as-is", lambda v: v),
    ("upper", str.upper),
    ("lower", str.lower),
    ("swapcase", str.swapcase),
    ("append", lambda v: v + "x"),
    ("drop-last", lambda v: v[:-1]),
    ("drop-first", lambda v: v[1:]),
    ("segment", lambda v: v + "/x"),
    ("parent-segment", lambda v: "x/" + v),
    ("dot", lambda v: v + "."),
    ("dash", lambda v: v + "-1"),
    ("space", lambda v: v + " "),
    ("quote", lambda v: v + "'"),
)
_NUMBER_VARIANTS: Final[tuple[tuple[str, Callable[[int], int]], ...]] = (
    ("as-is", lambda v: v),
    ("plus-one", lambda v: v + 1),
    ("minus-one", lambda v: v - 1),
    ("negated", lambda v: -v),
    ("zero", lambda v: 0),
    ("tenfold", lambda v: v * 10),
)


def variants(value: str | int) -> int:
    """How many variants `nearby` has for `value`."""
    return len(_NUMBER_VARIANTS if isinstance(value, int) else _STRING_VARIANTS)


def nearby(value: str | int, variant: int) -> tuple[str, str | int]:
    """(label, value) of variant `variant` (modulo `variants(value)`) of `value`; the label names
    the change, never the value."""
    if isinstance(value, int):
        label, number = _NUMBER_VARIANTS[variant % len(_NUMBER_VARIANTS)]
        return label, number(value)
    label, text = _STRING_VARIANTS[variant % len(_STRING_VARIANTS)]
    return label, text(value)
