"""The compiler: every value it draws must conform, and what it cannot honour it must refuse."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from fuzzgate.generate import UnsupportedSchema, compile_schema
from fuzzgate.generate._document import SchemaDocument
from fuzzgate.generate._formats import VALID_SAMPLES, format_checker
from fuzzgate.generate.schema import MAX_RECURSION, StrategyBuilder
from tests.generate.sample_schemas import SCHEMAS
from tests.generate.schema_strategies import input_schemas

FAST = settings(
    max_examples=25,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)


def raw_strategy(schema: Any, max_string: int = 65536) -> tuple[SchemaDocument, st.SearchStrategy[Any]]:
    """The compiler's strategy *without* compile_schema's final validator filter, so that a value
    the compiler gets wrong is seen rather than silently filtered away."""
    document = SchemaDocument(schema)
    strategy = StrategyBuilder(document, max_string=max_string).build(document.root)
    assert strategy is not None
    return document, strategy


def strings_in(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for item in value for s in strings_in(item)]
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in [key, *strings_in(item)]]
    return []


def depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    return 0


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_drawn_values_of_realistic_schemas_conform(name: str) -> None:
    document, strategy = raw_strategy(SCHEMAS[name])

    @FAST
    @given(st.data())
    def check(data: st.DataObject) -> None:
        value = data.draw(strategy)
        assert document.validator.is_valid(value), list(document.validator.iter_errors(value))
        json.dumps(value, allow_nan=False)

    check()


@settings(FAST, max_examples=60)
@given(input_schemas(), st.data())
def test_drawn_values_of_random_schemas_conform(schema: dict[str, Any], data: st.DataObject) -> None:
    document, strategy = raw_strategy(schema)
    for _ in range(3):
        value = data.draw(strategy)
        assert document.validator.is_valid(value), (schema, value)


@FAST
@given(st.data())
def test_compile_schema_accepts_only_what_the_validator_accepts(data: st.DataObject) -> None:
    schema = SCHEMAS["one_of_shapes"]
    value = data.draw(compile_schema(schema))
    assert Draft202012Validator(schema).is_valid(value)


@FAST
@given(st.data())
def test_empty_schema_means_any_finite_json_value(data: st.DataObject) -> None:
    schemas: tuple[dict[str, Any] | bool, ...] = ({}, True)
    for schema in schemas:
        value = data.draw(compile_schema(schema))
        json.dumps(value, allow_nan=False)


@FAST
@given(st.data())
def test_numbers_are_finite(data: st.DataObject) -> None:
    value = data.draw(compile_schema({"type": "number"}))
    assert math.isfinite(value)


@FAST
@given(st.data())
def test_recursive_refs_stay_bounded(data: st.DataObject) -> None:
    value = data.draw(compile_schema(SCHEMAS["recursive_tree"]))
    # root object -> node -> (children array -> node) per recursion level
    assert depth(value) <= 2 + 2 * MAX_RECURSION


@FAST
@given(st.data())
def test_required_recursion_ends_in_the_non_recursive_branch(data: st.DataObject) -> None:
    value = data.draw(compile_schema(SCHEMAS["recursive_linked_list"]))
    cells = 0
    while value is not None:
        cells += 1
        value = value["tail"]
    assert cells <= MAX_RECURSION + 1


@FAST
@given(st.data())
def test_strings_are_capped_by_max_string(data: st.DataObject) -> None:
    value = data.draw(compile_schema(SCHEMAS["maps_and_patterns"] | {"minProperties": 0}, max_string=7))
    assert all(len(s) <= 7 for s in strings_in(value) if s not in ("env", "labels"))
    text = data.draw(compile_schema({"type": "string", "minLength": 3}, max_string=4))
    assert 3 <= len(text) <= 4


@FAST
@given(st.data())
def test_one_of_means_exactly_one(data: st.DataObject) -> None:
    value = data.draw(
        compile_schema({"oneOf": [{"type": "integer", "multipleOf": 3}, {"type": "integer", "multipleOf": 5}]})
    )
    assert (value % 3 == 0) != (value % 5 == 0)


@FAST
@given(st.data())
def test_pattern_and_length_hold_together(data: st.DataObject) -> None:
    _, strategy = raw_strategy({"type": "string", "pattern": "^[a-c]+$", "minLength": 2, "maxLength": 4})
    value = data.draw(strategy)
    assert 2 <= len(value) <= 4 and set(value) <= set("abc")


@pytest.mark.parametrize("fmt", ["date-time", "date", "time", "email", "uri", "uuid", "ipv4", "ipv6", "hostname"])
def test_formats_pass_the_format_checker(fmt: str) -> None:
    checker = format_checker(Draft202012Validator)
    _, strategy = raw_strategy({"type": "string", "format": fmt})

    @FAST
    @given(st.data())
    def check(data: st.DataObject) -> None:
        value = data.draw(strategy)
        assert checker.conforms(value, fmt), value

    check()
    assert all(checker.conforms(sample, fmt) for sample in VALID_SAMPLES[fmt])


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ({"type": "object", "properties": {"x": {"not": {"type": "string"}}}}, "uses 'not' at /properties/x"),
        ({"if": {"type": "string"}, "then": {"minLength": 1}}, "uses 'if' at /"),
        ({"type": "object", "dependentSchemas": {"a": {}}}, "uses 'dependentSchemas' at /"),
        ({"type": "array", "contains": {"type": "integer"}}, "uses 'contains' at /"),
        ({"type": "object", "propertyNames": {"maxLength": 3}}, "uses 'propertyNames' at /"),
        ({"properties": {"a": {"$ref": "#/$defs/Missing"}}}, "unresolvable $ref '#/$defs/Missing' at /properties/a"),
        ({"properties": {"a": {"$ref": "https://example.com/s.json"}}}, "unresolvable $ref"),
        ({"items": {"allOf": [{"format": "date"}, {"format": "email"}]}}, "formats 'date' and 'email'"),
        ({"$defs": {"A": {"allOf": [{"$ref": "#/$defs/A"}, {"type": "object"}]}}, "$ref": "#/$defs/A"}, "cycle"),
        ({"$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}, "$ref": "#/$defs/A"}, "$ref cycle"),
        ({"type": "string", "pattern": "(unclosed"}, "pattern"),
        ({"type": "strin"}, "not a valid JSON Schema"),
    ],
)
def test_unsupported_schemas_are_refused_with_a_reason(schema: dict[str, Any], reason: str) -> None:
    with pytest.raises(UnsupportedSchema) as raised:
        compile_schema(schema)
    assert reason in str(raised.value)


def test_a_schema_without_values_is_refused() -> None:
    for schema in (False, {"type": "string", "minLength": 10}):
        with pytest.raises(UnsupportedSchema, match="admits no value"):
            compile_schema(schema, max_string=5)


def test_annotations_are_ignored_and_unknown_formats_are_annotations() -> None:
    schema = {
        "title": "t",
        "description": "d",
        "readOnly": True,
        "examples": ["x"],
        "type": "string",
        "format": "no-such-format",
        "x-vendor": 1,
    }
    document, strategy = raw_strategy(schema)
    assert document.validator.is_valid("anything")
    assert strategy is not None
