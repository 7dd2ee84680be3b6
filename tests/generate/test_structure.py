"""Structure: array sizes around and well above their bounds, deep nesting, many properties; each
labelled by its shape, judged by the validator, and reached early."""

from __future__ import annotations

import json
import re
from typing import Any

import pydantic
import pytest
from jsonschema import Draft202012Validator
from mcp.types import JSONRPCRequest

from fuzzgate.config.model import Config, GenerationMode, TargetConfig, TargetKind
from fuzzgate.generate import CaseGenerator
from fuzzgate.generate._source import CaseSource
from fuzzgate.generate._structure import MANY_PROPERTIES, MAX_STRUCTURE_BYTES, NESTING_DEPTHS, TOTAL_STRUCTURE_BYTES
from fuzzgate.plan.selection import SelectionSettings, select
from fuzzgate.target.discover import Inventory, ToolInfo

LABEL = re.compile(r"^structure:[^=]*=(size \d+|depth \d+ (arrays|objects)|\d+ properties)$")


def structure(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The structure candidates of a schema, by origin."""
    return {origin: args for args, origin in CaseSource(schema, max_string=65536).fixed() if "structure:" in origin}


def obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": sorted(properties)}


def depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    return 0


def test_arrays_get_sizes_around_and_well_above_their_bounds() -> None:
    schema = obj(ids={"type": "array", "items": {"type": "integer"}, "minItems": 3, "maxItems": 200})
    found = structure(schema)
    sizes = {int(origin.rsplit(" ", 1)[1]): args["ids"] for origin, args in found.items()}
    assert set(sizes) == {0, 1, 2, 200, 201, 51, 100, 1000}, "3 is the base's own size"
    assert all(len(items) == size for size, items in sizes.items())
    validator = Draft202012Validator(schema)
    valid = {size for size, items in sizes.items() if validator.is_valid({"ids": items})}
    assert valid == {200, 51, 100}


def test_unbounded_arrays_reach_a_thousand_items_of_the_item_schemas_base() -> None:
    item = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    found = structure(obj(rows={"type": "array", "items": item}))
    rows = found["structure:/properties/rows=size 1000"]["rows"]
    assert len(rows) == 1000 and all(row == rows[0] for row in rows) and Draft202012Validator(item).is_valid(rows[0])


def test_unique_arrays_are_filled_with_distinct_items() -> None:
    schema = obj(tags={"type": "array", "items": {"type": "string"}, "uniqueItems": True})
    tags = structure(schema)["structure:/properties/tags=size 100"]["tags"]
    assert len(set(tags)) == 100 and Draft202012Validator(schema).is_valid({"tags": tags})


def test_sizes_past_the_byte_limit_are_skipped() -> None:
    long_item = {"type": "string", "minLength": 2000}
    found = structure(obj(texts={"type": "array", "items": long_item}))
    assert "structure:/properties/texts=size 100" in found
    assert "structure:/properties/texts=size 1000" not in found
    assert all(len(json.dumps(args)) <= MAX_STRUCTURE_BYTES + 100 for args in found.values())


def test_free_form_fields_get_deep_nesting_and_typed_ones_do_not() -> None:
    found = structure(
        {
            "type": "object",
            "properties": {
                "data": {},
                "tree": {"type": "array"},
                "meta": {"type": "object", "additionalProperties": True},
                "names": {"type": "array", "items": {"type": "string"}},
                "point": {"type": "object", "properties": {"x": {"type": "number"}}},
            },
        }
    )
    nested = {origin for origin in found if "depth" in origin}
    expected = {
        f"structure:/properties/{name}=depth {n} {kind}"
        for n in NESTING_DEPTHS
        for name, kind in (("data", "arrays"), ("data", "objects"), ("tree", "arrays"), ("meta", "objects"))
    }
    assert nested == expected
    for origin in nested:
        name = origin.split("/")[2].split("=")[0]
        value = found[origin][name]
        assert depth(value) == int(origin.split("depth ")[1].split(" ")[0])


def test_the_deepest_request_still_goes_through_the_sdk_and_its_parser() -> None:
    deepest = max(NESTING_DEPTHS)
    nested = structure(obj(outer=obj(inner=obj(data={}))))
    arguments = nested[f"structure:/properties/outer/properties/inner/properties/data=depth {deepest} arrays"]
    request = JSONRPCRequest(jsonrpc="2.0", id=1, method="tools/call", params={"name": "t", "arguments": arguments})
    text = request.model_dump_json(by_alias=True, exclude_unset=True)
    # The Python SDK's server parses with pydantic_core, whose JSON parser has a nesting limit.
    assert pydantic.TypeAdapter(Any).validate_json(text)["params"]["arguments"] == arguments


def test_maps_get_many_properties_and_merely_open_objects_do_not() -> None:
    schema = {
        "type": "object",
        "properties": {
            "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
            "small": {"type": "object", "additionalProperties": {"type": "integer"}, "maxProperties": 5},
            "point": {"type": "object", "properties": {"x": {"type": "number"}}},
        },
        "required": ["counts", "small", "point"],
    }
    found = structure(schema)
    many = {origin for origin in found if origin.endswith(f"={MANY_PROPERTIES} properties")}
    assert many == {
        f"structure:/properties/counts={MANY_PROPERTIES} properties",
        f"structure:/properties/small={MANY_PROPERTIES} properties",
    }
    validator = Draft202012Validator(schema)
    counts = found[f"structure:/properties/counts={MANY_PROPERTIES} properties"]
    assert len(counts["counts"]) >= MANY_PROPERTIES and validator.is_valid(counts)
    assert not validator.is_valid(found[f"structure:/properties/small={MANY_PROPERTIES} properties"])
    assert not any(origin.startswith("structure:=") for origin in structure({"type": "object", "properties": {}}))


@pytest.mark.parametrize("mode", [GenerationMode.MIXED, GenerationMode.CONFORM, GenerationMode.ADVERSARIAL])
def test_structure_cases_are_labelled_by_shape_and_judged_by_the_validator(mode: GenerationMode) -> None:
    schema = obj(
        ids={"type": "array", "items": {"type": "integer"}, "maxItems": 60},
        data={},
        counts={"type": "object", "additionalProperties": {"type": "integer"}},
    )
    generator = CaseGenerator(schema, master_seed=5, name="t", mode=mode)
    validator = Draft202012Validator(schema)
    made = [generator.case(k) for k in range(200)]
    shaped = [case for case in made if case.origin.startswith("structure:")]
    assert shaped
    for case in shaped:
        assert LABEL.match(case.origin), case.origin
        assert case.schema_valid == validator.is_valid(case.arguments), case.origin


def test_a_tool_with_one_array_field_gets_more_than_50_items_within_its_first_50_cases() -> None:
    tool = ToolInfo(
        name="sum_all",
        description="Add up numbers.",
        input_schema=obj(numbers={"type": "array", "items": {"type": "number"}}),
        output_schema=None,
        destructive_hint=None,
        read_only_hint=True,
    )
    config = Config(target=TargetConfig(kind=TargetKind.STDIO, command="x"))
    (plan,) = select(Inventory((tool,), (), (), ()), SelectionSettings.of(config), 11).plans
    sizes = []
    for k in range(50):
        case = plan.case(k)
        assert case is not None
        numbers = case.arguments.get("numbers")
        sizes.append(len(numbers) if isinstance(numbers, list) else 0)
    assert max(sizes) > 50


def test_structure_candidates_are_deterministic() -> None:
    schema = obj(ids={"type": "array", "items": {"type": "integer"}}, data={})
    assert list(structure(schema).items()) == list(structure(json.loads(json.dumps(schema))).items())


def test_the_shapes_of_one_schema_share_a_byte_allowance() -> None:
    long_item = {"type": "string", "minLength": 3000}
    fields = {f"f{i:02}": {"type": "array", "items": long_item} for i in range(30)}
    found = structure({"type": "object", "properties": fields})
    grown = [origin for origin in found if origin.endswith(("size 51", "size 100"))]
    added = sum(len(json.dumps(found[origin][origin.split("/")[2].split("=")[0]])) for origin in grown)
    # The allowance counts the items added; each array also keeps its one base item.
    assert TOTAL_STRUCTURE_BYTES / 2 < added <= TOTAL_STRUCTURE_BYTES + len(grown) * 3100
    assert "structure:/properties/f00=size 100" in found
    assert "structure:/properties/f29=size 100" not in found
