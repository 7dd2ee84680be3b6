"""Cost probes: which fields get them, what goes in, that the schema must accept it, and that a tool
gets them without containment."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from fuzzgate.config.model import Config, TargetConfig, TargetKind
from fuzzgate.generate.cost import DEEP_PARENTHESES, HUGE_COUNT, LONG_INPUT, Kind, cost_probes, kinds
from fuzzgate.generate.probes import PROBE_EVERY, PROBES_AFTER, WAIT_CASES, Probe, ProbeCase, ProbeClass
from fuzzgate.plan.selection import SelectionSettings, select
from fuzzgate.target.discover import Inventory, ToolInfo


def props(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


STRING = {"type": "string"}


def labels(cases: list[ProbeCase], field: str | None = None) -> list[str]:
    return [case.probe.label for case in cases if field is None or case.probe.field == field]


@pytest.mark.parametrize(
    ("name", "description", "expected"),
    [
        ("expression", "", [Kind.EXPRESSION]),
        ("mathFormula", "", [Kind.EXPRESSION]),
        ("input", "An arithmetic expression to evaluate", [Kind.EXPRESSION]),
        ("regex", "", [Kind.REGEX]),
        ("needle", "A regular expression to search for", [Kind.REGEX]),
        ("sql_query", "", [Kind.QUERY]),
        ("glob", "", [Kind.GLOB]),
        ("file_pattern", "", [Kind.REGEX, Kind.GLOB]),
        ("repeat_count", "", [Kind.SIZE]),
        ("name", "Where the files go, filtered by range and times", []),
        ("path", "", []),
    ],
)
def test_fields_are_read_by_their_names_and_descriptions(name: str, description: str, expected: list[Kind]) -> None:
    assert kinds(name, description) == expected


def test_an_expression_field_gets_costly_expressions_in_a_copy_of_the_base() -> None:
    base = {"expression": "1+1", "precision": 2}
    schema = props(expression=STRING, precision={"type": "integer"})
    cases = cost_probes("calc", schema, base)
    assert labels(cases) == [
        "power tower",
        "tall power tower",
        "caret power tower",
        "huge power",
        "huge factorial",
        "sum of a huge range",
        "huge repeat",
        "deep parentheses",
    ]
    values = [case.arguments["expression"] for case in cases]
    assert values[:5] == ["9**9**9", "10**10**10**10", "9^9^9", "2**99999999", "factorial(100000)"]
    assert values[-1] == "(" * DEEP_PARENTHESES + "1" + ")" * DEEP_PARENTHESES
    for case in cases:
        assert case.arguments == {**base, "expression": case.probe.value}
        assert case.probe.probe_class is ProbeClass.COST and case.probe.marker is None
        assert case.origin == f"probe:cost:/properties/expression={case.probe.label}"


def test_labels_never_hold_the_payload() -> None:
    schema = props(
        formula=STRING, regex=STRING, text=STRING, query=STRING, glob=STRING, size=STRING, count={"type": "integer"}
    )
    cases = cost_probes("t", schema, {})
    assert len(cases) > 15
    for case in cases:
        value = str(case.probe.value)
        assert value not in case.origin
        assert not any(mark in case.probe.label for mark in ("**", "(", "*", "{", "^", "10"))


def test_a_regex_is_matched_against_a_long_input_when_the_tool_takes_one() -> None:
    cases = cost_probes("grep", props(pattern=STRING, mode={"enum": ["a"]}, text=STRING), {"mode": "a"})
    regex = [case for case in cases if "quantifier" in case.probe.label]
    assert [case.probe.label for case in regex] == [
        "nested quantifier regex on a long input",
        "overlapping quantifier regex on a long input",
    ]
    assert regex[0].arguments == {"mode": "a", "pattern": "(a+)+$", "text": "a" * LONG_INPUT + "!"}
    assert regex[1].arguments["text"] == "x" * LONG_INPUT
    alone = cost_probes("grep", props(regex=STRING), {})
    assert [case.arguments for case in alone] == [{"regex": "(a+)+$"}, {"regex": "(x+x+)+y"}]


def test_counts_get_a_huge_value_only_where_the_schema_allows_it() -> None:
    schema = props(
        count={"type": "integer"},
        maxDepth={"type": "integer", "minimum": 1},
        limit={"type": "integer", "maximum": 1000},
        n={"anyOf": [{"type": "number"}, {"type": "null"}]},
        price={"type": "number"},
    )
    cases = cost_probes("t", schema, {})
    assert {case.probe.field: case.arguments for case in cases} == {
        "count": {"count": HUGE_COUNT},
        "maxDepth": {"maxDepth": HUGE_COUNT},
        "n": {"n": HUGE_COUNT},
    }


def test_only_values_the_schema_accepts_are_sent() -> None:
    schema = props(expr={"type": "string", "maxLength": 20, "pattern": r"^[0-9*^()+-]+$"})
    cases = cost_probes("calc", schema, {})
    assert labels(cases) == ["power tower", "tall power tower", "caret power tower", "huge power"]
    validator = Draft202012Validator(schema)
    assert all(validator.is_valid(case.arguments) for case in cases)


def test_a_tools_own_words_count_when_it_has_one_free_string_field() -> None:
    description = "Evaluate a math expression and return the result."
    one = cost_probes("calculate", props(input=STRING, digits={"type": "integer"}), {}, description)
    assert labels(one, "input")[:1] == ["power tower"]
    two = cost_probes("calculate", props(input=STRING, note=STRING), {}, description)
    assert two == []


def test_each_probe_goes_once_per_field() -> None:
    # "query" and "pattern" share the nested quantifier regex; "pattern" is also a glob for files.
    schema = props(query=STRING, file_pattern=STRING)
    cases = cost_probes("search", schema, {})
    for field in ("query", "file_pattern"):
        found = labels(cases, field)
        assert len(found) == len(set(found))
    assert "recursive glob" in labels(cases, "file_pattern")
    assert "recursive SQL" in labels(cases, "query")


def test_cost_probes_are_deterministic() -> None:
    schema = props(expression=STRING, regex=STRING, input=STRING, count={"type": "integer"})
    assert cost_probes("t", schema, {"input": "x"}) == cost_probes("t", dict(schema), {"input": "x"})


def test_a_schema_the_validator_refuses_gets_no_probes() -> None:
    assert cost_probes("t", props(expr={"type": "strang"}), {}) == []
    assert cost_probes("t", {"type": "object"}, {}) == []


def _tool(description: str, schema: dict[str, Any]) -> ToolInfo:
    return ToolInfo("calc", description, schema, None, None, True)


def _origins(plan: Any, count: int) -> list[str]:
    """The origins of a tool's first `count` cases, paced as a tool with plenty of cases to come is
    (a probe every `PROBE_EVERY`-th case, after waiting `WAIT_CASES` for an accepted call)."""
    plan.set_pace(1000.0)
    made = [plan.case(k) for k in range(count)]
    assert all(case is not None for case in made)
    return [case.origin for case in made if case is not None]


def test_a_tool_gets_its_cost_probes_without_containment() -> None:
    tool = _tool("A calculator.", {**props(expression=STRING), "required": ["expression"]})
    config = Config(target=TargetConfig(kind=TargetKind.STDIO, command="x"))
    (plan,) = select(Inventory((tool,), (), (), ()), SelectionSettings.of(config), 3).plans
    origins = _origins(plan, PROBES_AFTER + WAIT_CASES + PROBE_EVERY * 8)
    probes = [origin for origin in origins if origin.startswith("probe:")]
    assert probes[0] == "probe:cost:/properties/expression=power tower"
    assert len(probes) == 8 and all(origin.startswith("probe:cost:") for origin in probes)


def test_cost_probes_go_before_the_containment_probes() -> None:
    """A few cost probes go first, so a hang on `9**9**9` shows within a short budget."""
    tool = _tool("A calculator.", {**props(expression=STRING), "required": ["expression"]})
    scope = Probe("calc", "expression", ProbeClass.SCOPE, "outside directory", "@@FUZZGATE_OUTSIDE@@")

    def source(info: ToolInfo, base: dict[str, Any]) -> list[ProbeCase]:
        return [ProbeCase({**base, "expression": scope.value}, scope)]

    config = Config(target=TargetConfig(kind=TargetKind.STDIO, command="x"))
    (plan,) = select(Inventory((tool,), (), (), ()), SelectionSettings.of(config), 3, probe_source=source).plans
    first = PROBES_AFTER + WAIT_CASES
    probes = [origin for origin in _origins(plan, first + PROBE_EVERY * 3) if origin.startswith("probe:")]
    assert probes == [
        "probe:cost:/properties/expression=power tower",
        "probe:cost:/properties/expression=tall power tower",
        "probe:cost:/properties/expression=caret power tower",
    ]
    everything = [origin for origin in _origins(plan, first + PROBE_EVERY * 12) if origin.startswith("probe:")]
    assert everything[-1] == "probe:scope:/properties/expression=outside directory"
