"""Values from descriptions: what `enrich` reads, what it refuses, and that the generator tries it early."""

from __future__ import annotations

import copy
import json
import re
import zoneinfo
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from fuzzgate.config.model import Config, GenerationMode, TargetConfig, TargetKind
from fuzzgate.generate import CaseGenerator
from fuzzgate.generate._anchor import MAX_POOL, POOL_KEYWORD
from fuzzgate.generate._formats import format_checker
from fuzzgate.generate._model import canonical_json
from fuzzgate.generate._pools import TIMEZONES
from fuzzgate.generate.hints import MAX_EXAMPLES, enrich
from fuzzgate.plan.selection import SelectionSettings, select
from fuzzgate.target.discover import Inventory, ToolInfo

TIMEZONE = {
    "type": "object",
    "properties": {"timezone": {"type": "string", "description": "IANA timezone name (e.g. 'America/New_York')"}},
    "required": ["timezone"],
}


def examples(schema: dict[str, Any], description: str, *path: str) -> list[Any]:
    node: Any = enrich(schema, description)
    for key in path:
        node = node[key]
    found: list[Any] = node.get("examples", [])
    return found


def one(prop: dict[str, Any], description: str = "") -> list[Any]:
    return examples({"type": "object", "properties": {"p": prop}}, description, "properties", "p")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Zone, e.g. 'Europe/Paris'", ["Europe/Paris"]),
        ('Zone, e.g. "Europe/Paris"', ["Europe/Paris"]),
        ("Zone, e.g. Europe/Paris", ["Europe/Paris"]),
        ("A branch name, for example main", ["main"]),
        ("Use `HEAD~1` for the previous commit", ["HEAD~1"]),
        ("A colour such as red, green and blue", ["red", "green", "blue"]),
        ("The file to read, like /path/to/file.txt", ["/path/to/file.txt"]),
        ("A directory relative to the root (./src)", ["./src"]),
        ("Output format, one of: csv, json, text", ["csv", "json", "text"]),
        ("Output format: either yaml or toml.", ["yaml", "toml"]),
        ("Output format (json|xml)", ["json", "xml"]),
        ("A page at https://example.com/docs.", ["https://example.com/docs"]),
    ],
)
def test_values_named_in_a_property_description_become_examples(text: str, expected: list[Any]) -> None:
    assert one({"type": "string", "description": text})[: len(expected)] == expected


@pytest.mark.parametrize(
    ("text", "fmt", "expected"),
    [
        ("When it happened, as ISO 8601", "date-time", "2024-01-15T10:30:00Z"),
        ("The day, YYYY-MM-DD", "date", "2024-01-15"),
        ("Start time (HH:MM:SS)", "time", "10:30:00Z"),
    ],
)
def test_formats_named_in_words_give_real_values(text: str, fmt: str, expected: str) -> None:
    # Without a format the rendered value itself is offered; with one, only what the format accepts.
    assert one({"type": "string", "description": text})[0] in (expected, expected.removesuffix("Z"))
    with_format = one({"type": "string", "format": fmt, "description": text})
    checker = format_checker(Draft202012Validator)
    assert with_format and all(checker.conforms(value, fmt) for value in with_format)


def test_iana_timezones_are_real_zone_names() -> None:
    assert one({"type": "string", "description": "An IANA time zone"}) == [
        "America/New_York",
        "Europe/London",
        "Asia/Tokyo",
        "UTC",
    ]


def test_clock_times_read_minutes_after_hours() -> None:
    assert one({"type": "string", "description": "When to start, HH:MM"}) == ["10:30"]


def test_numbers_go_to_number_fields_within_their_bounds() -> None:
    prop = {"type": "integer", "minimum": 1, "maximum": 100, "description": "Max results (default 20, up to 500)"}
    assert one(prop) == [20]
    assert one({"type": "number", "description": "A ratio such as 0.25 or 1.5"}) == [0.25, 1.5]
    assert one({"type": "string", "description": "Max results (default 20)"}) == []


def test_only_values_the_property_schema_accepts_are_added() -> None:
    prop = {"type": "string", "pattern": "^[a-z]+$", "maxLength": 5, "description": "e.g. 'abc', 'ABC', 'abcdefg'"}
    assert one(prop) == ["abc"]
    assert one({"type": "string", "format": "email", "description": "e.g. 'nobody', 'a@example.com'"}) == [
        "a@example.com"
    ]
    # Enumerated fields already say their values.
    assert one({"type": "string", "enum": ["x", "y"], "description": "e.g. 'x'"}) == []


def test_existing_examples_stay_first_values_are_deduplicated_and_capped() -> None:
    listed = ", ".join(f"'v{i}'" for i in range(20))
    prop = {"type": "string", "examples": ["v3", "own"], "description": f"e.g. {listed}, 'own', 'v1'"}
    found = one(prop)
    assert found[:2] == ["v3", "own"]
    assert len(found) == MAX_EXAMPLES == len({json.dumps(v) for v in found})
    assert found[2:] == ["v0", "v1", "v2", "v4", "v5", "v6"]
    full = {"type": "string", "examples": [f"e{i}" for i in range(MAX_EXAMPLES)], "description": "e.g. 'new'"}
    assert one(full) == full["examples"]


def test_apostrophes_are_not_quotes_and_property_names_are_not_values() -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The user's name; don't pass the `other` field's value"},
            "other": {"type": "string"},
        },
    }
    assert examples(schema, "", "properties", "name") == []


def test_the_tool_description_names_values_after_the_property_name() -> None:
    schema = {
        "type": "object",
        "properties": {"timezone": {"type": "string"}, "format": {"type": "string"}, "path": {"type": "string"}},
    }
    description = (
        "Convert a time.\n"
        "Args:\n"
        "    timezone: target zone, e.g. 'Europe/Paris'. format: one of json, text\n"
        "    path: where to write (./out/result.txt)\n"
        "Nothing else, e.g. 'unrelated'."
    )
    enriched = enrich(schema, description)["properties"]
    # The named value first; the name `timezone` adds real zones after it.
    assert enriched["timezone"]["examples"] == [
        "Europe/Paris",
        "America/New_York",
        "Europe/London",
        "Asia/Tokyo",
        "UTC",
    ]
    assert enriched["format"]["examples"] == ["json", "text"]
    assert enriched["path"]["examples"] == ["./out/result.txt"]


def test_a_name_inside_a_path_is_not_a_mention() -> None:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    assert examples(schema, "Reads /srv/path/to/x.txt for you.", "properties", "path") == []


def test_nested_properties_and_array_items_are_enriched() -> None:
    schema = {
        "type": "object",
        "properties": {
            "filter": {
                "type": "object",
                "properties": {"field": {"type": "string", "description": "e.g. 'price'"}},
            },
            "tags": {"type": "array", "items": {"type": "string"}, "description": "Tags such as urgent or home"},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "e.g. 'call back'"},
            "values": {"type": "object", "description": 'Placeholders, e.g. {"city": "Lyon"}'},
        },
    }
    enriched = enrich(schema, "")["properties"]
    assert enriched["filter"]["properties"]["field"]["examples"] == ["price"]
    assert enriched["tags"]["items"]["examples"] == ["urgent", "home"]
    assert "examples" not in enriched["tags"]
    assert enriched["note"]["examples"] == ["call back"]
    assert enriched["values"]["examples"] == [{"city": "Lyon"}]


def test_a_referenced_definition_is_validated_where_it_is_used() -> None:
    schema = {
        "type": "object",
        "properties": {"code": {"$ref": "#/$defs/Code", "description": "e.g. 'AB', 'TOOLONG'"}},
        "$defs": {"Code": {"type": "string", "maxLength": 3}},
    }
    assert examples(schema, "", "properties", "code") == ["AB"]


def test_enrich_is_pure_and_leaves_its_input_alone() -> None:
    schema = copy.deepcopy(TIMEZONE)
    first = enrich(schema, "timezone: e.g. 'Europe/Paris'")
    assert schema == TIMEZONE
    assert first == enrich(copy.deepcopy(TIMEZONE), "timezone: e.g. 'Europe/Paris'")
    assert first["properties"]["timezone"]["examples"][:2] == ["America/New_York", "Europe/Paris"]


def test_an_invalid_schema_comes_back_unchanged() -> None:
    broken = {"type": "object", "properties": {"n": {"type": "integer", "minimum": "zero", "description": "e.g. 3"}}}
    assert enrich(broken, "") == broken


@given(description=st.text(max_size=300), text=st.text(max_size=300))
def test_enrich_never_fails_and_adds_only_valid_values(description: str, text: str) -> None:
    schema = {
        "type": "object",
        "properties": {
            "s": {"type": "string", "maxLength": 12, "description": text},
            "n": {"type": "integer", "minimum": 0, "description": text},
        },
    }
    enriched = enrich(schema, description)
    for name in ("s", "n"):
        validator = Draft202012Validator(schema["properties"][name])
        added = enriched["properties"][name].get("examples", [])
        assert len(added) <= MAX_EXAMPLES
        assert all(validator.is_valid(value) for value in added)


def test_a_description_value_is_among_a_tools_first_cases() -> None:
    enriched = CaseGenerator(enrich(TIMEZONE, ""), master_seed=3, name="convert_time", mode=GenerationMode.MIXED)
    plain = CaseGenerator(TIMEZONE, master_seed=3, name="convert_time", mode=GenerationMode.MIXED)

    def early(generator: CaseGenerator) -> list[Any]:
        return [generator.case(k).arguments.get("timezone") for k in range(6)]

    assert "America/New_York" in early(enriched)
    assert "America/New_York" not in early(plain)


def test_enriched_cases_are_judged_on_the_tools_own_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "day": {"type": "string", "format": "date", "description": "YYYY-MM-DD, e.g. '2024-13-45'"},
            "n": {"type": "integer", "maximum": 10, "description": "e.g. 5 or 50"},
        },
        "required": ["day", "n"],
    }
    generator = CaseGenerator(enrich(schema, ""), master_seed=1, name="t", mode=GenerationMode.MIXED)
    validator = Draft202012Validator(schema, format_checker=format_checker(Draft202012Validator))
    made = [generator.case(k) for k in range(40)]
    assert made[0].arguments == {"day": "2024-01-15", "n": 5}
    for case in made:
        assert case.schema_valid == validator.is_valid(case.arguments), case


def test_the_plan_builds_generators_from_enriched_schemas() -> None:
    tool = ToolInfo(
        name="convert_time",
        description="Convert a time. timezone: the zone to convert to, e.g. 'Asia/Kolkata'.",
        input_schema={"type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"]},
        output_schema=None,
        destructive_hint=None,
        read_only_hint=True,
    )
    config = Config(target=TargetConfig(kind=TargetKind.STDIO, command="x"))
    (plan,) = select(Inventory((tool,), (), (), ()), SelectionSettings.of(config), 7).plans
    first = plan.case(0)
    assert first is not None and first.arguments == {"timezone": "Asia/Kolkata"}


def test_a_format_the_property_names_is_not_joined_by_one_the_tool_description_names_after_it() -> None:
    # mcp-server-time's convert_time: "time" in "Convert time between timezones" is the word, not the field.
    schema = {
        "type": "object",
        "properties": {
            "time": {"type": "string", "description": "Time to convert in 24-hour format (HH:MM)"},
            "when": {"type": "string"},
        },
    }
    enriched = enrich(schema, "Convert time between timezones. when: an ISO 8601 date")["properties"]
    assert enriched["time"]["examples"] == ["10:30"]
    assert "2024-01-15" in enriched["when"]["examples"]


def pooled(prop: dict[str, Any], description: str = "", name: str = "p") -> tuple[list[Any], list[Any]]:
    """(examples, pool) of one property named `name`."""
    node = enrich({"type": "object", "properties": {name: prop}}, description)["properties"][name]
    return node.get("examples", []), node.get(POOL_KEYWORD, [])


def test_a_recognised_format_keeps_few_examples_and_hands_the_rest_of_its_pool_to_anchored_draws() -> None:
    found, pool = pooled({"type": "string", "description": "An IANA time zone"})
    assert found == list(TIMEZONES[:4])
    assert pool == list(TIMEZONES[4:]) and len(pool) <= MAX_POOL
    for text, first in (("ISO 4217 currency code", "USD"), ("a BCP 47 locale", "en-US"), ("ISO 639", "en")):
        found, pool = pooled({"type": "string", "description": text})
        assert found[0] == first and len(found) <= 2 and len(pool) >= 5
        assert not set(found) & set(pool)


def test_the_timezone_pool_is_fixed_and_holds_real_zone_names() -> None:
    # Written out, not read from this machine's tzdata: the same seed gives the same requests anywhere.
    assert 60 <= len(TIMEZONES) <= 100 == len(set(TIMEZONES))
    assert set(TIMEZONES) <= zoneinfo.available_timezones()


@pytest.mark.parametrize("name", ["timezone", "tz", "source_timezone", "targetTimeZone", "time_zone", "timezones"])
def test_a_timezone_name_gives_zones_without_a_description(name: str) -> None:
    found, pool = pooled({"type": "string"}, name=name)
    assert found == list(TIMEZONES[:4]) and pool == list(TIMEZONES[4:])


@pytest.mark.parametrize(
    ("name", "first"), [("locale", "en-US"), ("currency_code", "USD"), ("lang", "en"), ("country_code", "US")]
)
def test_other_names_with_one_meaning_give_their_pools(name: str, first: str) -> None:
    found, pool = pooled({"type": "string"}, name=name)
    assert found[0] == first and pool


@pytest.mark.parametrize("name", ["time", "timestamp", "language", "country", "zone", "tzinfo_path"])
def test_other_names_give_nothing(name: str) -> None:
    assert pooled({"type": "string"}, name=name) == ([], [])


def test_a_format_the_own_description_names_wins_over_the_name() -> None:
    found, pool = pooled({"type": "string", "description": "UTC offset as HH:MM"}, name="timezone")
    assert found == ["10:30"] and not set(pool) & set(TIMEZONES)


def test_written_date_formats_get_a_handful_of_distinct_real_values() -> None:
    found, pool = pooled({"type": "string", "description": "Time to convert in 24-hour format (HH:MM)"})
    assert found == ["10:30"]
    assert len(pool) >= 5 == len(pool) - len(set(pool)) + 5
    assert all(re.fullmatch(r"([01]\d|2[0-3]):[0-5]\d", value) for value in pool)
    checker = format_checker(Draft202012Validator)
    found, pool = pooled({"type": "string", "format": "date", "description": "The day, YYYY-MM-DD"})
    assert found == ["2024-01-15"] and len(pool) >= 5
    assert all(checker.conforms(value, "date") for value in pool)
    found, pool = pooled({"type": "string", "format": "time", "description": "Start time (HH:MM:SS)"})
    assert found == ["10:30:00Z"] and len(pool) >= 5
    assert all(checker.conforms(value, "time") for value in pool)


def test_values_past_the_example_cap_go_to_the_pool() -> None:
    listed = ", ".join(f"'v{i}'" for i in range(20))
    found, pool = pooled({"type": "string", "description": f"e.g. {listed}"})
    assert found == [f"v{i}" for i in range(MAX_EXAMPLES)]
    assert pool == [f"v{i}" for i in range(MAX_EXAMPLES, 20)]


def test_only_pool_values_the_property_schema_accepts_are_kept() -> None:
    found, pool = pooled({"type": "string", "pattern": "^Europe/", "description": "IANA zone"})
    assert found == ["Europe/London"]
    assert pool and all(value.startswith("Europe/") for value in pool)
    assert pooled({"type": "integer", "description": "IANA zone"}) == ([], [])


def test_the_pool_changes_neither_validity_nor_the_schemas_hash() -> None:
    schema = {
        "type": "object",
        "properties": {"timezone": {"type": "string", "maxLength": 16}, "n": {"type": "integer"}},
        "required": ["timezone"],
        "additionalProperties": False,
    }
    enriched = enrich(schema, "")
    assert POOL_KEYWORD in enriched["properties"]["timezone"]
    assert canonical_json(enriched) == canonical_json(enrich(copy.deepcopy(schema), ""))
    plain, annotated = (
        Draft202012Validator(s, format_checker=format_checker(Draft202012Validator)) for s in (schema, enriched)
    )
    Draft202012Validator.check_schema(enriched)
    for value in (
        {"timezone": "UTC"},
        {"timezone": "Pacific/Kiritimati"},
        {"timezone": "x" * 17},
        {},
        {"n": 1},
        {"timezone": 3},
    ):
        assert plain.is_valid(value) == annotated.is_valid(value), value
    # The generator takes the annotation as one (no UnsupportedSchema) and never offers its values as
    # fixed candidates: those are tried once each, early, and stay the few examples.
    generator = CaseGenerator(enriched, master_seed=2, name="t", mode=GenerationMode.MIXED)
    pool_only = set(enriched["properties"]["timezone"][POOL_KEYWORD])
    for case in map(generator.case, range(300)):
        assert case.schema_valid == plain.is_valid(case.arguments)
        # Random draws may hold one: Hypothesis mixes in constants of the package's own modules.
        if not case.origin.startswith("random"):
            zone = case.arguments.get("timezone")
            assert not isinstance(zone, str) or zone not in pool_only, case
