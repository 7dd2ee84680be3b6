"""One input schema as a document: its validator, its `$ref` targets, and its normalized node tree.

Normalization is eager for everything reachable from the root, so an unsupported keyword anywhere
raises `UnsupportedSchema` when the document is built, never halfway through a fuzzing run.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final
from urllib.parse import unquote

from jsonschema.protocols import Validator

from fuzzgate.generate._keywords import (
    CONSTRAINT_KEYWORDS,
    LEGACY_DRAFTS,
    UNSUPPORTED_KEYWORDS,
    build_validator,
    count,
    number,
    offered_values,
    unique,
)
from fuzzgate.generate._merge import merge_all
from fuzzgate.generate._model import (
    ALL_TYPES,
    ArrayRule,
    JsonType,
    Leaf,
    NumberRule,
    ObjectRule,
    Offered,
    Ref,
    Schema,
    StringRule,
    Union,
    UnsupportedSchema,
    any_leaf,
    escape_pointer,
    json_key,
    never_leaf,
    with_offered,
)

_MAX_ALTERNATIVES: Final = 64


class SchemaDocument:
    """A schema, its validator, and its normalized nodes; `accepts` checks a value against any node."""

    def __init__(self, schema: Mapping[str, Any] | bool) -> None:
        self.raw = schema
        self.validator = build_validator(schema)
        self.legacy = any(name in type(self.validator).__name__.lower() for name in LEGACY_DRAFTS)
        self._root_id = schema.get("$id") if isinstance(schema, Mapping) else None
        self._targets: dict[str, Schema] = {}
        self._pending: set[str] = set()
        self._referenced: list[str] = []
        self._fragment_validators: dict[int, Validator] = {}
        self._lock = threading.Lock()
        self.root = self._normalize(schema, "")
        self._targets.setdefault("", self.root)
        self._normalize_referenced()
        self._refuse_bare_ref_cycles()
        self.recursive_targets = self._find_recursive_targets()

    # -- references -------------------------------------------------------------------------

    def target(self, pointer: str) -> Schema:
        """The normalized schema a `$ref` points at."""
        if pointer in self._targets:
            return self._targets[pointer]
        if pointer in self._pending:
            raise UnsupportedSchema(f"has a $ref cycle through allOf at {pointer or '/'}")
        self._pending.add(pointer)
        node = self._normalize(self._raw_at(pointer), pointer)
        self._pending.discard(pointer)
        self._targets[pointer] = node
        return node

    def merged_target(self, first: str, second: str, build: Callable[[], Schema]) -> str:
        """A synthetic target for allOf of two `$ref`s, so merging recursive definitions terminates."""
        pointer = f"allOf({first},{second})"
        if pointer not in self._targets and pointer not in self._pending:
            self._pending.add(pointer)
            node = build()
            self._pending.discard(pointer)
            self._targets[pointer] = node
        return pointer

    def _pointer_of(self, ref: Any, path: str) -> str:
        if not isinstance(ref, str):
            raise UnsupportedSchema(f"has a non-string $ref at {path}")
        fragment = ref
        if self._root_id and ref.startswith(str(self._root_id)):
            fragment = ref[len(str(self._root_id)) :]
        if not fragment.startswith("#") or (len(fragment) > 1 and not fragment.startswith("#/")):
            raise UnsupportedSchema(f"has an unresolvable $ref '{ref}' at {path}")
        pointer = unquote(fragment[1:])
        try:
            self._raw_at(pointer)
        except LookupError:
            raise UnsupportedSchema(f"has an unresolvable $ref '{ref}' at {path}") from None
        self._referenced.append(pointer)
        return pointer

    def _raw_at(self, pointer: str) -> Any:
        node: Any = self.raw
        for token in pointer.split("/")[1:]:
            token = token.replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                raise LookupError(pointer)
        return node

    def _normalize_referenced(self) -> None:
        while self._referenced:
            self.target(self._referenced.pop())

    def _refuse_bare_ref_cycles(self) -> None:
        """`A: {$ref: B}, B: {$ref: A}` never reaches a schema; the validator would recurse forever."""
        for start, node in self._targets.items():
            seen = {start}
            while isinstance(node, Ref):
                if node.target in seen:
                    raise UnsupportedSchema(f"has a $ref cycle that never reaches a schema at {node.path or '/'}")
                seen.add(node.target)
                node = self._targets[node.target]

    def _find_recursive_targets(self) -> frozenset[str]:
        edges = {pointer: set(_refs_below(node)) for pointer, node in self._targets.items()}
        recursive: set[str] = set()
        for start in edges:
            seen: set[str] = set()
            stack = list(edges[start])
            while stack:
                current = stack.pop()
                if current == start:
                    recursive.add(start)
                    break
                if current not in seen:
                    seen.add(current)
                    stack.extend(edges.get(current, ()))
        return frozenset(recursive)

    # -- checking values ---------------------------------------------------------------------

    def accepts(self, node: Schema, value: Any) -> bool:
        """Whether the value satisfies the node, by the real validator on the node's raw fragments."""
        if isinstance(node, Ref):
            return self.accepts(self.target(node.target), value)
        if isinstance(node, Leaf) and node.is_never:
            return False
        return self.accepts_sources(node.sources, value)

    def accepts_sources(self, sources: tuple[Any, ...], value: Any) -> bool:
        return all(self._fragment_validator(source).is_valid(value) for source in sources)

    def _fragment_validator(self, fragment: Any) -> Validator:
        key = id(fragment)
        found = self._fragment_validators.get(key)
        if found is None:
            with self._lock:
                found = self.validator.evolve(schema=fragment)
                self._fragment_validators[key] = found
        return found

    # -- normalization -----------------------------------------------------------------------

    def _normalize(self, raw: Any, path: str) -> Schema:
        if raw is True:
            return any_leaf(path)
        if raw is False:
            return never_leaf(path)
        if not isinstance(raw, Mapping):
            raise UnsupportedSchema(f"has a schema that is neither an object nor a boolean at {path or '/'}")
        for key in raw:
            if key in UNSUPPORTED_KEYWORDS:
                raise UnsupportedSchema(f"uses '{key}' at {path or '/'}")
        if "$id" in raw and path:
            raise UnsupportedSchema(f"uses a nested '$id' at {path}")
        offered = offered_values(raw)
        if "$ref" in raw:
            ref = Ref(path, self._pointer_of(raw["$ref"], path), offered)
            siblings = {k: v for k, v in raw.items() if k in CONSTRAINT_KEYWORDS and k != "$ref"}
            if not siblings or self.legacy:
                return ref
            return merge_all(self, [ref, self._normalize(siblings, path)], path)
        if "allOf" in raw:
            members = raw["allOf"]
            nodes = [self._normalize(member, f"{path}/allOf/{i}") for i, member in enumerate(members)]
            rest = {k: v for k, v in raw.items() if k != "allOf"}
            if any(k in CONSTRAINT_KEYWORDS for k in rest):
                nodes.append(self._normalize(rest, path))
            merged = merge_all(self, nodes, path)
            return with_offered(merged, offered)
        if "anyOf" in raw or "oneOf" in raw:
            return self._union(raw, path, offered)
        return self._leaf(raw, path, offered)

    def _union(self, raw: Mapping[str, Any], path: str, offered: tuple[Offered, ...]) -> Schema:
        groups: list[list[Schema]] = []
        for keyword in ("anyOf", "oneOf"):
            if keyword in raw:
                groups.append(
                    [self._normalize(branch, f"{path}/{keyword}/{i}") for i, branch in enumerate(raw[keyword])]
                )
        rest = {k: v for k, v in raw.items() if k not in ("anyOf", "oneOf")}
        base = self._leaf(rest, path, ()) if any(k in CONSTRAINT_KEYWORDS for k in rest) else None
        alternatives: list[Schema] = []
        for combination in itertools.product(*groups):
            if len(alternatives) >= _MAX_ALTERNATIVES:
                raise UnsupportedSchema(f"has more than {_MAX_ALTERNATIVES} anyOf/oneOf combinations at {path}")
            parts = [base, *combination] if base is not None else list(combination)
            alternatives.append(parts[0] if len(parts) == 1 else merge_all(self, parts, path))
        return Union(path, tuple(alternatives), exclusive="oneOf" in raw, offered=offered, sources=(raw,))

    def _leaf(self, raw: Mapping[str, Any], path: str, offered: tuple[Offered, ...]) -> Leaf:
        if not any(k in CONSTRAINT_KEYWORDS for k in raw):
            return Leaf(path=path, types=ALL_TYPES, offered=offered)
        types = self._types(raw, path)
        enum: tuple[Any, ...] | None = None
        if "enum" in raw:
            if not isinstance(raw["enum"], list):
                raise UnsupportedSchema(f"has a non-array 'enum' at {path}")
            enum = tuple(raw["enum"])
        if "const" in raw:
            const = raw["const"]
            enum = (const,) if enum is None or any(json_key(v) == json_key(const) for v in enum) else ()
        if enum is not None:
            enum = tuple(unique(v for v in enum if self.accepts_sources((raw,), v)))
            if not enum:
                types = frozenset()
        return Leaf(
            path=path,
            types=types,
            enum=enum,
            number=self._number_rule(raw, path),
            string=self._string_rule(raw, path),
            array=self._array_rule(raw, path),
            object=self._object_rule(raw, path),
            offered=offered,
            sources=(raw,),
        )

    def _types(self, raw: Mapping[str, Any], path: str) -> frozenset[JsonType]:
        declared = raw.get("type")
        if declared is None:
            return ALL_TYPES
        names = [declared] if isinstance(declared, str) else declared
        try:
            return frozenset(JsonType(name) for name in names)
        except (ValueError, TypeError):
            raise UnsupportedSchema(f"has an unknown 'type' {declared!r} at {path}") from None

    def _number_rule(self, raw: Mapping[str, Any], path: str) -> NumberRule:
        minimum, maximum = number(raw, "minimum", path), number(raw, "maximum", path)
        low, high = number(raw, "exclusiveMinimum", path), number(raw, "exclusiveMaximum", path)
        # Draft 4 spelled exclusive bounds as booleans qualifying minimum/maximum.
        if raw.get("exclusiveMinimum") is True:
            low, minimum = minimum, None
        if raw.get("exclusiveMaximum") is True:
            high, maximum = maximum, None
        multiple = number(raw, "multipleOf", path)
        if multiple is not None and multiple <= 0:
            raise UnsupportedSchema(f"has a non-positive 'multipleOf' at {path}")
        return NumberRule(minimum, maximum, low, high, multiple)

    def _string_rule(self, raw: Mapping[str, Any], path: str) -> StringRule:
        patterns: tuple[str, ...] = ()
        if "pattern" in raw:
            pattern = raw["pattern"]
            try:
                re.compile(pattern)
            except (re.error, TypeError) as exc:
                raise UnsupportedSchema(f"has a pattern Python cannot compile ({exc}) at {path}/pattern") from None
            patterns = (pattern,)
        fmt = raw.get("format")
        return StringRule(
            min_length=count(raw, "minLength", path) or 0,
            max_length=count(raw, "maxLength", path),
            patterns=patterns,
            format=fmt if isinstance(fmt, str) else None,
        )

    def _array_rule(self, raw: Mapping[str, Any], path: str) -> ArrayRule | None:
        keys = ("items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems")
        if not any(k in raw for k in keys):
            return None
        items_raw = raw.get("items", True)
        prefix_raw = raw.get("prefixItems", [])
        prefix_path, items_path = f"{path}/prefixItems", f"{path}/items"
        if isinstance(items_raw, list):
            prefix_raw, prefix_path = items_raw, f"{path}/items"
            items_raw, items_path = raw.get("additionalItems", True), f"{path}/additionalItems"
        prefix = tuple(self._normalize(item, f"{prefix_path}/{i}") for i, item in enumerate(prefix_raw))
        return ArrayRule(
            items=self._normalize(items_raw, items_path),
            prefix=prefix,
            min_items=count(raw, "minItems", path) or 0,
            max_items=count(raw, "maxItems", path),
            unique=raw.get("uniqueItems") is True,
        )

    def _object_rule(self, raw: Mapping[str, Any], path: str) -> ObjectRule | None:
        keys = ("properties", "required", "additionalProperties", "patternProperties")
        if not any(k in raw for k in keys) and "minProperties" not in raw and "maxProperties" not in raw:
            return None
        declared = raw.get("properties", {})
        properties = {
            key: self._normalize(value, f"{path}/properties/{escape_pointer(key)}") for key, value in declared.items()
        }
        patterns: list[tuple[str, Schema]] = []
        for pattern, value in raw.get("patternProperties", {}).items():
            try:
                re.compile(pattern)
            except re.error as exc:
                raise UnsupportedSchema(
                    f"has a patternProperties key Python cannot compile ({exc}) at {path}"
                ) from None
            patterns.append((pattern, self._normalize(value, f"{path}/patternProperties/{escape_pointer(pattern)}")))
        additional = self._normalize(raw.get("additionalProperties", True), f"{path}/additionalProperties")
        required = tuple(unique(raw.get("required", [])))
        for key in required:
            if key not in properties:
                matching = [schema for pattern, schema in patterns if re.search(pattern, key)]
                properties[key] = merge_all(self, matching, path) if matching else additional
        return ObjectRule(
            additional=additional,
            properties=tuple(properties.items()),
            required=required,
            pattern_properties=tuple(patterns),
            min_properties=count(raw, "minProperties", path) or 0,
            max_properties=count(raw, "maxProperties", path),
            additional_explicit="additionalProperties" in raw,
        )


def _refs_below(node: Schema) -> Iterator[str]:
    stack: list[Schema] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, Ref):
            yield current.target
        elif isinstance(current, Union):
            stack.extend(current.alternatives)
        else:
            stack.extend(children(current))


def children(leaf: Leaf) -> Iterator[Schema]:
    if leaf.array is not None:
        yield from leaf.array.prefix
        yield leaf.array.items
    if leaf.object is not None:
        yield from (schema for _, schema in leaf.object.properties)
        yield from (schema for _, schema in leaf.object.pattern_properties)
        yield leaf.object.additional
