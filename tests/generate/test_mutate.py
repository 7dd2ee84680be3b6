"""Structured mutation of corpus entries, and the shrink and cleanse candidates of corpus minimize
and cleanse (fuzzgate.generate.mutate)."""

from __future__ import annotations

import copy
import json
import random
from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzgate.generate._locate import Schemas
from fuzzgate.generate.dictionary import Dictionary
from fuzzgate.generate.mutate import OPERATORS, cleanse_candidates, mutate, shrink_candidates
from fuzzgate.learn.feed import _placed

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "count": {"type": "integer", "minimum": 1, "maximum": 10},
        "mode": {"type": "string", "enum": ["slow", "fast", "turbo"]},
        "name": {"type": "string", "minLength": 2, "maxLength": 8},
        "flag": {"type": "boolean"},
        "items": {"type": "array", "items": {"type": "integer"}, "maxItems": 5},
        "filter": {"$ref": "#/$defs/Filter"},
        "note": {"type": "string"},
    },
    "required": ["count", "name"],
    "$defs": {
        "Filter": {
            "type": "object",
            "properties": {"id": {"type": "string"}, "depth": {"type": "number", "exclusiveMaximum": 4}},
            "required": ["id"],
        }
    },
}
ARGUMENTS: dict[str, Any] = {
    "count": 3,
    "mode": "fast",
    "name": "bob",
    "flag": True,
    "items": [1, 2],
    "filter": {"id": "x1", "depth": 2.5},
}
FRESH: dict[str, Any] = {"count": 7, "mode": "slow", "name": "alice", "items": [9], "filter": {"id": "z"}, "note": "hi"}
OTHER: dict[str, Any] = {"count": 9, "name": "carol", "items": [4, 5, 6], "filter": {"id": "o", "depth": 1}}


def offer(arguments: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    return {**arguments, "note": "from the dictionary"}, "dictionary:/properties/note"


def run(seed: int, arguments: dict[str, Any] = ARGUMENTS, schema: dict[str, Any] = SCHEMA, **kw: Any) -> Any:
    return mutate(arguments, schema, random.Random(seed), **kw)


def everything(seed: int) -> tuple[dict[str, Any], str] | None:
    return run(seed, fresh=FRESH, other=OTHER, constants=[("count", 5), ("items", 4)], dictionary=offer)


def op_of(origin: str) -> str:
    assert origin.startswith("mutate:"), origin
    return origin.split(":")[1]


def values_at(results: list[Any], *path: str | int) -> Counter[str]:
    """How often each value (as JSON) was at `path` in the results that have one."""
    found: Counter[str] = Counter()
    for result in results:
        if result is None:
            continue
        value: Any = result[0]
        for key in path:
            held = isinstance(value, dict) and key in value
            held = held or (isinstance(value, list) and isinstance(key, int) and key < len(value))
            if not held:
                break
            value = value[key]
        else:
            found[json.dumps(value)] += 1
    return found


def test_every_operator_is_reached_and_a_seed_gives_one_result() -> None:
    seen: Counter[str] = Counter()
    for seed in range(400):
        first = everything(seed)
        assert first is not None and first == everything(seed), "same rng state, same change"
        seen[op_of(first[1])] += 1
    assert set(seen) == set(OPERATORS)
    assert all(count >= 400 // len(OPERATORS) // 3 for count in seen.values()), seen


def test_the_input_is_never_changed_and_the_result_shares_nothing_with_it() -> None:
    before = copy.deepcopy(ARGUMENTS)
    for seed in range(200):
        result = everything(seed)
        assert result is not None and result[0] != ARGUMENTS
        assert before == ARGUMENTS
        json.loads(json.dumps(result[0]))  # plain JSON
        # Changing the result in place reaches nothing of the input.
        if isinstance(result[0].get("filter"), dict):
            result[0]["filter"]["id"] = "changed"
        if isinstance(result[0].get("items"), list):
            result[0]["items"].append(99)
        assert before == ARGUMENTS


def test_origins_carry_the_schema_pointer_feed_reads() -> None:
    pointers = set()
    for seed in range(300):
        result = everything(seed)
        assert result is not None
        arguments, origin = result
        pointer = origin.split(":", 2)[2]
        pointers.add(pointer)
        if op_of(origin) in ("fresh", "nudge", "splice", "toggle", "add", "dictionary") and "/items" not in pointer:
            # The pointer names the field that changed, as the feed reads a dictionary origin's.
            placed = _placed(f"dictionary:{pointer}", arguments)
            before = _placed(f"dictionary:{pointer}", ARGUMENTS)
            assert placed is not None and before is not None and placed[0] == pointer
            assert placed[1] != before[1], origin
    assert {"/properties/count", "/properties/filter/properties/depth", "/properties/items/items"} <= pointers


def test_nudging_numbers_reaches_bounds_and_named_constants_first() -> None:
    arguments = {"count": 3, "filter": {"id": "x", "depth": 2.5}}
    results = [run(seed, arguments, constants=[("count", 5), ("other", 777), (None, 1000)]) for seed in range(3000)]
    counts = values_at([r for r in results if r and r[1] == "mutate:nudge:/properties/count"], "count")
    for value in (0, 1, 2, 4, 5, 6, 9, 10, 11, -1, 777, 1000):
        assert str(value) in counts, (value, counts)
    named = sum(counts[str(v)] for v in (4, 5, 6))
    assert named > sum(counts.values()) * 0.4, "constants named like the field come first, half the time"
    # An exclusive bound and its neighbours, reached through a $ref.
    depths = values_at([r for r in results if r and r[1].endswith("/filter/properties/depth")], "filter", "depth")
    assert {"4", "3", "5", "3.5", "5.0", "0"} & set(depths) and "4" in depths


def test_nudging_strings() -> None:
    arguments = {"name": "bob", "mode": "fast"}
    results = [run(seed, arguments, constants=[("name", "admin"), (None, "magic")]) for seed in range(2000)]
    names = values_at([r for r in results if r and r[1] == "mutate:nudge:/properties/name"], "name")
    for text in ("", "b", "bobbob", "admin", "magic", "bobbobbo", "bobbobbob"):
        assert json.dumps(text) in names, (text, names)
    # A number compared with the field's name is a length: 6 characters, and 5 and 7.
    sized = [run(seed, {"name": "bob"}, constants=[("name", 6)]) for seed in range(600)]
    lengths = Counter(len(r[0]["name"]) for r in sized if r and r[1] == "mutate:nudge:/properties/name")
    assert {5, 6, 7} <= set(lengths) and lengths[6] > lengths[8]
    modes = values_at([r for r in results if r and r[1] == "mutate:nudge:/properties/mode"], "mode")
    assert {'"slow"', '"turbo"'} <= set(modes), "the enum's neighbours"
    # Valid changes are preferred: a name within 2..8 characters most of the time.
    valid = sum(n for text, n in names.items() if 2 <= len(json.loads(text)) <= 8)
    assert valid > sum(names.values()) * 0.6


def test_arrays_grow_and_shrink_to_their_bounds_and_named_sizes() -> None:
    arguments = {"items": [1, 2]}
    results = [run(seed, arguments, constants=[("items", 3)]) for seed in range(1500)]
    grown = [r for r in results if r and r[1] == "mutate:grow:/properties/items"]
    shrunk = [r for r in results if r and r[1] == "mutate:shrink:/properties/items"]
    assert {len(r[0]["items"]) for r in grown} == {3, 4, 5, 6}, "named size 3 (and 4), maxItems 5 and 5 + 1"
    assert {json.dumps(r[0]["items"]) for r in grown} >= {"[1, 1, 2]", "[1, 2, 2]", "[1, 2, 1]"}
    assert {json.dumps(r[0]["items"]) for r in shrunk} == {"[]", "[1]", "[2]"}
    # An empty array grows with the item schema's value, or the fresh case's elements.
    empty = [run(seed, {"items": []}, fresh={"items": [7, 8]}) for seed in range(200)]
    assert {json.dumps(r[0]["items"]) for r in empty if r and "grow" in r[1]} >= {"[7]", "[7, 8, 7, 8]"}


def test_toggle_add_remove_splice_and_fresh() -> None:
    results = [run(seed, {"count": 3, "name": "bob", "flag": False}, fresh=FRESH, other=OTHER) for seed in range(800)]
    by_origin = {r[1]: r[0] for r in results if r}
    assert by_origin["mutate:toggle:/properties/flag"]["flag"] is True
    assert by_origin["mutate:add:/properties/note"]["note"] == "hi", "an added property comes from the fresh case"
    assert by_origin["mutate:add:/properties/mode"]["mode"] == "slow"
    assert "flag" not in by_origin["mutate:remove:/properties/flag"]
    assert by_origin["mutate:splice:/properties/items"]["items"] == [4, 5, 6]
    assert by_origin["mutate:fresh:/properties/count"]["count"] == 7
    removed = Counter(r[1] for r in results if r and op_of(r[1]) == "remove")
    required = removed["mutate:remove:/properties/count"] + removed["mutate:remove:/properties/name"]
    assert removed["mutate:remove:/properties/flag"] > required, "optional properties go first"
    # Without a fresh case, an added property takes the schema's simplest value.
    alone = [run(seed, {"count": 3, "name": "bob"}) for seed in range(300)]
    added = {r[1]: r[0] for r in alone if r and op_of(r[1]) == "add"}
    assert added["mutate:add:/properties/filter"]["filter"] == {"id": ""}
    assert added["mutate:add:/properties/flag"]["flag"] is False


def test_the_dictionary_callback() -> None:
    seen: list[dict[str, Any]] = []

    def spy(arguments: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
        seen.append(arguments)
        arguments["count"] = -5  # a callback editing its argument must not reach the entry
        return None

    before = copy.deepcopy(ARGUMENTS)
    results = [run(seed, dictionary=spy) for seed in range(50)]
    assert seen and before == ARGUMENTS
    assert all(r is not None and op_of(r[1]) != "dictionary" for r in results)
    # Only the dictionary could change {}: it does, or nothing does.
    assert run(0, {}, {}, dictionary=spy) is None
    assert run(0, {}, {}, dictionary=offer) == ({"note": "from the dictionary"}, "mutate:dictionary:/properties/note")
    # The real thing: a lambda over Dictionary.offer.
    d = Dictionary()
    d.learn_constants("server.py", [("mode", "turbo")])
    tool = {"type": "object", "properties": {"mode": {"type": "string"}}}
    got = [
        mutate({"mode": "x"}, tool, random.Random(seed), dictionary=lambda a: d.offer(tool, a, 0)) for seed in range(40)
    ]
    assert ({"mode": "turbo"}, "mutate:dictionary:/properties/mode") in got


def test_unions_additional_properties_and_missing_schemas() -> None:
    schema = {
        "type": "object",
        "properties": {
            "target": {
                "anyOf": [
                    {"type": "string"},
                    {"type": "object", "properties": {"port": {"type": "integer", "maximum": 100}}},
                ]
            },
            "labels": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
        },
    }
    arguments = {"target": {"port": 80}, "labels": {"a": 1}, "free": {"deep": [1.5]}}
    results = [run(seed, arguments, schema) for seed in range(1500)]
    origins = {r[1] for r in results if r}
    assert "mutate:nudge:/properties/target/properties/port" in origins, "the object branch, by the value's shape"
    assert "mutate:nudge:/properties/labels/additionalProperties" in origins
    assert "mutate:nudge:/properties/free/properties/deep/items" in origins, "no schema: by the value's type"
    alone = [run(seed, {"target": {"port": 80}}, schema) for seed in range(600)]
    ports = values_at([r for r in alone if r and r[1].endswith("/port")], "target", "port")
    assert {"100", "101", "99"} <= set(ports), "bounds of the chosen branch"
    labels = values_at([r for r in results if r and r[1].endswith("/additionalProperties")], "labels", "a")
    assert "-1" in labels and "0" in labels


def test_nothing_to_change_gives_none() -> None:
    assert run(0, {}, {"type": "object"}) is None
    assert run(0, {}, {"type": "object"}, fresh={}, other={}) is None
    assert run(0, {"x": None}, {"type": "object", "properties": {"x": {"type": "null"}}, "required": ["x"]}) in (
        None,
        ({}, "mutate:remove:/properties/x"),
    )


json_scalars = (
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats(allow_nan=False, allow_infinity=False)
)
json_values = st.recursive(
    json_scalars | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)
arguments_strategy = st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), json_values, max_size=4)


def schema_for(arguments: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {key: {} for key in "abcd"},
        "required": [key for key in required if key in arguments],
    }


@settings(max_examples=150, deadline=None)
@given(arguments_strategy, arguments_strategy, st.integers(0, 2**32))
def test_any_input_mutates_safely(arguments: dict[str, Any], fresh: dict[str, Any], seed: int) -> None:
    before = json.dumps(arguments)
    result = mutate(arguments, schema_for(arguments, ["a"]), random.Random(seed), fresh=fresh, other=fresh)
    assert json.dumps(arguments) == before
    if result is not None:
        assert json.dumps(result[0], sort_keys=True) != json.dumps(arguments, sort_keys=True)
        assert op_of(result[1]) in OPERATORS
    assert result == mutate(arguments, schema_for(arguments, ["a"]), random.Random(seed), fresh=fresh, other=fresh)


# --- shrink ------------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(arguments_strategy, st.lists(st.sampled_from("abcd"), unique=True))
def test_shrink_candidates_are_smaller_keep_required_fields_and_are_unique(
    arguments: dict[str, Any], required: list[str]
) -> None:
    schema = schema_for(arguments, required)
    before = json.dumps(arguments)
    found = shrink_candidates(arguments, schema)
    assert json.dumps(arguments) == before
    texts = [json.dumps(candidate, sort_keys=True) for candidate, _ in found]
    assert len(texts) == len(set(texts)), "no duplicates"
    assert json.dumps(arguments, sort_keys=True) not in texts
    sizes = [len(json.dumps(candidate)) for candidate, _ in found]
    assert all(size < len(before) for size in sizes), "strictly smaller"
    assert sizes == sorted(sizes) or _compact_sorted(found), "biggest reduction first"
    for candidate, origin in found:
        assert set(schema["required"]) <= set(candidate), origin
        assert origin.split(":")[0] == "shrink"
    assert found == shrink_candidates(arguments, schema)


def _compact_sorted(found: list[tuple[dict[str, Any], str]]) -> bool:
    sizes = [len(json.dumps(c, sort_keys=True, separators=(",", ":"))) for c, _ in found]
    return sizes == sorted(sizes)


def test_shrink_order_and_kinds() -> None:
    arguments = {"count": 300, "name": "robert", "items": [1, 2, 3, 4], "filter": {"id": "x1", "depth": 2.5}}
    found = shrink_candidates(arguments, SCHEMA)
    origins = [origin for _, origin in found]
    assert origins[0] == "shrink:drop:/properties/filter", "the biggest reduction first"
    assert "shrink:drop:/properties/count" not in origins and "shrink:drop:/properties/name" not in origins
    assert "shrink:drop:/properties/filter/properties/id" not in origins, "required in the nested object too"
    halves = [c["items"] for c, o in found if o == "shrink:items:/properties/items" and len(c["items"]) == 2]
    singles = [c["items"] for c, o in found if o == "shrink:items:/properties/items" and len(c["items"]) == 3]
    assert halves == [[1, 2], [3, 4]] and len(singles) == 4
    first_single = next(i for i, (c, _) in enumerate(found) if c.get("items") == [2, 3, 4])
    assert max(i for i, (c, _) in enumerate(found) if c.get("items") in halves) < first_single
    strings = [c["name"] for c, o in found if o == "shrink:string:/properties/name"]
    assert strings == ["rob", "ro"] or strings == ["ro", "rob"], "minLength 2 kept"
    numbers = [c["count"] for c, o in found if o == "shrink:number:/properties/count"]
    assert set(numbers) == {0, 30}, "300 breaks the maximum: towards 0, and a digit less (150 is no shorter)"
    bounded = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 7}}}
    assert [c.get("n") for c, _ in shrink_candidates({"n": 3000}, bounded)] == [None, 7, 300]
    assert [c.get("n") for c, _ in shrink_candidates({"n": -3000}, {})] == [None, 0, -300]


# --- cleanse -----------------------------------------------------------------------------------------


def changed_locations(a: Any, b: Any, path: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        return [p for key in a for p in changed_locations(a[key], b[key], f"{path}/{key}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [p for i, (x, y) in enumerate(zip(a, b, strict=True)) for p in changed_locations(x, y, f"{path}/{i}")]
    return [] if json.dumps(a) == json.dumps(b) else [path]


def test_cleanse_replaces_one_leaf_with_the_simplest_value_allowed() -> None:
    arguments = {
        "count": 3,
        "mode": "fast",
        "name": "robert",
        "flag": True,
        "items": [1, 0],
        "filter": {"id": "x1", "depth": 2.5},
        "note": "",
    }
    found = cleanse_candidates(arguments, SCHEMA)
    for candidate, _ in found:
        assert len(changed_locations(arguments, candidate)) == 1
    by_origin: dict[str, list[dict[str, Any]]] = {}
    for candidate, origin in found:
        by_origin.setdefault(origin, []).append(candidate)
    assert [o for _, o in found] == sorted(o for _, o in found), "ordered by pointer"
    assert by_origin["cleanse:/properties/count"] == [{**arguments, "count": 1}], "the minimum, not 0"
    assert by_origin["cleanse:/properties/mode"] == [{**arguments, "mode": "slow"}], "the first enum value"
    assert by_origin["cleanse:/properties/name"] == [{**arguments, "name": "ro"}], "minLength"
    assert by_origin["cleanse:/properties/flag"] == [{**arguments, "flag": False}]
    assert by_origin["cleanse:/properties/items"] == [{**arguments, "items": []}]
    assert by_origin["cleanse:/properties/items/items"] == [{**arguments, "items": [0, 0]}], "0 is simplest already"
    assert {json.dumps(c["filter"]) for c in by_origin["cleanse:/properties/filter/properties/id"]} == {
        '{"id": "", "depth": 2.5}'
    }
    assert "cleanse:/properties/note" not in by_origin, "already simplest"


def test_cleanse_keeps_array_and_number_bounds() -> None:
    schema = {
        "type": "object",
        "properties": {
            "pairs": {"type": "array", "minItems": 2, "items": {"type": "integer", "minimum": 5}},
            "neg": {"type": "number", "maximum": -3},
        },
    }
    found = dict((o, c) for c, o in cleanse_candidates({"pairs": [9, 7, 8], "neg": -10.5}, schema))
    assert found["cleanse:/properties/pairs"]["pairs"] == [5, 5]
    assert found["cleanse:/properties/neg"]["neg"] == -3


def test_a_union_is_resolved_by_each_value_even_with_views_kept() -> None:
    # Views that no union shaped are kept per schema object (`Schemas.of`); one a union shaped
    # depends on the value and must be worked out again for each.
    schema = {
        "type": "object",
        "properties": {
            "target": {
                "anyOf": [
                    {"type": "string", "maxLength": 4},
                    {"type": "object", "properties": {"port": {"type": "integer", "maximum": 100}}},
                ]
            },
        },
    }
    schemas = Schemas.of(schema)
    assert Schemas.of(schema) is schemas
    target = schema["properties"]["target"]
    as_text = schemas.view(target, "abc")
    as_object = schemas.view(target, {"port": 1})
    assert as_text.types == {"string"} and as_object.types == {"object"}
    assert schemas.view(target, "abc").types == {"string"}
    # The same, through mutation: the object branch's bound, then the string branch's.
    objects = [run(seed, {"target": {"port": 80}}, schema) for seed in range(300)]
    assert "100" in values_at([r for r in objects if r], "target", "port")
    texts = [r[0].get("target") for r in (run(seed, {"target": "abc"}, schema) for seed in range(300)) if r]
    assert any(isinstance(text, str) and len(text) == 4 for text in texts), "the string branch's maxLength"
