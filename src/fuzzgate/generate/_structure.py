"""Structure: arrays around and well above their bounds, deep nesting, objects with many properties.

Some bugs behind validation need a shape rather than a value: a fixed-size buffer that holds 50
items, a recursive walk with no depth limit, work per key. Each variant here changes the shape of
one location and is labelled by that shape (`structure:/properties/items=size 51`), never by its
content; whether it is valid is decided by the case stream's validator, as for every candidate.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final

from fuzzgate.generate._base import BaseBuilder
from fuzzgate.generate._model import UNAVAILABLE, JsonType, Leaf, Schema
from fuzzgate.generate._walk import Variant

SIZE_TIER: Final = 2
"""Sizes well above the bounds share the tier of the edges, so a tool gets them within its first
few dozen cases (a bug that needs more than 50 items would otherwise wait behind every magic number)."""
SHAPE_TIER: Final = 3
LARGE_SIZES: Final = (51, 100, 1000)
NESTING_DEPTHS: Final = (64, 180)
"""Deep, and as deep as a whole request can go: the MCP Python SDK parses no message nested more
than 200 levels (its JSON parser's limit) and serializes none past about 250, so a deeper value
would test fuzzgate's own client and every Python server's transport instead of the tool (the
location adds up to seven levels, the request envelope three)."""
MANY_PROPERTIES: Final = 1000
MAX_STRUCTURE_BYTES: Final = 1_000_000
"""A shape whose JSON text would exceed this is skipped: it would measure the transport, not the tool."""
TOTAL_STRUCTURE_BYTES: Final = 8_000_000
"""What the shapes of one schema may add up to: every fixed candidate crosses the generation
worker's pipe in one reply, under the generation deadline, and stays in memory for the run."""


class ByteAllowance:
    """The bytes the shapes of one schema may still add, spent in walk order (so deterministically)."""

    def __init__(self, total: int = TOTAL_STRUCTURE_BYTES) -> None:
        self.left = total

    def take(self, size: int) -> bool:
        """Whether a shape of `size` bytes fits (and, if so, spend them)."""
        if size > min(self.left, MAX_STRUCTURE_BYTES):
            return False
        self.left -= size
        return True


def array_variants(
    leaf: Leaf, value: list[Any], label: str, bases: BaseBuilder, allowance: ByteAllowance
) -> Iterator[Variant]:
    """The array at `label` resized: 0, 1, minItems - 1, minItems, maxItems, maxItems + 1, then 51,
    100 and 1000 items, filled with the item schema's base value."""
    rule = leaf.array
    if rule is None:
        filler: Any = value[-1] if value else UNAVAILABLE
        small = [0, 1]
        unique = False
    else:
        filler = value[-1] if value and not rule.prefix else bases.base(rule.items)
        small = [0, 1, rule.min_items - 1, rule.min_items]
        if rule.max_items is not None:
            small += [rule.max_items, rule.max_items + 1]
        unique = rule.unique
    seen = {len(value)}
    for size in [*small, *LARGE_SIZES]:
        if size < 0 or size in seen:
            continue
        seen.add(size)
        if size > len(value) and filler is UNAVAILABLE:
            continue
        resized = _resized(value, filler, size, unique=unique, allowance=allowance)
        if resized is not None:
            yield Variant(SIZE_TIER, resized, f"structure:{label}=size {size}")


def nesting_variants(leaf: Leaf, label: str) -> Iterator[Variant]:
    """Arrays in arrays and objects in objects, `NESTING_DEPTHS` levels deep, where the location
    takes free-form values of that kind (below the arguments object, whose keys are the tool's)."""
    if not label:
        return
    for depth in NESTING_DEPTHS:
        if _free_form_arrays(leaf):
            yield Variant(SHAPE_TIER, _nested_arrays(depth), f"structure:{label}=depth {depth} arrays")
        if _free_form_objects(leaf):
            yield Variant(SHAPE_TIER, _nested_objects(depth), f"structure:{label}=depth {depth} objects")


def many_properties_variant(
    leaf: Leaf, value: dict[str, Any], label: str, bases: BaseBuilder, allowance: ByteAllowance
) -> Iterator[Variant]:
    """The object at `label` with `MANY_PROPERTIES` more properties, where it takes any keys: a map
    type (`additionalProperties` spelled out) or a free-form object below the arguments. Merely open
    objects are left alone, as `boundary` does with unknown keys."""
    rule = leaf.object
    if rule is None:
        if not label:
            return
        extra: Any = 0
        declared: set[str] = set()
    else:
        if not rule.additional_explicit:
            return
        extra = bases.base(rule.additional)
        declared = {key for key, _ in rule.properties}
    if extra is UNAVAILABLE:
        return
    added = _keys(MANY_PROPERTIES, value.keys() | declared)
    if not allowance.take((len(json.dumps(extra, ensure_ascii=True)) + 10) * len(added)):
        return
    grown = {**value, **dict.fromkeys(added, extra)}
    yield Variant(SHAPE_TIER, grown, f"structure:{label}={MANY_PROPERTIES} properties")


def _resized(value: list[Any], filler: Any, size: int, *, unique: bool, allowance: ByteAllowance) -> list[Any] | None:
    if size <= len(value):
        return value[:size]
    added = size - len(value)
    if not allowance.take((len(json.dumps(filler, ensure_ascii=True)) + 8) * added):
        return None
    if unique:
        return value + [_distinct(filler, index) for index in range(added)]
    return value + [filler] * added


def _distinct(filler: Any, index: int) -> Any:
    """Item `index` of a uniqueItems array: the filler made different where that is simple (the
    validator judges whether the result still fits the item schema)."""
    if isinstance(filler, bool) or filler is None:
        return filler
    if isinstance(filler, int | float):
        return filler + index
    if isinstance(filler, str):
        return f"{filler}{index}"
    return filler


def _keys(count: int, taken: Any) -> list[str]:
    keys: list[str] = []
    index = 0
    while len(keys) < count:
        key = f"k{index}"
        if key not in taken:
            keys.append(key)
        index += 1
    return keys


def _takes_anything_of(node: Schema, kind: JsonType) -> bool:
    """Whether `node` is a plain leaf allowing `kind` without constraining its contents."""
    if not isinstance(node, Leaf) or kind not in node.types or node.enum is not None:
        return False
    return node.array is None if kind is JsonType.ARRAY else node.object is None


def _free_form_arrays(leaf: Leaf) -> bool:
    if JsonType.ARRAY not in leaf.types or leaf.enum is not None:
        return False
    rule = leaf.array
    return rule is None or (not rule.prefix and _takes_anything_of(rule.items, JsonType.ARRAY))


def _free_form_objects(leaf: Leaf) -> bool:
    if JsonType.OBJECT not in leaf.types or leaf.enum is not None:
        return False
    rule = leaf.object
    if rule is None:
        return True
    return not rule.properties and not rule.pattern_properties and _takes_anything_of(rule.additional, JsonType.OBJECT)


def _nested_arrays(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


def _nested_objects(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value
