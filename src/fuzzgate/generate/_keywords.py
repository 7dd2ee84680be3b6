"""JSON Schema keywords: which ones constrain values, which are refused, and reading their values."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from jsonschema import Draft7Validator, Draft202012Validator
from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for

from fuzzgate.generate._formats import format_checker
from fuzzgate.generate._model import Offered, UnsupportedSchema, escape_pointer, json_key

UNSUPPORTED_KEYWORDS: Final = frozenset(
    {
        "not",
        "if",
        "then",
        "else",
        "dependentSchemas",
        "dependentRequired",
        "dependencies",
        "propertyNames",
        "contains",
        "minContains",
        "maxContains",
        "unevaluatedProperties",
        "unevaluatedItems",
        "$dynamicRef",
        "$recursiveRef",
    }
)
"""Keywords that constrain values but that the generator cannot honour: rejected, never ignored."""

CONSTRAINT_KEYWORDS: Final = frozenset(
    {
        "$ref",
        "allOf",
        "anyOf",
        "oneOf",
        "type",
        "enum",
        "const",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "items",
        "prefixItems",
        "additionalItems",
        "minItems",
        "maxItems",
        "uniqueItems",
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "minProperties",
        "maxProperties",
    }
)

LEGACY_DRAFTS: Final = ("draft3", "draft4", "draft6", "draft7")
"""Drafts in which `$ref` siblings are ignored and `items` may be an array."""


def build_validator(schema: Mapping[str, Any] | bool, *, bounded_patterns: bool = False) -> Validator:
    """A jsonschema validator for the schema's draft (2020-12 unless it says otherwise or only fits draft-07).

    `bounded_patterns`: match the schema's patterns under a time limit, for validators that run in
    fuzzgate's own process (the generation worker has a deadline of its own).
    """
    cls: Any = validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        declared = isinstance(schema, Mapping) and "$schema" in schema
        if declared or not _fits(Draft7Validator, schema):
            where = "/" + "/".join(escape_pointer(str(p)) for p in exc.path)
            raise UnsupportedSchema(f"is not a valid JSON Schema: {exc.message} at {where}") from None
        cls = Draft7Validator
    if bounded_patterns:
        # Imported here, not at the top: the generation worker must not load modules from outside
        # this package (Hypothesis mixes their constants into its draws; see `_worker`).
        from fuzzgate.model.untrusted_regex import bounded

        cls = bounded(cls)
    validator: Validator = cls(schema, format_checker=format_checker(cls))
    return validator


def _fits(cls: Any, schema: Any) -> bool:
    try:
        cls.check_schema(schema)
    except SchemaError:
        return False
    return True


def number(raw: Mapping[str, Any], key: str, path: str) -> int | float | None:
    value = raw.get(key)
    if value is None or isinstance(value, bool):
        return None
    if not isinstance(value, int | float):
        raise UnsupportedSchema(f"has a non-numeric '{key}' at {path}")
    return value


def count(raw: Mapping[str, Any], key: str, path: str) -> int | None:
    value = number(raw, key, path)
    return None if value is None else int(value)


def offered_values(raw: Mapping[str, Any]) -> tuple[Offered, ...]:
    found: list[Offered] = []
    examples = raw.get("examples")
    if isinstance(examples, list):
        found.extend(Offered(value, "example") for value in examples)
    if "default" in raw:
        found.append(Offered(raw["default"], "default"))
    return tuple(found)


def unique(values: Any) -> Iterator[Any]:
    seen: set[str] = set()
    for value in values:
        key = json_key(value)
        if key not in seen:
            seen.add(key)
            yield value
