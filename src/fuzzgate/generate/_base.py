"""Base values: one plain, valid value per node, built from what the schema offers.

Preference order: the schema's own `examples` and `default`, then `const`/the first `enum` value,
then a small value of the first allowed type. Boundary and mutation cases vary one location of the
base at a time, so a bug that needs "example value here AND enum value there" is one step away.
"""

from __future__ import annotations

import math
import re
from typing import Any, Final

from fuzzgate.generate._document import SchemaDocument
from fuzzgate.generate._draw import Predicate, simplest
from fuzzgate.generate._formats import VALID_SAMPLES
from fuzzgate.generate._model import (
    UNAVAILABLE,
    ArrayRule,
    JsonType,
    Leaf,
    ObjectRule,
    Ref,
    Schema,
    StringRule,
    Unavailable,
    Union,
    any_leaf,
    json_key,
)
from fuzzgate.generate._numbers import closest_integer, lower_bound, number_ok, upper_bound
from fuzzgate.generate.schema import StrategyBuilder, accepted_by

BASE_RECURSION: Final = 1
"""Recursive `$ref`s expanded in a base value: enough to show the shape, small enough to read."""

_BASE_TYPE_ORDER: Final = (
    JsonType.OBJECT,
    JsonType.ARRAY,
    JsonType.STRING,
    JsonType.INTEGER,
    JsonType.NUMBER,
    JsonType.BOOLEAN,
    JsonType.NULL,
)


class BaseBuilder:
    """Computes (and memoizes) the base value of each node."""

    def __init__(self, document: SchemaDocument, strategies: StrategyBuilder) -> None:
        self.document = document
        self.strategies = strategies
        self._memo: dict[tuple[int, int], Any] = {}

    def base(self, node: Schema, depth: int = 0) -> Any | Unavailable:
        key = (id(node), depth)
        if key not in self._memo:
            self._memo[key] = self._base(node, depth)
        return self._memo[key]

    def _base(self, node: Schema, depth: int) -> Any | Unavailable:
        for offered in node.offered:
            if self.document.accepts(node, offered.value):
                return offered.value
        if isinstance(node, Ref):
            if node.target in self.document.recursive_targets:
                depth += 1
                if depth > BASE_RECURSION:
                    return UNAVAILABLE
            return self.base(self.document.target(node.target), depth)
        if isinstance(node, Union):
            found = [self.base(alternative, depth) for alternative in node.alternatives]
            available = [value for value in found if value is not UNAVAILABLE]
            chosen = next((v for v in available if v is not None), available[0] if available else UNAVAILABLE)
            return self._checked(node, chosen, depth)
        if node.is_never:
            return UNAVAILABLE
        if node.enum is not None:
            return node.enum[0]
        for kind in _BASE_TYPE_ORDER:
            if kind in node.types or (kind is JsonType.INTEGER and JsonType.NUMBER in node.types):
                value = self._typed(node, kind, depth)
                if value is not UNAVAILABLE:
                    return self._checked(node, value, depth)
        return UNAVAILABLE

    def _checked(self, node: Schema, value: Any, depth: int) -> Any | Unavailable:
        """The value if the validator agrees, else the simplest value Hypothesis can find."""
        if value is not UNAVAILABLE and self.document.accepts(node, value):
            return value
        strategy = self.strategies.build(node, depth)
        if strategy is None:
            return UNAVAILABLE
        return simplest(strategy.filter(Predicate(accepted_by(self.document, node))))

    def _typed(self, leaf: Leaf, kind: JsonType, depth: int) -> Any | Unavailable:
        if kind is JsonType.NULL:
            return None
        if kind is JsonType.BOOLEAN:
            return False
        if kind is JsonType.INTEGER:
            found = closest_integer(leaf.number, 1)
            return UNAVAILABLE if found is None else found
        if kind is JsonType.NUMBER:
            return self._number(leaf)
        if kind is JsonType.STRING:
            return self._string(leaf.string)
        if kind is JsonType.ARRAY:
            return self._array(leaf.array or ArrayRule(items=any_leaf(leaf.path)), depth)
        return self._object(leaf.object or ObjectRule(additional=any_leaf(leaf.path)), depth)

    def _number(self, leaf: Leaf) -> Any | Unavailable:
        found = closest_integer(leaf.number, 1)
        if found is not None:
            return found
        low, high = lower_bound(leaf.number), upper_bound(leaf.number)
        candidates: list[float] = [0.5, 1.5]
        if low is not None and high is not None:
            candidates.append((low[0] + high[0]) / 2)
        for bound, direction in ((low, math.inf), (high, -math.inf)):
            if bound is not None:
                candidates.append(math.nextafter(float(bound[0]), direction))
        return next((c for c in candidates if number_ok(leaf.number, c)), UNAVAILABLE)

    def _string(self, rule: StringRule) -> str | Unavailable:
        max_length = self.strategies.max_string
        if rule.max_length is not None:
            max_length = min(max_length, rule.max_length)
        samples = list(VALID_SAMPLES.get(rule.format or "", ()))
        samples.append("a" * min(max(rule.min_length, 1), max_length))
        for sample in samples:
            if rule.min_length <= len(sample) <= max_length and _matches(rule, sample):
                return sample
        strategy = self.strategies.strings(rule)
        return UNAVAILABLE if strategy is None else simplest(strategy)

    def _array(self, rule: ArrayRule, depth: int) -> list[Any] | Unavailable:
        size = max(rule.min_items, 1)
        if rule.max_items is not None:
            size = min(size, rule.max_items)
        values: list[Any] = []
        for i in range(size):
            schema = rule.prefix[i] if i < len(rule.prefix) else rule.items
            value = self.base(schema, depth)
            if value is UNAVAILABLE:
                break
            values.append(value)
        if len(values) < rule.min_items:
            return UNAVAILABLE
        if rule.unique and len({json_key(v) for v in values}) < len(values):
            return UNAVAILABLE
        return values

    def _object(self, rule: ObjectRule, depth: int) -> dict[str, Any] | Unavailable:
        value: dict[str, Any] = {}
        optional: list[str] = []
        for key, schema in rule.properties:
            found = self.base(schema, depth)
            if found is UNAVAILABLE:
                if key in rule.required:
                    return UNAVAILABLE
                continue
            value[key] = found
            if key not in rule.required:
                optional.append(key)
        if rule.max_properties is not None:
            while len(value) > rule.max_properties and optional:
                value.pop(optional.pop())
        extra = self.base(rule.additional, depth) if len(value) < rule.min_properties else UNAVAILABLE
        index = 0
        while len(value) < rule.min_properties and extra is not UNAVAILABLE:
            value.setdefault(f"extra{index}", extra)
            index += 1
        return value


def _matches(rule: StringRule, value: str) -> bool:
    return all(re.search(pattern, value) for pattern in rule.patterns)
