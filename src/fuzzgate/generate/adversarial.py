"""Schema violations: one location of a valid value made invalid, the top level always an object.

`Violations.at` lists what can be broken at one location (wrong types, null, enum/pattern/format
and size violations, missing required or forbidden extra properties). `MutationEdits` turns that
into the fixed, canonical violations of the base value; `RandomMutator` applies one randomly
chosen violation to a randomly drawn valid value, with a seeded PRNG (a Hypothesis draw per
mutation would cost ten times more and find nothing extra). The case stream validates every
result: a "violation" the validator accepts is never sent as one.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from fuzzgate.generate._document import SchemaDocument
from fuzzgate.generate._formats import INVALID_SAMPLES
from fuzzgate.generate._model import (
    JsonType,
    Leaf,
    Ref,
    Schema,
    Union,
    describe,
    escape_pointer,
    json_key,
    type_allows,
)
from fuzzgate.generate._numbers import integer_bounds
from fuzzgate.generate._walk import Variant

_WRONG_TYPE_ORDER: Final = (
    JsonType.STRING,
    JsonType.INTEGER,
    JsonType.NUMBER,
    JsonType.BOOLEAN,
    JsonType.OBJECT,
    JsonType.ARRAY,
    JsonType.NULL,
)
_WRONG_VALUES: Final[dict[JsonType, tuple[Any, ...]]] = {
    JsonType.STRING: ("x", "", "\x00", "null", "😀"),
    JsonType.INTEGER: (1, 0, -1, 2**31, 2**63, -(2**63)),
    JsonType.NUMBER: (1.5, -0.5, 1e308, 5e-324),
    JsonType.BOOLEAN: (True, False),
    JsonType.OBJECT: ({}, {"a": 1}, {"__proto__": {"polluted": True}}),
    JsonType.ARRAY: ([], [1], ["x"], [None], [[]]),
    JsonType.NULL: (None,),
}
EXTRA_PROPERTIES: Final[tuple[dict[str, Any], ...]] = (
    {"unexpected_property": "x"},
    {"__proto__": {"polluted": True}},
    {"constructor": {}},
)
"""A plain unknown key, and the ones JavaScript servers may merge into an object's prototype."""
_MAX_GROWN: Final = 64


@dataclass(frozen=True, slots=True)
class Option:
    """One way to break a location: a kind, where (relative to the location), replacement values."""

    kind: str
    where: str
    values: tuple[Any, ...]


def allowed_types(document: SchemaDocument, node: Schema, seen: int = 0) -> frozenset[JsonType]:
    if seen > 8:
        return frozenset(JsonType)
    if isinstance(node, Ref):
        return allowed_types(document, document.target(node.target), seen + 1)
    if isinstance(node, Union):
        found: set[JsonType] = set()
        for alternative in node.alternatives:
            found |= allowed_types(document, alternative, seen + 1)
        return frozenset(found)
    return node.types


def _wrong_values(kind: JsonType, allowed: frozenset[JsonType], current: Any) -> tuple[Any, ...]:
    values = _WRONG_VALUES[kind]
    if kind is JsonType.STRING:
        # A numeric or boolean location gets a number's or boolean's spelling as a string first:
        # the classic coercion confusion.
        if allowed & {JsonType.INTEGER, JsonType.NUMBER}:
            values = ("1", *values)
        elif JsonType.BOOLEAN in allowed:
            values = ("true", *values)
        if not isinstance(current, str):
            values = (*values, json.dumps(current))
    elif kind is JsonType.ARRAY:
        values = (*values, [current])
    elif kind is JsonType.OBJECT:
        values = (*values, {"value": current})
    return tuple(v for v in values if not type_allows(allowed, v))


def _not_in_enum(enum: tuple[Any, ...]) -> tuple[Any, ...]:
    keys = {json_key(v) for v in enum}
    candidates: list[Any] = []
    for item in enum[:3]:
        if isinstance(item, str):
            candidates += [item + "_x", item.swapcase(), item.strip() + " "]
        elif isinstance(item, int | float) and not isinstance(item, bool):
            candidates.append(max(v for v in enum if isinstance(v, int | float)) + 1)
    candidates += ["", "not-in-enum", 0]
    found: dict[str, Any] = {}
    for candidate in candidates:
        found.setdefault(json_key(candidate), candidate)
    return tuple(v for k, v in found.items() if k not in keys)


class Violations:
    """What can be broken at a location, as ready replacement values."""

    def __init__(self, document: SchemaDocument, *, max_string: int) -> None:
        self.document = document
        self.max_string = max_string

    def resolve(self, node: Schema, value: Any) -> Leaf | None:
        """The leaf that `value` is checked against at this location (the matching union branch)."""
        for _ in range(16):
            if isinstance(node, Ref):
                node = self.document.target(node.target)
            elif isinstance(node, Union):
                fits = [alt for alt in node.alternatives if type_allows(allowed_types(self.document, alt), value)]
                if len(fits) > 1:
                    fits = [alt for alt in fits if self.document.accepts(alt, value)] or fits
                if not fits:
                    return None
                node = fits[0]
            else:
                return node
        return None

    def at(self, node: Schema, value: Any, nested: bool) -> list[Option]:
        options: list[Option] = []
        if nested:
            allowed = allowed_types(self.document, node)
            for kind in _WRONG_TYPE_ORDER:
                values = _wrong_values(kind, allowed, value) if kind not in allowed else ()
                if values:
                    options.append(Option("null" if kind is JsonType.NULL else "wrong_type", "", values))
        leaf = self.resolve(node, value)
        if leaf is None:
            return options
        if leaf.enum is not None:
            options.append(Option("enum_violation", "", _not_in_enum(leaf.enum)))
        if isinstance(value, str):
            options += self._string(leaf)
        if isinstance(value, int | float) and not isinstance(value, bool):
            options += self._number(leaf, value)
        if isinstance(value, dict) and leaf.object is not None:
            options += self._object(leaf, value)
        if isinstance(value, list) and leaf.array is not None:
            options += self._array(leaf, value)
        return [option for option in options if option.values]

    def _string(self, leaf: Leaf) -> Iterator[Option]:
        rule = leaf.string
        if rule.max_length is not None and rule.max_length < self.max_string:
            longer = (rule.max_length + 1, min(self.max_string, rule.max_length + 64))
            yield Option("too_long", "", tuple("a" * n for n in longer))
        if rule.min_length > 0:
            yield Option("too_short", "", tuple(dict.fromkeys(("a" * (rule.min_length - 1), ""))))
        if rule.patterns:
            misses = ("~~~~", "!", " ", "0" * 8, "A" * 40, "", "\x00")
            found = tuple(m for m in misses if not all(re.search(p, m) for p in rule.patterns))
            yield Option("pattern_mismatch", "", found)
        if rule.format in INVALID_SAMPLES:
            yield Option("format_violation", "", INVALID_SAMPLES[rule.format])

    def _number(self, leaf: Leaf, value: int | float) -> Iterator[Option]:
        lo, hi = integer_bounds(leaf.number)
        if lo is not None:
            yield Option("out_of_range", "", (lo - 1, lo - 1000, -(2**63) - 1))
        if hi is not None:
            yield Option("out_of_range", "", (hi + 1, hi + 1000, 2**64))
        if leaf.number.multiple_of is not None:
            yield Option("not_multiple", "", (value + leaf.number.multiple_of / 2,))

    def _object(self, leaf: Leaf, value: dict[str, Any]) -> Iterator[Option]:
        rule = leaf.object
        assert rule is not None
        for key in rule.required:
            if key in value:
                where = f"/properties/{escape_pointer(key)}"
                yield Option("missing_required", where, ({k: v for k, v in value.items() if k != key},))
        closed = isinstance(rule.additional, Leaf) and rule.additional.is_never and not rule.pattern_properties
        if closed:
            grown = tuple({**value, **extra} for extra in EXTRA_PROPERTIES if not set(extra) & set(value))
            yield Option("extra_property", "", grown)
        if rule.max_properties is not None and rule.max_properties < _MAX_GROWN:
            fill = {f"extra{i}": 0 for i in range(rule.max_properties + 1)}
            yield Option("too_many_properties", "", ({**fill, **value},))
        if rule.min_properties > 0:
            yield Option("too_few_properties", "", ({},))

    def _array(self, leaf: Leaf, value: list[Any]) -> Iterator[Option]:
        rule = leaf.array
        assert rule is not None
        if rule.unique and value:
            yield Option("duplicate_items", "", ([value[0], *value],))
        if rule.max_items is not None and value and rule.max_items < _MAX_GROWN:
            yield Option("too_many_items", "", (value + [value[-1]] * (rule.max_items + 1 - len(value)),))
        if rule.min_items > 0:
            yield Option("too_few_items", "", (value[: rule.min_items - 1],))


class MutationEdits:
    """The `Edits` of the mutation walk: the first, canonical violation of each kind at a location."""

    def __init__(self, violations: Violations) -> None:
        self.violations = violations

    def __call__(self, node: Schema, value: Any, label: str) -> Iterator[Variant]:
        wrong_types = 0
        for option in self.violations.at(node, value, nested=bool(label)):
            first = option.values[0]
            shown = f"={describe(first)}" if not option.where and not isinstance(first, dict | list) else ""
            # One wrong type per location comes early; the other five would crowd out range,
            # length and enum violations.
            wrong_types += option.kind == "wrong_type"
            tier = 3 if wrong_types > 1 and option.kind == "wrong_type" else 2
            yield Variant(tier, first, f"mutation:{option.kind}:{label}{option.where}{shown}")


@dataclass(frozen=True, slots=True)
class _Site:
    path: tuple[str | int, ...]
    label: str
    options: list[Option]


class RandomMutator:
    """Breaks one randomly chosen location of a valid value, choices made by the given PRNG."""

    def __init__(self, violations: Violations, root: Schema) -> None:
        self.violations = violations
        self.root = root

    def mutate(self, value: dict[str, Any], rng: random.Random) -> tuple[dict[str, Any], str]:
        sites = list(self._sites(self.root, value, (), "", 0))
        if not sites:
            extra = rng.choice(EXTRA_PROPERTIES)
            return {**value, **extra}, "random-mutation:extra_property:"
        site = rng.choice(sites)
        option = rng.choice(site.options)
        mutated = _replace(value, site.path, rng.choice(option.values))
        return mutated, f"random-mutation:{option.kind}:{site.label}{option.where}"

    def _sites(self, node: Schema, value: Any, path: tuple[str | int, ...], label: str, depth: int) -> Iterator[_Site]:
        options = self.violations.at(node, value, nested=bool(path))
        if options:
            yield _Site(path, label, options)
        leaf = self.violations.resolve(node, value)
        if leaf is None or depth > 8:
            return
        if isinstance(value, dict) and leaf.object is not None:
            for key, schema in leaf.object.properties:
                if key in value:
                    where = f"{label}/properties/{escape_pointer(key)}"
                    yield from self._sites(schema, value[key], (*path, key), where, depth + 1)
        if isinstance(value, list) and leaf.array is not None:
            rule = leaf.array
            for index, item in enumerate(value):
                in_prefix = index < len(rule.prefix)
                schema = rule.prefix[index] if in_prefix else rule.items
                where = f"{label}/prefixItems/{index}" if in_prefix else f"{label}/items"
                yield from self._sites(schema, item, (*path, index), where, depth + 1)


def _replace(value: Any, path: tuple[str | int, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, str(head): _replace(value[str(head)], rest, new)}
    copy = list(value)
    assert isinstance(head, int)
    copy[head] = _replace(copy[head], rest, new)
    return copy
