"""Where a value may go in a tool's input: the string and number properties of its schema (at the top
level and in the nested objects the arguments hold, never `enum`/`const` or secret-named ones), each
a `Field` with its class and hint words, and `put`, which sets a value at a field's path."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fuzzgate.generate.value_class import ValueClass, hint_words, key_class, normal_key, secret_key

_URI_FORMATS = frozenset({"uri", "uri-reference", "iri", "iri-reference", "url"})


@dataclass(frozen=True, slots=True)
class Field:
    """A property of a tool's input that a dictionary value may go to."""

    pointer: str
    """JSON pointer into the schema: `/properties/note_id`, `/properties/filter/properties/id`."""
    path: tuple[str, ...]
    """The keys leading to it in the arguments."""
    key: str
    value_class: ValueClass | None
    types: frozenset[str]
    """Of "string", "integer", "number"."""
    hints: frozenset[str]


def fields_of(schema: Mapping[str, Any], arguments: Mapping[str, Any], tool: str = "") -> list[Field]:
    """The properties of `schema` a value may go to, in schema order: strings and numbers without
    `enum`/`const`, at the top level and in nested objects that `arguments` holds."""
    found: list[Field] = []
    _collect(schema, arguments, "", (), hint_words(tool), found, 0)
    return found


def _collect(
    schema: Mapping[str, Any],
    arguments: Mapping[str, Any],
    pointer: str,
    path: tuple[str, ...],
    hints: frozenset[str],
    found: list[Field],
    depth: int,
) -> None:
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or depth > 3:
        return
    for name, prop in properties.items():
        if not isinstance(name, str) or not isinstance(prop, Mapping):
            continue
        here = f"{pointer}/properties/{_escape(name)}"
        nested = arguments.get(name)
        if isinstance(nested, Mapping) and isinstance(prop.get("properties"), Mapping):
            _collect(prop, nested, here, (*path, name), hint_words(name) or hints, found, depth + 1)
            continue
        if "enum" in prop or "const" in prop or secret_key(name):
            continue
        types = _types(prop)
        if not types:
            continue
        value_class = key_class(name) or _format_class(prop.get("format"))
        # A field that names its entity (`user_id`) is that entity's; a bare `id` is the tool's (`get_note`).
        own = hint_words(name)
        found.append(Field(here, (*path, name), normal_key(name), value_class, types, own or hints))


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def _types(prop: Mapping[str, Any]) -> frozenset[str]:
    declared = prop.get("type")
    if declared is None:
        # A reference (pydantic writes an enum field as `{"$ref": "#/$defs/Kind"}`) or a combination
        # names no free value: an accepted or a reply's value put there would crowd out its choices.
        combined = any(k in prop for k in ("anyOf", "oneOf", "allOf", "$ref"))
        return frozenset() if combined else frozenset({"string", "integer"})
    listed = [declared] if isinstance(declared, str) else declared if isinstance(declared, list) else []
    return frozenset(t for t in listed if t in ("string", "integer", "number"))


def _format_class(fmt: Any) -> ValueClass | None:
    if fmt == "uuid":
        return ValueClass.ID
    if fmt in _URI_FORMATS:
        return ValueClass.URI
    return None


def put(arguments: Mapping[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    """A copy of `arguments` with `value` at `path` (nested objects copied on the way)."""
    out = dict(arguments)
    if len(path) == 1:
        out[path[0]] = value
        return out
    inner = out.get(path[0])
    out[path[0]] = put(inner if isinstance(inner, Mapping) else {}, path[1:], value)
    return out
