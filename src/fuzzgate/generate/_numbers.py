"""Numbers: bounds as JSON Schema means them, and Hypothesis strategies of numbers within them."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any, Final, TypeAlias

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from hypothesis.strategies import SearchStrategy

from fuzzgate.generate._draw import Predicate
from fuzzgate.generate._model import NumberRule

Bound = tuple[float | int, bool]
"""A bound and whether it is exclusive."""


def exact(value: int | float) -> Fraction:
    """The decimal the schema author wrote (0.1 is 1/10, not the nearest binary float)."""
    return Fraction(value) if isinstance(value, int) else Fraction(repr(value))


def lower_bound(rule: NumberRule) -> Bound | None:
    bounds: list[Bound] = []
    if rule.minimum is not None:
        bounds.append((rule.minimum, False))
    if rule.exclusive_minimum is not None:
        bounds.append((rule.exclusive_minimum, True))
    return max(bounds, default=None)


def upper_bound(rule: NumberRule) -> Bound | None:
    bounds: list[Bound] = []
    if rule.maximum is not None:
        bounds.append((rule.maximum, False))
    if rule.exclusive_maximum is not None:
        bounds.append((rule.exclusive_maximum, True))
    return min(bounds, key=lambda b: (b[0], not b[1]), default=None)


def integer_bounds(rule: NumberRule) -> tuple[int | None, int | None]:
    low = lower_bound(rule)
    high = upper_bound(rule)
    lo = None if low is None else (math.floor(low[0]) + 1 if low[1] else math.ceil(low[0]))
    hi = None if high is None else (math.ceil(high[0]) - 1 if high[1] else math.floor(high[0]))
    return lo, hi


def is_multiple(value: int | float, multiple: int | float) -> bool:
    """jsonschema's own arithmetic, float noise included, so "valid" here means valid there."""
    if isinstance(multiple, float):
        try:
            quotient = value / multiple
            return int(quotient) == quotient
        except OverflowError:
            return (Fraction(value) / Fraction(multiple)).denominator == 1
    return not value % multiple


def number_ok(rule: NumberRule, value: int | float) -> bool:
    if rule.minimum is not None and value < rule.minimum:
        return False
    if rule.maximum is not None and value > rule.maximum:
        return False
    if rule.exclusive_minimum is not None and value <= rule.exclusive_minimum:
        return False
    if rule.exclusive_maximum is not None and value >= rule.exclusive_maximum:
        return False
    return rule.multiple_of is None or is_multiple(value, rule.multiple_of)


def integer_step(rule: NumberRule) -> int:
    """The spacing of integers that satisfy multipleOf (1 when there is none)."""
    return 1 if rule.multiple_of is None else exact(rule.multiple_of).numerator


def closest_integer(rule: NumberRule, target: int = 0) -> int | None:
    """The valid integer nearest to `target`, or None when no integer satisfies the rule."""
    lo, hi = integer_bounds(rule)
    step = integer_step(rule)
    start = target if lo is None else max(target, lo)
    start = start if hi is None else min(start, hi)
    below = start // step * step
    for candidate in sorted({below, below + step, below - step}, key=lambda c: (abs(c - target), c)):
        if (lo is None or candidate >= lo) and (hi is None or candidate <= hi) and number_ok(rule, candidate):
            return candidate
    return None


_FLOAT_MAX: Final = 1.7976931348623157e308
Strategy: TypeAlias = SearchStrategy[Any]


def _times(step: int | Fraction) -> Callable[[int], Any]:
    def times(k: int) -> Any:
        return k * step

    return times


def _within(rule: NumberRule) -> Callable[[Any], bool]:
    def within(value: Any) -> bool:
        return math.isfinite(value) and number_ok(rule, value)

    return within


def integers(rule: NumberRule) -> Strategy | None:
    lo, hi = integer_bounds(rule)
    step = integer_step(rule)
    k_lo = None if lo is None else -(-lo // step)
    k_hi = None if hi is None else hi // step
    if k_lo is not None and k_hi is not None and k_lo > k_hi:
        return None
    strategy = st.integers(k_lo, k_hi)
    if step != 1:
        strategy = strategy.map(_times(step))
    if isinstance(rule.multiple_of, float):
        strategy = strategy.filter(Predicate(_within(rule)))
    return strategy


def floats(rule: NumberRule) -> Strategy | None:
    low, high = lower_bound(rule), upper_bound(rule)
    if rule.multiple_of is not None:
        return _float_multiples(rule, low, high)
    lo = None if low is None else float(max(low[0], -_FLOAT_MAX))
    hi = None if high is None else float(min(high[0], _FLOAT_MAX))
    exclude_lo = low is not None and low[1]
    exclude_hi = high is not None and high[1]
    if lo is not None and hi is not None and (lo > hi or (lo == hi and (exclude_lo or exclude_hi))):
        return None
    try:
        strategy = st.floats(
            min_value=lo,
            max_value=hi,
            exclude_min=exclude_lo,
            exclude_max=exclude_hi,
            allow_nan=False,
            allow_infinity=False,
        )
        strategy.validate()
    except (InvalidArgument, OverflowError):
        return None
    return strategy.filter(Predicate(_within(rule)))


def _float_multiples(
    rule: NumberRule, low: tuple[float | int, bool] | None, high: tuple[float | int, bool] | None
) -> Strategy | None:
    assert rule.multiple_of is not None
    step = exact(rule.multiple_of)
    k_lo = None if low is None else math.ceil(Fraction(low[0]) / step)
    k_hi = None if high is None else math.floor(Fraction(high[0]) / step)
    if k_lo is not None and k_hi is not None and k_lo > k_hi:
        return None
    return st.integers(k_lo, k_hi).map(_times(step)).map(float).filter(Predicate(_within(rule)))
