"""Every location of a tool's arguments, with the raw schema that describes it.

Mutation, shrinking and cleansing change one location of a kept input at a time, and need for each
the schema that holds there: its bounds, its enum, which properties its object requires. The
compiled model (`_model`) is built for generating; this reads the raw schema alongside a value,
which is all these need and costs nothing to set up per call.

A location's `View` gathers the schemas that describe it: its own, the targets of its local `$ref`s,
the members of its `allOf`s and, of an `anyOf`/`oneOf`, the branch the value's own shape fits best
(declared type, `const`/`enum`, the properties an object holds). `patternProperties` are not
matched: a server's pattern may take unbounded time, and a timed-out match would make mutation
depend on load; a key no property names takes `additionalProperties`, or no schema at all.

A location's `pointer` is its schema location in the style of the case origins and the
dictionary's (`/properties/filter/properties/id`, `/properties/tags/items`,
`/properties/pair/prefixItems/0`, `/properties/labels/additionalProperties`): array elements share
their array's `/items`, and `$ref`s and union branches add nothing. A key of an object that declares
no schema for it is named `/properties/<key>` all the same.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

from fuzzgate.generate._anchor import local_ref
from fuzzgate.generate._model import escape_pointer, json_key

Path: TypeAlias = tuple[str | int, ...]
"""Keys and indices from the arguments object down to a location."""

MAX_PARTS: Final = 32
"""Schemas gathered per location at most (`$ref`s may cycle)."""
MAX_UNION_DEPTH: Final = 4
"""Unions inside unions are resolved this deep; below, a branch's own unions are not chosen."""
MAX_LOCATIONS: Final = 4096
MAX_DEPTH: Final = 64
"""Values nested deeper than this are handled only as a whole."""
_MAX_CACHED: Final = 4096
"""Views (per root) and roots kept at most; past it the cache starts again."""

_KIND_KEYWORDS: Final = (
    ("object", ("properties", "required", "additionalProperties", "minProperties", "maxProperties")),
    ("array", ("items", "prefixItems", "minItems", "maxItems", "uniqueItems")),
    ("string", ("minLength", "maxLength", "pattern", "format")),
    ("number", ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")),
)


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()
"""The value of a location that holds none (a property about to be added, one removed)."""


def kind_of(value: Any) -> str:
    """The JSON type of `value`: an integral float is an integer, as JSON Schema counts it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def same(a: Any, b: Any) -> bool:
    """Equal as JSON text: Python's `==` calls `true` and `1`, `1` and `1.0` equal."""
    return a is b or json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


@dataclass(frozen=True, slots=True)
class View:
    """The schemas describing one location, nearest first."""

    parts: tuple[Mapping[str, Any], ...] = ()

    def keyword(self, name: str) -> Any:
        """The nearest part's value of keyword `name`, or None."""
        for part in self.parts:
            if name in part:
                return part[name]
        return None

    def number(self, name: str) -> int | float | None:
        found = self.keyword(name)
        return found if isinstance(found, int | float) and not isinstance(found, bool) else None

    def count(self, name: str) -> int | None:
        found = self.number(name)
        return int(found) if found is not None and found >= 0 and float(found).is_integer() else None

    @property
    def types(self) -> frozenset[str]:
        """The declared types (of the nearest part declaring some), or those its keywords imply;
        empty when nothing says (any value)."""
        declared = self.keyword("type")
        if isinstance(declared, str):
            return frozenset({declared})
        if isinstance(declared, list):
            return frozenset(t for t in declared if isinstance(t, str))
        listed = self.enum
        if listed is not None:
            return frozenset(kind_of(value) for value in listed)
        implied = (kind for kind, keywords in _KIND_KEYWORDS if any(self.keyword(k) is not None for k in keywords))
        return frozenset(implied)

    @property
    def enum(self) -> list[Any] | None:
        """The values `const` or `enum` allow (of the nearest part naming some), or None."""
        for part in self.parts:
            if "const" in part:
                return [part["const"]]
            if isinstance(part.get("enum"), list):
                return list(part["enum"])
        return None

    def allows_kind(self, kind: str) -> bool:
        types = self.types
        return not types or kind in types or (kind == "integer" and "number" in types)

    @property
    def properties(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for part in self.parts:
            declared = part.get("properties")
            if isinstance(declared, Mapping):
                for key, schema in declared.items():
                    found.setdefault(str(key), schema)
        return found

    @property
    def required(self) -> tuple[str, ...]:
        found: dict[str, None] = {}
        for part in self.parts:
            listed = part.get("required")
            if isinstance(listed, list):
                found.update((key, None) for key in listed if isinstance(key, str))
        return tuple(found)

    def allows(self, value: Any) -> bool:
        """Whether `value` is in the enum, when there is one (`json_key` equality)."""
        listed = self.enum
        return listed is None or any(json_key(item) == json_key(value) for item in listed)


@dataclass(frozen=True, slots=True)
class Location:
    """One value inside the arguments, and what the schema says of it."""

    path: Path
    pointer: str
    value: Any
    view: View
    required: bool
    """An object property the enclosing object requires (never an array element or the root)."""
    name: str
    """The nearest property name (an array element's is its array's): what constants match by."""


class Schemas:
    """Views of one tool's input schema, resolving its local `$ref`s.

    Schemas are read, never changed: a view that no union shaped (the same whatever the value) is
    kept, by its schema's identity, and `Schemas.of` keeps one `Schemas` per root, so mutating a
    tool's entries call after call gathers each location's schemas once."""

    def __init__(self, root: Any) -> None:
        self.root = root
        self._views: dict[int, tuple[Any, View]] = {}
        """By `id(schema)`, with the schema itself: held here, its id names no other object."""

    @classmethod
    def of(cls, root: Any) -> Schemas:
        """The `Schemas` of `root`, made once per schema object."""
        found = _BY_ROOT.get(id(root))
        if found is None or found.root is not root:
            if len(_BY_ROOT) >= _MAX_CACHED:
                _BY_ROOT.clear()
            found = _BY_ROOT[id(root)] = cls(root)
        return found

    def view(self, schema: Any, value: Any, depth: int = 0) -> View:
        """The view of `schema` at a location holding `value` (`MISSING` when it holds none)."""
        cached = self._views.get(id(schema))
        if cached is not None and cached[0] is schema:
            return cached[1]
        unions = False
        parts: list[Mapping[str, Any]] = []
        seen: set[int] = set()
        pending: deque[Any] = deque([schema])
        while pending and len(parts) < MAX_PARTS:
            node = pending.popleft()
            if not isinstance(node, Mapping) or id(node) in seen:
                continue
            seen.add(id(node))
            parts.append(node)
            target = self.target(node.get("$ref"))
            if target is not None:
                pending.append(target)
            members = node.get("allOf")
            if isinstance(members, list):
                pending.extend(members)
            for keyword in ("anyOf", "oneOf"):
                branches = node.get(keyword)
                if isinstance(branches, list) and branches:
                    unions = True
                    chosen = self._branch(branches, value, depth + 1) if depth < MAX_UNION_DEPTH else None
                    if chosen is not None:
                        pending.append(chosen)
        view = View(tuple(parts))
        if not unions:
            if len(self._views) >= _MAX_CACHED:
                self._views.clear()
            self._views[id(schema)] = (schema, view)
        return view

    def target(self, ref: Any) -> Any:
        return local_ref(self.root, ref)

    def _branch(self, branches: list[Any], value: Any, depth: int) -> Any:
        """The branch `value` fits best (the first of the best); without a value, the first that
        is not only `null`."""
        if value is MISSING:
            return next((b for b in branches if self.view(b, MISSING, depth).types != {"null"}), branches[0])
        best, best_score = None, 0
        for branch in branches:
            score = self._fit(self.view(branch, value, depth), value)
            if score > best_score:
                best, best_score = branch, score
        return best

    @staticmethod
    def _fit(view: View, value: Any) -> int:
        listed = view.enum
        if listed is not None:
            return 8 if view.allows(value) else 0
        if not view.allows_kind(kind_of(value)):
            return 0
        score = 2 if view.types else 1
        if isinstance(value, dict):
            declared = view.properties
            score += sum(1 for key in value if key in declared)
            score -= sum(1 for key in view.required if key not in value)
            return max(score, 1)
        return score

    def child(self, view: View, pointer: str, key: str | int) -> tuple[Any, str]:
        """The schema of the property or element `key` of the location `view` describes, and its pointer."""
        if isinstance(key, str):
            declared = view.properties
            if key in declared:
                return declared[key], f"{pointer}/properties/{escape_pointer(key)}"
            extra = view.keyword("additionalProperties")
            if isinstance(extra, Mapping):
                return extra, f"{pointer}/additionalProperties"
            return {}, f"{pointer}/properties/{escape_pointer(key)}"
        prefix = view.keyword("prefixItems")
        items = view.keyword("items")
        if isinstance(items, list):
            prefix, items = items, None
            if key < len(prefix):
                return prefix[key], f"{pointer}/items/{key}"
        if isinstance(prefix, list) and key < len(prefix):
            return prefix[key], f"{pointer}/prefixItems/{key}"
        return (items if isinstance(items, Mapping) else {}), f"{pointer}/items"

    def locations(self, arguments: Any, schema: Any) -> list[Location]:
        """Every location of `arguments`, the arguments object itself first, depth first in the
        value's own order (at most `MAX_LOCATIONS`, `MAX_DEPTH` deep)."""
        found: list[Location] = []
        root = Location((), "", arguments, self.view(schema, arguments), False, "")
        pending: list[Location] = [root]
        while pending and len(found) < MAX_LOCATIONS:
            here = pending.pop()
            found.append(here)
            if len(here.path) < MAX_DEPTH:
                pending.extend(reversed(list(self._children(here))))
        return found

    def _children(self, here: Location) -> Iterator[Location]:
        value = here.value
        pairs: Iterator[tuple[str | int, Any]]
        if isinstance(value, dict):
            pairs = iter(value.items())
            required = set(here.view.required)
        elif isinstance(value, list):
            pairs = enumerate(value)
            required = set()
        else:
            return
        for key, item in pairs:
            schema, pointer = self.child(here.view, here.pointer, key)
            name = key if isinstance(key, str) else here.name
            yield Location((*here.path, key), pointer, item, self.view(schema, item), key in required, name)


_BY_ROOT: dict[int, Schemas] = {}


def locations(arguments: Any, schema: Any) -> list[Location]:
    return Schemas.of(schema).locations(arguments, schema)


def clone(value: Any) -> Any:
    """A copy of a JSON value sharing nothing mutable with it."""
    if isinstance(value, dict):
        return {key: clone(item) for key, item in value.items()}
    if isinstance(value, list):
        return [clone(item) for item in value]
    return value


def value_at(value: Any, path: Path) -> Any:
    """The value at `path`, or `MISSING`."""
    for key in path:
        held = (isinstance(value, dict) and key in value) if isinstance(key, str) else _has_index(value, key)
        if not held:
            return MISSING
        value = value[key]
    return value


def _has_index(value: Any, index: int) -> bool:
    return isinstance(value, list) and 0 <= index < len(value)


def with_value(arguments: dict[str, Any], path: Path, new: Any) -> dict[str, Any]:
    """A copy of `arguments` (sharing nothing with it) with `new` at `path` (a key added to its
    object when absent); `MISSING` removes the key or element there."""
    out: dict[str, Any] = clone(arguments)
    if not path:
        return out
    parent: Any = out
    for key in path[:-1]:
        parent = parent[key]
    last = path[-1]
    if new is MISSING:
        del parent[last]
    else:
        parent[last] = clone(new)
    return out
