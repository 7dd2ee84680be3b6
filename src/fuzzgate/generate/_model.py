"""The normalized schema model that every generation stage works on.

A JSON Schema is turned once into a tree of `Leaf`, `Union` and `Ref` nodes: `allOf` is merged away,
`anyOf`/`oneOf` become unions, `$ref`s stay lazy pointers so recursive schemas stay finite. Nodes
keep the raw fragments they came from (`sources`) so a real validator can check values against them.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from enum import Enum, StrEnum
from typing import Any, Final, Literal, TypeAlias

from fuzzgate.model.errors import FuzzgateError


class UnsupportedSchema(FuzzgateError):
    """An input schema fuzzgate cannot generate arguments for.

    `str(exc)` is a human reason naming the JSON pointer, e.g. "uses 'not' at /properties/x".
    """

    title = "unsupported input schema"


class JsonType(StrEnum):
    NULL = "null"
    BOOLEAN = "boolean"
    INTEGER = "integer"
    NUMBER = "number"
    STRING = "string"
    ARRAY = "array"
    OBJECT = "object"


ALL_TYPES: Final = frozenset(JsonType)


class _Unavailable(Enum):
    TOKEN = "unavailable"


UNAVAILABLE: Final = _Unavailable.TOKEN
"""Marks "no value can be built here" (unsatisfiable, or recursion exhausted); `None` is JSON null."""
Unavailable: TypeAlias = Literal[_Unavailable.TOKEN]


@dataclass(frozen=True, slots=True)
class Offered:
    """A value the schema itself suggests: one of its `examples` or its `default`."""

    value: Any
    source: str


@dataclass(frozen=True, slots=True)
class NumberRule:
    minimum: int | float | None = None
    maximum: int | float | None = None
    exclusive_minimum: int | float | None = None
    exclusive_maximum: int | float | None = None
    multiple_of: int | float | None = None


@dataclass(frozen=True, slots=True)
class StringRule:
    min_length: int = 0
    max_length: int | None = None
    patterns: tuple[str, ...] = ()
    format: str | None = None


@dataclass(frozen=True, slots=True, eq=False)
class ArrayRule:
    items: Schema
    prefix: tuple[Schema, ...] = ()
    min_items: int = 0
    max_items: int | None = None
    unique: bool = False


@dataclass(frozen=True, slots=True, eq=False)
class ObjectRule:
    additional: Schema
    properties: tuple[tuple[str, Schema], ...] = ()
    required: tuple[str, ...] = ()
    pattern_properties: tuple[tuple[str, Schema], ...] = ()
    min_properties: int = 0
    max_properties: int | None = None
    additional_explicit: bool = False
    """True when the schema spelled out `additionalProperties` (a map type), not just left it open."""

    def property(self, key: str) -> Schema | None:
        for name, schema in self.properties:
            if name == key:
                return schema
        return None


@dataclass(frozen=True, slots=True, eq=False)
class Leaf:
    """A schema without combinators: the allowed types and the constraints per type."""

    path: str
    types: frozenset[JsonType]
    enum: tuple[Any, ...] | None = None
    number: NumberRule = NumberRule()
    string: StringRule = StringRule()
    array: ArrayRule | None = None
    object: ObjectRule | None = None
    offered: tuple[Offered, ...] = ()
    sources: tuple[Any, ...] = ()

    @property
    def is_any(self) -> bool:
        return (
            self.types == ALL_TYPES
            and self.enum is None
            and self.array is None
            and self.object is None
            and self.number == NumberRule()
            and self.string == StringRule()
        )

    @property
    def is_never(self) -> bool:
        return not self.types


@dataclass(frozen=True, slots=True, eq=False)
class Union:
    """`anyOf`/`oneOf`: a value from one alternative (exactly one when `exclusive`)."""

    path: str
    alternatives: tuple[Schema, ...]
    exclusive: bool
    offered: tuple[Offered, ...] = ()
    sources: tuple[Any, ...] = ()


@dataclass(frozen=True, slots=True, eq=False)
class Ref:
    """A `$ref`, resolved lazily through the document so recursive schemas stay finite."""

    path: str
    target: str
    offered: tuple[Offered, ...] = ()


Schema: TypeAlias = Leaf | Union | Ref

Stream: TypeAlias = Literal["conform", "adversarial"]
"""The two sub-streams of cases: schema-valid values, and values with one location broken."""


def any_leaf(path: str) -> Leaf:
    return Leaf(path=path, types=ALL_TYPES)


def never_leaf(path: str) -> Leaf:
    return Leaf(path=path, types=frozenset())


def with_offered(node: Schema, offered: tuple[Offered, ...]) -> Schema:
    return replace(node, offered=node.offered + offered) if offered else node


def json_type_of(value: Any) -> JsonType:
    if value is None:
        return JsonType.NULL
    if isinstance(value, bool):
        return JsonType.BOOLEAN
    if isinstance(value, int):
        return JsonType.INTEGER
    if isinstance(value, float):
        return JsonType.INTEGER if value.is_integer() else JsonType.NUMBER
    if isinstance(value, str):
        return JsonType.STRING
    if isinstance(value, list | tuple):
        return JsonType.ARRAY
    return JsonType.OBJECT


def type_allows(types: frozenset[JsonType], value: Any) -> bool:
    kind = json_type_of(value)
    if kind in types:
        return True
    return kind is JsonType.INTEGER and JsonType.NUMBER in types


def _canonical(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and math.isfinite(value):
        return int(value)
    if isinstance(value, list | tuple):
        return [_canonical(item) for item in value]
    if isinstance(value, dict):
        return {key: _canonical(item) for key, item in value.items()}
    return value


def json_key(value: Any) -> str:
    """A string equal for two values exactly when JSON Schema calls them equal (1 == 1.0, true != 1)."""
    return json.dumps(_canonical(value), sort_keys=True, ensure_ascii=True, separators=(",", ":"))


def canonical_json(value: Any) -> str:
    """Stable JSON text of a schema or value, used for hashing and cache keys."""
    return json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":"), allow_nan=False)


def escape_pointer(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def describe(value: Any) -> str:
    """A short rendering of a value for case origins."""
    if isinstance(value, str) and len(value) > 24:
        return f'{json.dumps(value[:12])[:-1]}..."(len {len(value)})'
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 40 else text[:37] + "..."
