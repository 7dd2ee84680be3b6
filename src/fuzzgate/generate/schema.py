"""The compiler: normalized schema nodes to Hypothesis strategies of conforming values.

Only Hypothesis's public API is used. Recursive `$ref`s are expanded at most `MAX_RECURSION` times
on any branch; past that a branch that needs more recursion is "unavailable" (`None`), so unions
fall back to their other alternatives, optional properties are left out and arrays stay short.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Final

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from fuzzgate.generate._document import SchemaDocument
from fuzzgate.generate._draw import Predicate
from fuzzgate.generate._formats import format_strategy
from fuzzgate.generate._model import (
    ArrayRule,
    JsonType,
    Leaf,
    ObjectRule,
    Ref,
    Schema,
    StringRule,
    Union,
    UnsupportedSchema,
    any_leaf,
    json_key,
)
from fuzzgate.generate._numbers import floats, integers

MAX_RECURSION: Final = 3
ARRAY_SOFT_CAP: Final = 8
"""Arrays and open objects stay this small unless the schema's minimum asks for more."""
DEFAULT_MAX_STRING: Final = 65536

_TYPE_ORDER: Final = (
    JsonType.STRING,
    JsonType.INTEGER,
    JsonType.NUMBER,
    JsonType.BOOLEAN,
    JsonType.OBJECT,
    JsonType.ARRAY,
    JsonType.NULL,
)

Strategy = SearchStrategy[Any]


def compile_schema(schema: Mapping[str, Any] | bool, *, max_string: int = DEFAULT_MAX_STRING) -> Strategy:
    """A Hypothesis strategy of values that conform to `schema` (checked by a real validator).

    Raises `UnsupportedSchema` for schemas that use keywords the compiler cannot honour (`not`,
    `if`/`then`/`else`, unresolvable `$ref`s, ...) or that admit no value at all.
    """
    if max_string < 0:
        raise ValueError("max_string must not be negative")
    document = SchemaDocument(schema)
    strategy = StrategyBuilder(document, max_string=max_string).build(document.root)
    if strategy is None:
        raise UnsupportedSchema("admits no value that can be generated at /")
    return strategy.filter(Predicate(document.validator.is_valid))


def _fits_string(rule: StringRule, max_length: int) -> Callable[[str], bool]:
    def fits(value: str) -> bool:
        return rule.min_length <= len(value) <= max_length and all(re.search(p, value) for p in rule.patterns)

    return fits


class StrategyBuilder:
    """Builds (and memoizes) one strategy per node and recursion depth."""

    def __init__(self, document: SchemaDocument, *, max_string: int) -> None:
        self.document = document
        self.max_string = max_string
        self._memo: dict[tuple[int, int], Strategy | None] = {}
        self._any: Strategy | None = None

    def build(self, node: Schema, depth: int = 0) -> Strategy | None:
        """A strategy for the node, or None when no value can be built within the recursion limit."""
        key = (id(node), depth)
        if key not in self._memo:
            self._memo[key] = self._build(node, depth)
        return self._memo[key]

    def _build(self, node: Schema, depth: int) -> Strategy | None:
        if isinstance(node, Ref):
            return self._with_offered(node, self._ref(node, depth))
        if isinstance(node, Union):
            return self._with_offered(node, self._union(node, depth))
        return self._with_offered(node, self._leaf(node, depth))

    def _ref(self, ref: Ref, depth: int) -> Strategy | None:
        target = self.document.target(ref.target)
        if ref.target in self.document.recursive_targets:
            depth += 1
            if depth > MAX_RECURSION:
                return None
        return self.build(target, depth)

    def _with_offered(self, node: Schema, core: Strategy | None) -> Strategy | None:
        values: dict[str, Any] = {}
        for offered in node.offered:
            if self.document.accepts(node, offered.value):
                values.setdefault(json_key(offered.value), offered.value)
        if not values:
            return core
        sampled = st.sampled_from(tuple(values.values()))
        return sampled if core is None else st.one_of(sampled, core)

    def _union(self, union: Union, depth: int) -> Strategy | None:
        built = [self.build(alternative, depth) for alternative in union.alternatives]
        available = [strategy for strategy in built if strategy is not None]
        if not available:
            return None
        strategy = st.one_of(available)
        if union.exclusive and not _disjoint(union):
            return strategy.filter(Predicate(accepted_by(self.document, union)))
        return strategy

    def _leaf(self, leaf: Leaf, depth: int) -> Strategy | None:
        if leaf.is_never:
            return None
        if leaf.is_any:
            return self.any_json()
        if leaf.enum is not None:
            return st.sampled_from(leaf.enum)
        parts: list[Strategy] = []
        for kind in _TYPE_ORDER:
            if kind not in leaf.types or (kind is JsonType.INTEGER and JsonType.NUMBER in leaf.types):
                continue
            strategy = self._typed(leaf, kind, depth)
            if strategy is not None:
                parts.append(strategy)
        return st.one_of(parts) if parts else None

    def _typed(self, leaf: Leaf, kind: JsonType, depth: int) -> Strategy | None:
        if kind is JsonType.NULL:
            return st.none()
        if kind is JsonType.BOOLEAN:
            return st.booleans()
        if kind is JsonType.INTEGER:
            return integers(leaf.number)
        if kind is JsonType.NUMBER:
            parts = [s for s in (integers(leaf.number), floats(leaf.number)) if s is not None]
            return st.one_of(parts) if parts else None
        if kind is JsonType.STRING:
            return self.strings(leaf.string)
        if kind is JsonType.ARRAY:
            return self._array(leaf.array or ArrayRule(items=any_leaf(leaf.path)), depth)
        return self._object(leaf.object or ObjectRule(additional=any_leaf(leaf.path)), depth)

    def any_json(self) -> Strategy:
        """Any JSON value, kept small: the empty schema says nothing about size."""
        if self._any is None:
            text = st.text(max_size=min(32, self.max_string))
            scalars = st.one_of(
                st.none(),
                st.booleans(),
                st.integers(),
                st.floats(allow_nan=False, allow_infinity=False),
                text,
            )
            self._any = st.recursive(scalars, _containers, max_leaves=8)
        return self._any

    def strings(self, rule: StringRule) -> Strategy | None:
        max_length = self.max_string if rule.max_length is None else min(rule.max_length, self.max_string)
        if rule.min_length > max_length:
            return None
        fits = _fits_string(rule, max_length)
        formatted = format_strategy(rule.format) if rule.format else None
        if formatted is not None:
            return formatted.filter(Predicate(fits))
        if rule.patterns:
            return st.from_regex(_ecma_like(rule.patterns[0]), fullmatch=True).filter(Predicate(fits))
        return st.text(min_size=rule.min_length, max_size=max_length)

    def _array(self, rule: ArrayRule, depth: int) -> Strategy | None:
        items = self.build(rule.items, depth)
        prefix = [self.build(schema, depth) for schema in rule.prefix]
        usable = next((i for i, strategy in enumerate(prefix) if strategy is None), len(prefix))
        soft = max(rule.min_items, ARRAY_SOFT_CAP)
        upper = soft if rule.max_items is None else min(rule.max_items, soft)
        if usable < len(prefix) or items is None:
            upper = min(upper, usable)
        if rule.min_items > upper:
            return None
        if not prefix:
            assert items is not None or upper == 0
            element = items if items is not None else st.nothing()
            unique_by = json_key if rule.unique else None
            return st.lists(element, min_size=rule.min_items, max_size=upper, unique_by=unique_by)
        available: list[Strategy] = [s for s in prefix[:usable] if s is not None]
        if items is not None:
            available.append(items)
        low = rule.min_items

        @st.composite
        def arrays(draw: st.DrawFn) -> list[Any]:
            size = draw(st.integers(low, upper))
            return [draw(available[min(i, len(available) - 1)]) for i in range(size)]

        strategy: Strategy = arrays()
        if rule.unique:
            strategy = strategy.filter(Predicate(_all_distinct))
        return strategy

    def _object(self, rule: ObjectRule, depth: int) -> Strategy | None:
        required_keys = set(rule.required)
        required: dict[str, Strategy] = {}
        optional: dict[str, Strategy] = {}
        for key, schema in rule.properties:
            strategy = self.build(schema, depth)
            if strategy is None:
                if key in required_keys:
                    return None
                continue
            (required if key in required_keys else optional)[key] = strategy
        low, high = rule.min_properties, rule.max_properties
        if high is not None and len(required) > high:
            return None
        # Unknown keys only where the schema asks for them (a map type, patternProperties) or where
        # the properties alone cannot reach minProperties. A merely open object gets none: many
        # servers reject unknown arguments whatever the schema says, and that is not a bug worth a
        # finding; the adversarial stream still sends them.
        wants_extras = rule.additional_explicit or bool(rule.pattern_properties) or low > len(rule.properties)
        extras = self._extra_entries(rule, depth) if wants_extras else None
        declared: Strategy = st.fixed_dictionaries(required, optional=optional)
        if extras is not None:
            most = max(4, low)
            fewest = max(0, low - len(required) - len(optional))
            declared = st.tuples(declared, st.lists(extras, min_size=fewest, max_size=most)).map(_with_extras)
        if low or high is not None:
            declared = declared.map(_trimmer(list(optional), high)).filter(Predicate(_sized(low, high)))
        return declared

    def _extra_entries(self, rule: ObjectRule, depth: int) -> Strategy | None:
        declared = {key for key, _ in rule.properties}
        patterns = [pattern for pattern, _ in rule.pattern_properties]
        entries: list[Strategy] = []
        additional = self.build(rule.additional, depth)
        if additional is not None:
            longest = max(1, min(12, self.max_string))
            keys = st.text(min_size=1, max_size=longest).filter(Predicate(_key_filter(declared, patterns, longest)))
            entries.append(st.tuples(keys, additional))
        for pattern, schema in rule.pattern_properties:
            values = self.build(schema, depth)
            if values is None:
                continue
            others = [p for p in patterns if p != pattern]
            keys = st.from_regex(pattern).filter(Predicate(_key_filter(declared, others, self.max_string)))
            entries.append(st.tuples(keys, values))
        return st.one_of(entries) if entries else None


def _ecma_like(pattern: str) -> str | re.Pattern[str]:
    """JSON Schema patterns are ECMA-262, where \\d, \\w and \\s are ASCII; Python's are Unicode. Drawing
    ASCII-only matches keeps values valid for JavaScript servers too (and for Python's validator)."""
    try:
        return re.compile(pattern, re.ASCII)
    except re.error:
        return pattern


def _containers(inner: Strategy) -> Strategy:
    return st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4))


def _key_filter(declared: set[str], patterns: list[str], longest: int) -> Callable[[str], bool]:
    """Keys that name no declared property and match none of `patterns` (whose schemas would apply too)."""

    def allowed(key: str) -> bool:
        return len(key) <= longest and key not in declared and not any(re.search(p, key) for p in patterns)

    return allowed


def _with_extras(parts: tuple[dict[str, Any], list[tuple[str, Any]]]) -> dict[str, Any]:
    declared, extras = parts
    return {**dict(extras), **declared}


# Named functions rather than lambdas in maps: Hypothesis renders a strategy's repr each time a
# filter gives up, and rendering a lambda means reading and tokenizing its source file.


def _trimmer(optional: list[str], high: int | None) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def trimmed(value: dict[str, Any]) -> dict[str, Any]:
        """Drops optional properties (last declared first) until maxProperties holds."""
        if high is None or len(value) <= high:
            return value
        value = dict(value)
        for key in reversed(optional):
            if len(value) <= high:
                break
            value.pop(key, None)
        return value

    return trimmed


def _sized(low: int, high: int | None) -> Callable[[dict[str, Any]], bool]:
    def sized(value: dict[str, Any]) -> bool:
        return low <= len(value) and (high is None or len(value) <= high)

    return sized


def _all_distinct(values: list[Any]) -> bool:
    return len({json_key(v) for v in values}) == len(values)


def accepted_by(document: SchemaDocument, node: Schema) -> Callable[[Any], bool]:
    def accepted(value: Any) -> bool:
        return document.accepts(node, value)

    return accepted


def _disjoint(union: Union) -> bool:
    """Whether the alternatives can never both match, so `oneOf` needs no exclusivity filter."""
    seen: set[JsonType] = set()
    for alternative in union.alternatives:
        if not isinstance(alternative, Leaf) or alternative.enum is not None:
            return False
        types = set(alternative.types)
        if types & {JsonType.INTEGER, JsonType.NUMBER}:
            types |= {JsonType.INTEGER, JsonType.NUMBER}
        if types & seen:
            return False
        seen |= types
    return True
