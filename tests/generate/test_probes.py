"""Probes: which fields get them, in which order, where they sit among a tool's cases (paced by
the cases the tool can expect), the base they ride on, the file names only each can create, and the
placeholder's substitution."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from fuzzgate.generate.probes import (
    ESCAPE_PREFIX,
    INJECTION_PREFIX,
    OUTSIDE,
    PROBE_EVERY,
    PROBE_SHARE,
    PROBES_AFTER,
    WAIT_CASES,
    Pace,
    ProbeClass,
    ProbeSlots,
    pace,
    place,
    probe_cases,
    ride,
    string_fields,
    substitute,
)
from fuzzgate.sandbox.boundary import SIBLING_SUFFIXES, Boundary

CANARIES = ["fuzzgate-canary.txt", ".env"]
SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "ref": {"type": ["string", "null"]},
        "url": {"type": "string", "format": "uri"},
        "mode": {"type": "string", "enum": ["r", "w"]},
        "kind": {"type": "string", "const": "note"},
        "when": {"type": "string", "format": "date-time"},
        "day": {"type": "string", "format": "date"},
        "mail": {"type": "string", "format": "email"},
        "id": {"type": "string", "format": "uuid"},
        "count": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "any": {},
        "odd": True,
    },
}


def _slots(probes: int, cases: int, paced: Pace | None) -> list[tuple[bool, int]]:
    slots = ProbeSlots(probes)
    out = []
    for index in range(cases):
        if index == PROBES_AFTER:
            slots.pace = paced
        out.append(slots.slot(index))
    return out


@given(probes=st.integers(0, 40), cases=st.integers(0, 120), expected=st.none() | st.floats(0, 500))
def test_probe_slots_are_a_bijection_onto_probes_then_regular_cases(
    probes: int, cases: int, expected: float | None
) -> None:
    slots = _slots(probes, cases, pace(probes, expected))
    probe_positions = [position for is_probe, position in slots if is_probe]
    regular_positions = [position for is_probe, position in slots if not is_probe]
    # Each probe once, in order, and the regular cases numbered without a gap or a repeat.
    assert probe_positions == list(range(len(probe_positions)))
    assert regular_positions == list(range(cases - len(probe_positions)))
    assert len(set(slots)) == cases
    if cases:
        assert slots[0] == (False, 0), "the first case stays the tool's first regular one"
    # Paced, every probe is sent within the first probes * PROBE_EVERY + WAIT_CASES cases after the first.
    bound = PROBES_AFTER + PROBE_EVERY * probes + WAIT_CASES
    if cases >= bound:
        assert len(probe_positions) == probes


@given(probes=st.integers(1, 40), expected=st.floats(0, 1000))
def test_all_probes_fit_within_their_share_of_the_expected_cases_or_go_back_to_back(
    probes: int, expected: float
) -> None:
    paced = pace(probes, expected)
    assert 1 <= paced.every <= PROBE_EVERY
    assert 0 <= paced.wait <= WAIT_CASES
    if paced.every > 1:
        assert paced.every * probes <= PROBE_SHARE * expected
    # When the regular cases after the probes would leave some unsent, none waits and none is spaced.
    if expected < PROBES_AFTER + probes:
        assert paced == Pace(1, 0)
    end = PROBES_AFTER + paced.every * probes + paced.wait
    assert sum(is_probe for is_probe, _ in _slots(probes, end, paced)) == probes


def test_a_slow_tool_sends_its_probes_first_and_a_fast_one_spreads_them() -> None:
    slow = _slots(10, 12, pace(10, 8.0))
    assert [is_probe for is_probe, _ in slow] == [False] + [True] * 10 + [False]
    fast = _slots(3, 14, pace(3, 1000.0))
    # Two more regular cases first (a call the tool accepts is likely among them), then every third.
    assert [is_probe for is_probe, _ in fast] == [False] * 3 + [True, False, False] * 3 + [False] * 2
    # Not known how many cases the tool gets (no call returned yet): probes first.
    assert pace(5, None) == Pace(1, 0)


def test_a_slot_asked_for_again_is_the_same_and_unpaced_cases_are_regular() -> None:
    slots = ProbeSlots(4)
    assert [slots.slot(i) for i in range(3)] == [(False, 0), (False, 1), (False, 2)]
    slots.pace = Pace(1, 0)
    assert slots.slot(5) == (True, 2)
    assert slots.slot(3) == (True, 0), "decided once, in case order"
    assert slots.slot(5) == (True, 2)
    early = ProbeSlots(4, Pace(1, 0))
    assert early.slot(0) == (False, 0), "a tool's first case is never a probe"


def test_a_probe_rides_on_its_base_changing_only_the_fields_it_sets() -> None:
    (first, *_) = probe_cases("t", {"properties": {"target": {"type": "string"}}}, {}, "k", CANARIES)
    assert first.arguments == {"target": first.probe.value}
    base = {"repo": "/srv/project", "target": "README.md"}
    assert ride(first, base) == {"repo": "/srv/project", "target": first.probe.value}
    assert base == {"repo": "/srv/project", "target": "README.md"}


def test_probes_come_in_rounds_every_class_to_every_field_first() -> None:
    schema = {"properties": {"repo": {"type": "string"}, "target": {"type": "string"}}}
    cases = probe_cases("t", schema, {}, "k", CANARIES)
    classes = list(dict.fromkeys(case.probe.probe_class for case in cases))
    first_round = [(case.probe.probe_class, case.probe.field) for case in cases[: 2 * len(classes)]]
    assert first_round == [(c, f) for c in classes for f in ("repo", "target")]
    assert {ProbeClass.SCOPE, ProbeClass.OPTION, ProbeClass.SHELL} <= set(classes)
    # Each field still gets each of its probes once, in the order of its class.
    for name in ("repo", "target"):
        mine = [case for case in cases if case.probe.field == name]
        alone = probe_cases("t", {"properties": {name: {"type": "string"}}}, {}, "k", CANARIES)
        assert sorted(c.origin for c in mine) == sorted(c.origin for c in alone)
        for probe_class in classes:
            assert [c.origin for c in mine if c.probe.probe_class is probe_class] == [
                c.origin for c in alone if c.probe.probe_class is probe_class
            ]


def test_probes_go_only_to_free_string_fields() -> None:
    assert string_fields(SCHEMA) == ["path", "ref", "url"]
    assert string_fields({"type": "object"}) == []
    assert string_fields({"properties": ["path"]}) == []
    fields = {case.probe.field for case in probe_cases("t", SCHEMA, {}, "token", CANARIES)}
    assert fields == {"path", "ref", "url"}


def test_each_probe_case_is_the_base_case_with_one_field_replaced() -> None:
    base = {"path": "notes/a.md", "count": 3}
    cases = probe_cases("write_note", SCHEMA, base, "token", CANARIES)
    for case in cases:
        assert case.arguments == {**base, case.probe.field: case.probe.value}
        assert case.origin == f"probe:{case.probe.probe_class.value}:/properties/{case.probe.field}={case.probe.label}"
    assert base == {"path": "notes/a.md", "count": 3}
    path_classes = [case.probe.probe_class for case in cases if case.probe.field == "path"]
    assert {ProbeClass.SCOPE, ProbeClass.OPTION, ProbeClass.SHELL} <= set(path_classes)


def test_every_canary_is_probed() -> None:
    values = {
        case.probe.value for case in probe_cases("t", {"properties": {"p": {"type": "string"}}}, {}, "k", CANARIES)
    }
    assert {f"{OUTSIDE}/fuzzgate-canary.txt", f"{OUTSIDE}/.env", "../../fuzzgate-canary.txt", OUTSIDE} <= values


def _markers(tool: str, token: str = "token", schema: dict[str, Any] = SCHEMA) -> dict[tuple[str, str], str]:
    return {
        (case.probe.field, case.probe.label): case.probe.marker
        for case in probe_cases(tool, schema, {}, token, CANARIES)
        if case.probe.marker is not None
    }


def test_probe_file_names_are_deterministic_and_name_one_probe() -> None:
    first = _markers("write_note")
    assert first == _markers("write_note")
    # Distinct within a tool (across fields and probes), across tools, and across runs' tokens.
    assert len(set(first.values())) == len(first)
    other_tool = _markers("read_note")
    other_token = _markers("write_note", token="another")
    assert not set(first.values()) & set(other_tool.values())
    assert not set(first.values()) & set(other_token.values())
    # The same (tool, field, label) under a schema with more fields keeps its name.
    assert _markers("write_note", schema={"properties": {"path": {"type": "string"}}}).items() <= first.items()


def test_a_probe_file_name_is_in_its_value_with_the_prefix_of_its_class() -> None:
    for case in probe_cases("t", SCHEMA, {}, "token", CANARIES):
        probe = case.probe
        if probe.marker is None:
            assert probe.probe_class is ProbeClass.SCOPE
            continue
        assert probe.marker in probe.value
        prefix = ESCAPE_PREFIX if probe.probe_class is ProbeClass.SCOPE else INJECTION_PREFIX
        assert probe.marker.startswith(prefix)
        assert probe.marker not in probe.label


def test_substitute_recurses_into_keys_lists_and_nested_dicts() -> None:
    value: dict[str, Any] = {
        f"{OUTSIDE}/k": [OUTSIDE, {"deep": [f"-o{OUTSIDE}/x", 3, None, True]}],
        "n": 1.5,
        "s": "no placeholder",
    }
    assert place(value, "/w/outside") == {
        "/w/outside/k": ["/w/outside", {"deep": ["-o/w/outside/x", 3, None, True]}],
        "n": 1.5,
        "s": "no placeholder",
    }
    assert value[f"{OUTSIDE}/k"][0] == OUTSIDE, "the original is left as it was"
    assert substitute("a/old/b/old", "old", "new") == "a/new/b/new"
    assert substitute(7, "7", "8") == 7


# Strings built from the placeholder and pieces of it, so it appears whole, split and doubled.
texts = st.lists(st.sampled_from(["a", "/", "@", "@@", OUTSIDE, OUTSIDE[:7], OUTSIDE[7:]]), max_size=6).map("".join)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_no_placeholder_survives_placing(value: Any) -> None:
    placed = place(value, "/srv/outside")
    assert OUTSIDE not in json.dumps(placed)
    assert place(placed, "/elsewhere") == placed


def test_boundary_probes_go_into_prefix_siblings_and_through_links_in_both_forms() -> None:
    boundary = Boundary(
        ("scope/0-proj", "scope/1-data"),
        tuple(tuple(f"{d}{suffix}" for suffix in SIBLING_SUFFIXES) for d in ("scope/0-proj", "scope/1-data")),
        "archive",
        "notes.txt",
        "fuzzgate-canary.txt",
        (),
        (),
    )
    cases = probe_cases("t", {"properties": {"p": {"type": "string"}}}, {}, "k", CANARIES, boundary)
    by_class: dict[ProbeClass, set[Any]] = {}
    for case in cases:
        by_class.setdefault(case.probe.probe_class, set()).add(case.probe.value)
    siblings, links = by_class[ProbeClass.SIBLING], by_class[ProbeClass.SYMLINK]
    for name in ("0-proj-backup", "1-data-backup"):
        assert {f"{OUTSIDE}/scope/{name}/fuzzgate-canary.txt", f"../{name}/fuzzgate-canary.txt"} <= siblings
        assert {f"{OUTSIDE}/scope/{name}", f"../{name}"} <= siblings
        # A fresh name to write, absolute and relative.
        assert len([v for v in siblings if v.startswith((f"{OUTSIDE}/scope/{name}/", f"../{name}/"))
                    and ESCAPE_PREFIX in v]) == 2  # fmt: skip
    assert {"archive", "archive/fuzzgate-canary.txt", "notes.txt", f"{OUTSIDE}/scope/1-data/notes.txt"} <= links
    assert any(v.startswith("archive/" + ESCAPE_PREFIX) for v in links)
    # In rounds: the first of every class (the boundary's last), then the second, and so on.
    classes = [case.probe.probe_class for case in cases]
    first_round = list(dict.fromkeys(classes))
    assert classes[: len(first_round)] == first_round
    assert first_round[-2:] == [ProbeClass.SIBLING, ProbeClass.SYMLINK]
    assert {ProbeClass.SCOPE, ProbeClass.OPTION, ProbeClass.SHELL} <= set(first_round)
    assert len({case.probe.label for case in cases}) == len(cases)
    # No probe names a listing token: a reply naming one could not be an echo.
    assert not any("fzgcanary" in str(case.probe.value) for case in cases)
