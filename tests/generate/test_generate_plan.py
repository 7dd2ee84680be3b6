"""The fixed part of the stream (base, boundary values, canonical violations) and the normalizer."""

from __future__ import annotations

import signal
from typing import Any

import pytest

from fuzzgate.config.model import GenerationMode
from fuzzgate.generate import CaseGenerator, UnsupportedSchema
from fuzzgate.generate._document import SchemaDocument
from fuzzgate.generate._model import JsonType, Leaf, Union, json_key
from fuzzgate.generate._source import CaseSource
from fuzzgate.generate._worker import WORKER
from tests.generate.sample_schemas import SCHEMAS


def fixed(name: str, max_string: int = 65536) -> list[tuple[dict[str, Any], str]]:
    return CaseSource(SCHEMAS[name], max_string=max_string).fixed()


def changed_keys(base: dict[str, Any], other: dict[str, Any]) -> set[str]:
    def seen(arguments: dict[str, Any], key: str) -> str:
        return json_key(arguments[key]) if key in arguments else "<absent>"

    return {key for key in base.keys() | other.keys() if seen(base, key) != seen(other, key)}


def test_the_base_takes_examples_defaults_and_first_enum_values() -> None:
    base, origin = fixed("examples_and_enum")[0]
    assert (base, origin) == ({"mode": "read", "token": "s3cr3t-magic", "level": 3}, "example")
    base, _ = fixed("pydantic_model")[0]
    assert base["priority"] == "medium" and base["note"] is None and base["dry_run"] is False
    assert base["items"] and base["items"][0]["name"]


@pytest.mark.parametrize("name", ["examples_and_enum", "bounded_numbers", "strings", "type_lists_and_const"])
def test_each_fixed_candidate_changes_one_location_of_the_base(name: str) -> None:
    candidates = fixed(name)
    base = candidates[0][0]
    for arguments, origin in candidates[1:]:
        assert len(changed_keys(base, arguments)) == 1, origin


def test_nested_locations_are_varied_too() -> None:
    origins = [origin for _, origin in fixed("pydantic_model")]
    assert any(o.startswith("boundary:/properties/items/items/properties/qty=") for o in origins)
    assert any(o.startswith("mutation:wrong_type:/properties/items/items/properties/name") for o in origins)
    assert any(o.startswith("alternative:/properties/note=") for o in origins)
    assert any(o.startswith("mutation:duplicate_items:/properties/items/items/properties/tags") for o in origins)


def test_canonical_violations_are_offered() -> None:
    origins = " ".join(origin for _, origin in fixed("bounded_numbers"))
    for kind in ("missing_required", "extra_property", "wrong_type", "null", "not_multiple"):
        assert f"mutation:{kind}:" in origins
    origins = " ".join(origin for _, origin in fixed("strings"))
    for kind in ("pattern_mismatch", "format_violation"):
        assert f"mutation:{kind}:" in origins


def test_exclusive_float_bounds_get_their_neighbours() -> None:
    values = {args["x"] for args, _ in fixed("bounded_numbers") if isinstance(args.get("x"), int | float)}
    assert {0, 5e-324, 1, 0.9999999999999999} <= values


def test_the_long_string_honours_max_string() -> None:
    lengths = {len(args["s"]) for args, _ in fixed("one_string", max_string=100) if isinstance(args.get("s"), str)}
    assert max(lengths) == 100


def test_all_of_merges_properties_bounds_and_required() -> None:
    document = SchemaDocument(SCHEMAS["all_of_merge"])
    root = document.root
    assert isinstance(root, Leaf) and root.object is not None
    a = root.object.property("a")
    assert isinstance(a, Leaf) and a.types == {JsonType.INTEGER}
    assert (a.number.minimum, a.number.maximum) == (0, 10)
    assert root.object.required == ("a",)


def test_all_of_multiples_take_the_least_common_multiple() -> None:
    document = SchemaDocument({"allOf": [{"type": "integer", "multipleOf": 4}, {"multipleOf": 6}]})
    assert isinstance(document.root, Leaf) and document.root.number.multiple_of == 12


def test_nullable_fields_become_unions() -> None:
    document = SchemaDocument(SCHEMAS["pydantic_model"])
    assert isinstance(document.root, Leaf) and document.root.object is not None
    note = document.root.object.property("note")
    assert isinstance(note, Union) and not note.exclusive and len(note.alternatives) == 2


def test_ref_siblings_are_ignored_under_draft_07_and_merged_under_2020_12() -> None:
    defs = {"N": {"type": "integer"}}
    legacy = SchemaDocument(
        {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "definitions": defs,
            "$ref": "#/definitions/N",
            "minimum": 5,
        }
    )
    modern = SchemaDocument({"$defs": defs, "$ref": "#/$defs/N", "minimum": 5})
    assert legacy.accepts(legacy.root, 1) and not modern.accepts(modern.root, 1)


def test_a_merged_recursive_ref_is_refused_only_when_it_never_bottoms_out() -> None:
    with pytest.raises(UnsupportedSchema, match="cycle"):
        SchemaDocument({"$defs": {"A": {"allOf": [{"$ref": "#/$defs/A"}, {"type": "object"}]}}, "$ref": "#/$defs/A"})
    SchemaDocument(
        {
            "$defs": {"A": {"type": "object", "properties": {"next": {"allOf": [{"$ref": "#/$defs/A"}]}}}},
            "$ref": "#/$defs/A",
        }
    )


def test_the_stream_survives_a_worker_that_dies() -> None:
    made = CaseGenerator(SCHEMAS["one_integer"], master_seed=4, name="n", mode=GenerationMode.MIXED)
    expected = [made.case(k) for k in range(400)]
    process = WORKER._process
    assert process is not None
    process.send_signal(signal.SIGKILL)
    process.wait()
    again = CaseGenerator(SCHEMAS["one_integer"], master_seed=4, name="n", mode=GenerationMode.MIXED)
    assert [again.case(k) for k in range(400)] == expected


def test_map_types_get_entries_and_open_objects_get_no_unknown_keys() -> None:
    origins = [origin for _, origin in fixed("maps_and_patterns")]
    assert "extra:/properties/env/extra" in origins and "extra:/properties/env/__proto__" in origins
    assert not any(origin.startswith("extra:") for _, origin in fixed("pydantic_model"))
