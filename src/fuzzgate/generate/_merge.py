"""`allOf`: merging normalized nodes into one, or saying why they cannot be merged.

The merged node keeps the raw fragments of every member in `sources`, so whatever the merge
over-approximates is still caught by the validator-backed `accepts` check.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import replace
from fractions import Fraction
from typing import Any, Final, Protocol

from fuzzgate.generate._model import (
    ArrayRule,
    JsonType,
    Leaf,
    NumberRule,
    ObjectRule,
    Ref,
    Schema,
    StringRule,
    Union,
    UnsupportedSchema,
    any_leaf,
    json_key,
    never_leaf,
    type_allows,
    with_offered,
)
from fuzzgate.generate._numbers import exact

_MAX_DEPTH: Final = 32
_MAX_ALTERNATIVES: Final = 64


class Resolver(Protocol):
    def target(self, pointer: str) -> Schema: ...

    def accepts_sources(self, sources: tuple[Any, ...], value: Any) -> bool: ...

    def merged_target(self, first: str, second: str, build: Callable[[], Schema]) -> str: ...


def merge_all(doc: Resolver, nodes: list[Schema], path: str) -> Schema:
    """One node accepting exactly what every node accepts; raises UnsupportedSchema when it cannot."""
    if not nodes:
        return any_leaf(path)
    result = nodes[0]
    for node in nodes[1:]:
        result = _merge(doc, result, node, path, 0)
    return result if isinstance(result, Ref) else replace(result, path=path)


def sources_of(doc: Resolver, node: Schema) -> tuple[Any, ...]:
    if isinstance(node, Ref):
        return sources_of(doc, doc.target(node.target))
    return node.sources


def _merge(doc: Resolver, a: Schema, b: Schema, path: str, depth: int) -> Schema:
    if depth > _MAX_DEPTH:
        raise UnsupportedSchema(f"has allOf members nested too deeply to merge at {path}")
    if a is b:
        return a
    if isinstance(a, Ref) and isinstance(b, Ref):
        if a.target == b.target:
            return with_offered(a, b.offered)
        first, second = a.target, b.target
        pointer = doc.merged_target(
            first, second, lambda: _merge(doc, doc.target(first), doc.target(second), path, depth + 1)
        )
        return Ref(a.path, pointer, a.offered + b.offered)
    if isinstance(a, Ref):
        return with_offered(_merge(doc, doc.target(a.target), b, path, depth + 1), a.offered)
    if isinstance(b, Ref):
        return with_offered(_merge(doc, a, doc.target(b.target), path, depth + 1), b.offered)
    if isinstance(a, Leaf) and a.is_any:
        return with_offered(b, a.offered)
    if isinstance(b, Leaf) and b.is_any:
        return with_offered(a, b.offered)
    if isinstance(a, Union) or isinstance(b, Union):
        return _merge_unions(doc, a, b, path, depth)
    assert isinstance(a, Leaf) and isinstance(b, Leaf)
    if a.is_never or b.is_never:
        return never_leaf(path)
    return _merge_leaves(doc, a, b, path, depth)


def _merge_unions(doc: Resolver, a: Schema, b: Schema, path: str, depth: int) -> Schema:
    left = a.alternatives if isinstance(a, Union) else (a,)
    right = b.alternatives if isinstance(b, Union) else (b,)
    if len(left) * len(right) > _MAX_ALTERNATIVES:
        raise UnsupportedSchema(f"has more than {_MAX_ALTERNATIVES} anyOf/oneOf combinations in allOf at {path}")
    merged = (_merge(doc, x, y, path, depth + 1) for x in left for y in right)
    alternatives = tuple(n for n in merged if not (isinstance(n, Leaf) and n.is_never))
    if not alternatives:
        return never_leaf(path)
    exclusive = any(isinstance(n, Union) and n.exclusive for n in (a, b))
    offered = a.offered + b.offered
    return Union(path, alternatives, exclusive, offered, sources_of(doc, a) + sources_of(doc, b))


def _merge_types(a: frozenset[JsonType], b: frozenset[JsonType]) -> frozenset[JsonType]:
    types = set(a & b)
    if {JsonType.INTEGER, JsonType.NUMBER} & a and {JsonType.INTEGER, JsonType.NUMBER} & b:
        types.add(JsonType.INTEGER)
    return frozenset(types)


def _merge_leaves(doc: Resolver, a: Leaf, b: Leaf, path: str, depth: int) -> Leaf:
    types = _merge_types(a.types, b.types)
    enum: tuple[Any, ...] | None = None
    if a.enum is not None and b.enum is not None:
        keys = {json_key(v) for v in b.enum}
        enum = tuple(v for v in a.enum if json_key(v) in keys)
    elif a.enum is not None:
        enum = tuple(v for v in a.enum if doc.accepts_sources(b.sources, v))
    elif b.enum is not None:
        enum = tuple(v for v in b.enum if doc.accepts_sources(a.sources, v))
    if enum is not None:
        enum = tuple(v for v in enum if type_allows(types, v))
        if not enum:
            types = frozenset()
    return Leaf(
        path=a.path,
        types=types,
        enum=enum,
        number=_merge_numbers(a.number, b.number, path),
        string=_merge_strings(a.string, b.string, path),
        array=_merge_arrays(doc, a.array, b.array, path, depth),
        object=_merge_objects(doc, a.object, b.object, path, depth),
        offered=a.offered + b.offered,
        sources=a.sources + b.sources,
    )


def _pick(x: Any, y: Any, choose: Callable[[Any, Any], Any]) -> Any:
    if x is None:
        return y
    if y is None:
        return x
    return choose(x, y)


def _merge_multiples(x: int | float | None, y: int | float | None, path: str) -> int | float | None:
    if x is None or y is None:
        return x if y is None else y
    fx, fy = exact(x), exact(y)
    if (fx / fy).denominator == 1:
        return x
    if (fy / fx).denominator == 1:
        return y
    common = Fraction(math.lcm(fx.numerator, fy.numerator), math.gcd(fx.denominator, fy.denominator))
    if common.denominator == 1:
        return int(common)
    if float(common) == 0 or not math.isfinite(float(common)):
        raise UnsupportedSchema(f"has allOf members with incompatible multipleOf at {path}")
    return float(common)


def _merge_numbers(a: NumberRule, b: NumberRule, path: str) -> NumberRule:
    return NumberRule(
        minimum=_pick(a.minimum, b.minimum, max),
        maximum=_pick(a.maximum, b.maximum, min),
        exclusive_minimum=_pick(a.exclusive_minimum, b.exclusive_minimum, max),
        exclusive_maximum=_pick(a.exclusive_maximum, b.exclusive_maximum, min),
        multiple_of=_merge_multiples(a.multiple_of, b.multiple_of, path),
    )


def _merge_strings(a: StringRule, b: StringRule, path: str) -> StringRule:
    if a.format and b.format and a.format != b.format:
        raise UnsupportedSchema(f"has allOf members with formats '{a.format}' and '{b.format}' at {path}")
    return StringRule(
        min_length=max(a.min_length, b.min_length),
        max_length=_pick(a.max_length, b.max_length, min),
        patterns=tuple(dict.fromkeys(a.patterns + b.patterns)),
        format=a.format or b.format,
    )


def _merge_arrays(doc: Resolver, a: ArrayRule | None, b: ArrayRule | None, path: str, depth: int) -> ArrayRule | None:
    if a is None or b is None:
        return a if b is None else b
    length = max(len(a.prefix), len(b.prefix))
    prefix = tuple(
        _merge(
            doc,
            a.prefix[i] if i < len(a.prefix) else a.items,
            b.prefix[i] if i < len(b.prefix) else b.items,
            path,
            depth + 1,
        )
        for i in range(length)
    )
    return ArrayRule(
        items=_merge(doc, a.items, b.items, path, depth + 1),
        prefix=prefix,
        min_items=max(a.min_items, b.min_items),
        max_items=_pick(a.max_items, b.max_items, min),
        unique=a.unique or b.unique,
    )


def _schema_for_key(doc: Resolver, rule: ObjectRule, key: str, path: str, depth: int) -> Schema:
    declared = rule.property(key)
    if declared is not None:
        return declared
    matching = [schema for pattern, schema in rule.pattern_properties if re.search(pattern, key)]
    if not matching:
        return rule.additional
    result = matching[0]
    for schema in matching[1:]:
        result = _merge(doc, result, schema, path, depth + 1)
    return result


def _merge_objects(
    doc: Resolver, a: ObjectRule | None, b: ObjectRule | None, path: str, depth: int
) -> ObjectRule | None:
    if a is None or b is None:
        return a if b is None else b
    if a.pattern_properties and b.pattern_properties:
        raise UnsupportedSchema(f"merges patternProperties of several allOf members at {path}")
    names = list(dict.fromkeys([k for k, _ in a.properties] + [k for k, _ in b.properties]))
    properties = tuple(
        (
            key,
            _merge(
                doc,
                _schema_for_key(doc, a, key, path, depth),
                _schema_for_key(doc, b, key, path, depth),
                path,
                depth + 1,
            ),
        )
        for key in names
    )
    owner, other = (a, b) if a.pattern_properties else (b, a)
    patterns = tuple(
        (pattern, _merge(doc, schema, other.additional, path, depth + 1))
        for pattern, schema in owner.pattern_properties
    )
    return ObjectRule(
        additional=_merge(doc, a.additional, b.additional, path, depth + 1),
        properties=properties,
        required=tuple(dict.fromkeys(a.required + b.required)),
        pattern_properties=patterns,
        min_properties=max(a.min_properties, b.min_properties),
        max_properties=_pick(a.max_properties, b.max_properties, min),
        additional_explicit=a.additional_explicit or b.additional_explicit,
    )
