"""Smaller and simpler variants of a kept input: what shrinking a corpus entry and cleansing it try.

`shrink_candidates` is one step of a shrinker (Hypothesis', Fuchsia's minimize): each candidate is
the input made smaller in one place, and whoever calls it keeps the first that still gives the
same feedback, then asks again. `cleanse_candidates` is Fuchsia's cleanse: each part replaced by the
simplest value of its type, so that a kept entry shows which of its parts matter. Both are pure
and deterministic, and never break a bound the input satisfies (a required property stays, a
string keeps its `minLength`, a number its `minimum`): a shrunk input that the server refuses
before the code it reached rarely keeps its feedback. Bounds an input already breaks (an
adversarial entry) are not restored.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any, Final

from fuzzgate.generate._locate import MISSING, Location, Schemas, View, kind_of, same, with_value
from fuzzgate.generate._model import NumberRule
from fuzzgate.generate._numbers import closest_integer, lower_bound, number_ok, upper_bound

MAX_SINGLE_DROPS: Final = 64
"""Array elements tried one by one per array (the first ones); halving comes first anyway."""
MAX_SIMPLE_DEPTH: Final = 4


def size(arguments: Any) -> int:
    """The length of the canonical JSON text (as `CorpusEntry.size` counts an input)."""
    return len(_canonical(arguments))


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":"), default=str)


def number_rule(view: View) -> NumberRule:
    """The number bounds `view` declares (draft 4's boolean `exclusiveMinimum` included)."""
    minimum, maximum = view.number("minimum"), view.number("maximum")
    low, high = view.number("exclusiveMinimum"), view.number("exclusiveMaximum")
    if view.keyword("exclusiveMinimum") is True and minimum is not None:
        low, minimum = minimum, None
    if view.keyword("exclusiveMaximum") is True and maximum is not None:
        high, maximum = maximum, None
    step = view.number("multipleOf")
    return NumberRule(minimum, maximum, low, high, step if step is not None and step > 0 else None)


def number_fits(view: View, value: int | float, *, integer: bool) -> bool:
    """Whether `value` keeps `view`'s number bounds (and is whole where only integers are allowed)."""
    if integer and not float(value).is_integer():
        return False
    try:
        return number_ok(number_rule(view), value)
    except (OverflowError, ValueError, ZeroDivisionError):
        return False


def integer_only(view: View, value: Any) -> bool:
    """Whether the location takes integers only: declared so, or holding one with no type declared."""
    types = view.types
    if types:
        return "integer" in types and "number" not in types
    return isinstance(value, int)


def simplest_number(view: View, *, integer: bool) -> int | float | None:
    """0 when the bounds allow it, else the allowed value nearest to 0 (None: none found)."""
    rule = number_rule(view)
    try:
        found: int | float | None = closest_integer(rule, 0)
    except (OverflowError, ValueError, ZeroDivisionError):
        found = None
    if found is not None or integer:
        return found
    low, high = lower_bound(rule), upper_bound(rule)
    candidates = [bound[0] for bound in (low, high) if bound is not None and not bound[1]]
    if low is not None and high is not None:
        candidates.append((low[0] + high[0]) / 2)
    return next((c for c in candidates if number_fits(view, c, integer=False)), None)


def simplest_string(view: View, current: str | None = None) -> str:
    """The empty string when `minLength` allows it, else the current value cut to it (or "a"s)."""
    least = view.count("minLength") or 0
    if current is not None and len(current) >= least:
        return current[:least]
    return "a" * least


def simplest(schemas: Schemas, view: View, kind: str, current: Any = MISSING, depth: int = 0) -> Any:
    """The simplest value of JSON type `kind` that `view` allows where that is simple to find (the
    first of its enum of that kind; "", 0, false, [], null; the least `minLength`, `minimum`,
    `minItems`), or `MISSING`."""
    listed = view.enum
    if listed is not None:
        return next((item for item in listed if _same_kind(kind_of(item), kind)), MISSING)
    if kind == "null":
        return None
    if kind == "boolean":
        return False
    if kind == "string":
        return simplest_string(view, current if isinstance(current, str) else None)
    if kind in ("integer", "number"):
        found = simplest_number(view, integer=kind == "integer")
        return MISSING if found is None else found
    if depth >= MAX_SIMPLE_DEPTH:
        return MISSING
    if kind == "array":
        least = view.count("minItems") or 0
        if not least:
            return []
        items, _ = schemas.child(view, "", 0)
        item = default_value(schemas, schemas.view(items, MISSING), depth + 1)
        if item is MISSING and isinstance(current, list) and current:
            item = current[0]
        return MISSING if item is MISSING else [item] * least
    if kind == "object":
        out: dict[str, Any] = {}
        for key in view.required:
            schema, _ = schemas.child(view, "", key)
            found = default_value(schemas, schemas.view(schema, MISSING), depth + 1)
            if found is MISSING:
                return MISSING
            out[key] = found
        return out
    return MISSING


def default_value(schemas: Schemas, view: View, depth: int = 0) -> Any:
    """A value for a location that holds none: its `default`, its first example, or the simplest
    value of its first declared type (not `null` when another is declared)."""
    for part in view.parts:
        if "default" in part:
            return part["default"]
        examples = part.get("examples")
        if isinstance(examples, list) and examples:
            return examples[0]
    listed = view.enum
    if listed:
        return listed[0]
    order = ("string", "integer", "number", "boolean", "object", "array", "null")
    kind = next((k for k in order if k in view.types), None)
    return MISSING if kind is None else simplest(schemas, view, kind, MISSING, depth)


def _same_kind(found: str, wanted: str) -> bool:
    return found == wanted or {found, wanted} == {"integer", "number"}


def shrink_candidates(arguments: dict[str, Any], schema: dict[str, Any]) -> list[tuple[dict[str, Any], str]]:
    """One-step smaller variants of `arguments` with their origins, biggest reduction first (by
    canonical JSON length; ties in walk order), each strictly smaller than `arguments`, none twice:
    an optional property dropped (`shrink:drop:<pointer>`), array elements dropped, halves first
    (`shrink:items:`), a string emptied or halved (`shrink:string:`), a number moved towards 0
    (to 0 or its bound nearest 0, halfway there, a digit less: `shrink:number:`), at any depth.
    A required property is never dropped."""
    schemas = Schemas(schema)
    limit = size(arguments)
    found: dict[str, tuple[int, int, dict[str, Any], str]] = {}
    for location in schemas.locations(arguments, schema):
        for new, kind in _smaller(location):
            candidate = with_value(arguments, location.path, new)
            text = _canonical(candidate)
            if len(text) < limit and text not in found:
                found[text] = (len(text), len(found), candidate, f"shrink:{kind}:{location.pointer}")
    return [(candidate, origin) for _, _, candidate, origin in sorted(found.values(), key=lambda f: f[:2])]


def _smaller(location: Location) -> Iterator[tuple[Any, str]]:
    value, view = location.value, location.view
    if location.path and isinstance(location.path[-1], str) and not location.required:
        yield MISSING, "drop"
    if view.enum is not None:
        return
    if isinstance(value, list):
        least = view.count("minItems") or 0
        floor = least if len(value) >= least else 0
        half = len(value) // 2
        if len(value) >= 2:
            for kept in (value[:half], value[half:]):
                if len(kept) >= floor:
                    yield kept, "items"
        if len(value) - 1 >= floor:
            for index in range(min(len(value), MAX_SINGLE_DROPS)):
                yield value[:index] + value[index + 1 :], "items"
    elif isinstance(value, str):
        least = view.count("minLength") or 0
        floor = least if len(value) >= least else 0
        yield value[:floor], "string"
        yield value[: max(floor, len(value) // 2)], "string"
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield from ((number, "number") for number in _towards_zero(view, value))


def _towards_zero(view: View, value: int | float) -> Iterator[int | float]:
    integer = integer_only(view, value)
    keep_bounds = number_fits(view, value, integer=integer)
    target = simplest_number(view, integer=integer) if keep_bounds else 0
    if target is None or not math.isfinite(value):
        return
    steps: list[int | float] = [target]
    if isinstance(value, float) and not value.is_integer():
        steps.append(math.trunc(value))
        steps.append(target + (value - target) / 2)
    else:
        whole, start = int(value), int(target)
        half = abs(whole - start) // 2
        steps.append(start + half if whole > start else start - half)
        # Halving seldom shortens the text; a digit less always does.
        steps.append(abs(whole) // 10 * (1 if whole > 0 else -1))
    for number in steps:
        if not keep_bounds or number_fits(view, number, integer=integer):
            yield number


def cleanse_candidates(arguments: dict[str, Any], schema: dict[str, Any]) -> list[tuple[dict[str, Any], str]]:
    """For each leaf of `arguments` (a string, number, boolean or array, at any depth), `arguments`
    with that leaf replaced by the simplest value of its type the schema allows (`simplest`), with
    origin `cleanse:<pointer>`; leaves already simplest, nulls and objects (whose leaves are
    cleansed one by one) are skipped. Ordered by pointer, then by position."""
    schemas = Schemas(schema)
    found: list[tuple[str, dict[str, Any]]] = []
    for location in schemas.locations(arguments, schema)[1:]:
        value = location.value
        if value is None or isinstance(value, dict):
            continue
        new = simplest(schemas, location.view, kind_of(value), value)
        if new is MISSING or same(new, value):
            continue
        found.append((location.pointer, with_value(arguments, location.path, new)))
    found.sort(key=lambda f: f[0])
    return [(candidate, f"cleanse:{pointer}") for pointer, candidate in found]
