"""Anchored draws: random valid draws whose fields with `examples` hold one of them."""

from __future__ import annotations

import json
from typing import Any

from jsonschema import Draft202012Validator

from fuzzgate.config.model import GenerationMode
from fuzzgate.generate import Case, CaseGenerator
from fuzzgate.generate._anchor import DRAW_TEXT, MAX_FIELDS, MAX_POOL, POOL_KEYWORD, Anchors
from fuzzgate.generate._formats import format_checker
from fuzzgate.generate._keywords import build_validator
from fuzzgate.generate.cases import ANCHOR_EVERY, ANCHORED_ORIGIN
from fuzzgate.target.discover import TEMPLATE_EXAMPLES

CONFORM, ADVERSARIAL, MIXED = GenerationMode.CONFORM, GenerationMode.ADVERSARIAL, GenerationMode.MIXED
ZONES = ["America/New_York", "Europe/London", "Etc/UTC", "Asia/Tokyo"]
CONVERT = {
    "type": "object",
    "properties": {
        "source": {"type": "string", "examples": ZONES},
        "time": {"type": "string", "examples": ["10:30"]},
        "target": {"type": "string", "examples": ZONES},
        "note": {"type": "string"},
    },
    "required": ["source", "time", "target", "note"],
}


def stream(schema: dict[str, Any], mode: GenerationMode = CONFORM, count: int = 150, **kw: Any) -> list[Case]:
    made = CaseGenerator(schema, master_seed=3, name="tool", mode=mode, **kw)
    return [made.case(k) for k in range(count)]


def validator(schema: dict[str, Any]) -> Draft202012Validator:
    return Draft202012Validator(schema, format_checker=format_checker(Draft202012Validator))


def test_two_of_three_random_draws_are_anchored_and_valid() -> None:
    made = stream(CONVERT)
    drawn = [c for c in made if c.origin in ("random", ANCHORED_ORIGIN)]
    anchored = [c for c in drawn if c.origin == ANCHORED_ORIGIN]
    # A draw already holding examples everywhere is left as it is (labelled "random").
    assert len(anchored) >= 0.6 * len(drawn) * (ANCHOR_EVERY - 1) / ANCHOR_EVERY
    assert len(anchored) <= len(drawn) * (ANCHOR_EVERY - 1) / ANCHOR_EVERY + 1
    check = validator(CONVERT)
    for case in anchored:
        assert case.schema_valid and check.is_valid(case.arguments), case
        args = case.arguments
        assert args["source"] in ZONES and args["target"] in ZONES and args["time"] == "10:30"


def test_combinations_vary_and_other_fields_keep_their_random_values() -> None:
    anchored = [c.arguments for c in stream(CONVERT) if c.origin == ANCHORED_ORIGIN]
    assert {a["source"] for a in anchored} == set(ZONES)
    assert {a["target"] for a in anchored} == set(ZONES)
    assert len({(a["source"], a["target"]) for a in anchored}) >= 10
    assert len({a["note"] for a in anchored}) >= len(anchored) // 2


def test_wholly_random_draws_remain() -> None:
    drawn = [c for c in stream(CONVERT) if c.origin in ("random", ANCHORED_ORIGIN)]
    wild = [c for c in drawn if c.origin == "random" and c.arguments["source"] not in ZONES]
    # The draws left random hold an example about half the time (Hypothesis samples them too).
    assert len(wild) >= len(drawn) // ANCHOR_EVERY // 3


def test_anchoring_is_a_pure_function_of_the_case_index() -> None:
    forward = stream(CONVERT, MIXED, 120)
    made = CaseGenerator(CONVERT, master_seed=3, name="tool", mode=MIXED)
    assert [made.case(k) for k in reversed(range(120))][::-1] == forward
    other = CaseGenerator(CONVERT, master_seed=4, name="tool", mode=MIXED)
    picks = [c.arguments["source"] for c in forward if c.origin == ANCHORED_ORIGIN]
    assert picks != [c.arguments["source"] for c in map(other.case, range(120)) if c.origin == ANCHORED_ORIGIN]


def test_the_adversarial_sub_stream_is_not_anchored() -> None:
    for mode in (MIXED, ADVERSARIAL):
        for case in stream(CONVERT, mode, 90):
            if mode is ADVERSARIAL or case.index % 3 == 2:
                assert not case.schema_valid and case.origin != ANCHORED_ORIGIN


def test_examples_the_schema_refuses_are_not_used() -> None:
    schema = {
        "type": "object",
        "properties": {"code": {"type": "string", "maxLength": 3, "examples": ["toolong", "ok"]}},
        "required": ["code"],
    }
    anchored = [c for c in stream(schema, count=60) if c.origin == ANCHORED_ORIGIN]
    assert anchored and {c.arguments["code"] for c in anchored} == {"ok"}


def test_examples_that_do_not_fit_together_are_dropped_one_by_one() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string", "examples": ["x"]}, "b": {"type": "string", "examples": ["y"]}},
        "maxProperties": 1,
    }
    check = validator(schema)
    made = stream(schema, count=120)
    assert all(c.schema_valid and check.is_valid(c.arguments) for c in made)
    assert any(c.origin == ANCHORED_ORIGIN and c.arguments in ({"a": "x"}, {"b": "y"}) for c in made)


def test_nested_fields_through_refs_and_all_of_are_anchored() -> None:
    schema = {
        "type": "object",
        "properties": {"where": {"$ref": "#/$defs/Place"}, "count": {"type": "integer"}},
        "required": ["where", "count"],
        "$defs": {
            "Place": {
                "allOf": [
                    {"type": "object", "properties": {"zone": {"type": "string", "examples": ["UTC"]}}},
                    {"properties": {"city": {"type": "string", "examples": ["Paris", "Lima"]}}},
                ],
                "required": ["zone", "city"],
            }
        },
    }
    anchored = [c.arguments for c in stream(schema, count=90) if c.origin == ANCHORED_ORIGIN]
    assert anchored
    assert all(a["where"]["zone"] == "UTC" and a["where"]["city"] in ("Paris", "Lima") for a in anchored)
    assert len({a["count"] for a in anchored}) > 3


def test_template_variables_are_anchored_on_their_hostile_examples() -> None:
    schema = {
        "type": "object",
        "properties": {"path": {"type": "string", "examples": list(TEMPLATE_EXAMPLES)}},
        "required": ["path"],
        "additionalProperties": False,
    }
    anchored = {c.arguments["path"] for c in stream(schema, count=300) if c.origin == ANCHORED_ORIGIN}
    assert "../../../../etc/passwd" in anchored and "x" * 4096 in anchored
    short = {c.arguments["path"] for c in stream(schema, count=300, max_string=64) if c.origin == ANCHORED_ORIGIN}
    assert short and "x" * 4096 not in short and all(len(text) <= 64 for text in short)


def test_a_draw_takes_a_bounded_amount_of_example_text() -> None:
    long = "y" * 60_000
    count = MAX_FIELDS + 10
    schema = {
        "type": "object",
        "properties": {f"f{i}": {"type": "string", "examples": [long]} for i in range(count)},
    }
    anchors = Anchors(schema, build_validator(schema, bounded_patterns=True), max_string=65536, salt="s")
    assert len(anchors.fields) == MAX_FIELDS
    found = anchors.anchor({f"f{i}": "" for i in range(count)}, 0, lambda _: True)
    assert found is not None
    taken = [value for value in found.values() if value == long]
    assert len(taken) == DRAW_TEXT // len(json.dumps(long))
    narrow = Anchors(schema, build_validator(schema, bounded_patterns=True), max_string=100, salt="s")
    assert narrow.fields == ()


def test_each_field_takes_every_value_once_before_any_comes_back() -> None:
    # A tool is never sent the same request twice: a value drawn again is a call lost.
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "examples": ["a0"], POOL_KEYWORD: [f"a{i}" for i in range(1, 50)]},
            "b": {"type": "string", POOL_KEYWORD: [f"b{i}" for i in range(7)]},
        },
    }
    anchors = Anchors(schema, build_validator(schema, bounded_patterns=True), max_string=100, salt="s")
    drawn = [anchors.anchor({"a": "", "b": ""}, draw, lambda _: True) for draw in range(100)]
    assert all(found is not None for found in drawn)
    a = [found["a"] for found in drawn if found is not None]
    b = [found["b"] for found in drawn if found is not None]
    assert len(set(a[:50])) == len(set(a[50:])) == 50
    assert all(len(set(b[start : start + 7])) == 7 for start in range(0, 98, 7))
    # The orders differ from round to round and from field to field: the pairs vary.
    assert a[:50] != a[50:] and len(set(zip(a, b, strict=True))) >= 90


def test_pool_values_go_to_anchored_draws_only() -> None:
    pool = [f"Zone/{i}" for i in range(40)]
    schema = {
        "type": "object",
        "properties": {"zone": {"type": "string", "examples": ["UTC"], POOL_KEYWORD: pool}},
        "required": ["zone"],
    }
    made = stream(schema, MIXED, 600)
    anchored = {c.arguments["zone"] for c in made if c.origin == ANCHORED_ORIGIN}
    assert anchored == {"UTC", *pool}
    # Fixed candidates (tried once each, early) are the examples, never the pool.
    fixed = [c.arguments.get("zone") for c in made if not c.origin.startswith("random")]
    assert not {zone for zone in fixed if isinstance(zone, str)} & set(pool)
    generator = CaseGenerator(schema, master_seed=3, name="tool", mode=MIXED)
    assert [generator.case(k) for k in reversed(range(600))][::-1] == made


def test_pool_values_the_schema_refuses_or_past_the_limits_are_not_used() -> None:
    pool = ["x" * 101, 7, *(f"v{i}" for i in range(MAX_POOL + 20))]
    schema = {"type": "object", "properties": {"v": {"type": "string", "examples": ["e", "v0"], POOL_KEYWORD: pool}}}
    (field,) = Anchors(schema, build_validator(schema, bounded_patterns=True), max_string=100, salt="s").fields
    values = [json.loads(text) for text in field.examples]
    assert values[:3] == ["e", "v0", "v1"] and len(values) == 2 + MAX_POOL
    assert all(isinstance(value, str) and len(value) <= 100 for value in values)
