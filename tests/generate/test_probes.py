"""Probes: which fields get them, where they sit among a tool's cases, the file names only each
can create, and the placeholder's substitution."""

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
    PROBES_AFTER,
    ProbeClass,
    place,
    probe_cases,
    probe_slot,
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


@given(probes=st.integers(0, 40), cases=st.integers(0, 120))
def test_probe_slot_is_a_bijection_onto_probes_then_regular_cases(probes: int, cases: int) -> None:
    slots = [probe_slot(index, probes) for index in range(cases)]
    probe_positions = [position for is_probe, position in slots if is_probe]
    regular_positions = [position for is_probe, position in slots if not is_probe]
    sent = min(probes, max(0, cases - PROBES_AFTER) // PROBE_EVERY)
    # Each probe once, in order, and the regular cases numbered without a gap or a repeat.
    assert probe_positions == list(range(sent))
    assert regular_positions == list(range(cases - sent))
    assert len(set(slots)) == cases
    if cases:
        assert slots[0] == (False, 0), "the first case stays the tool's first regular one"


@given(probes=st.integers(1, 40))
def test_probes_go_every_third_case_after_the_first_ones_until_all_are_sent(probes: int) -> None:
    end = PROBES_AFTER + PROBE_EVERY * probes
    slots = [probe_slot(index, probes) for index in range(end + 5)]
    assert not any(is_probe for is_probe, _ in slots[:PROBES_AFTER])
    pattern = [False] * (PROBE_EVERY - 1) + [True]
    assert [is_probe for is_probe, _ in slots[PROBES_AFTER:end]] == pattern * probes
    assert not any(is_probe for is_probe, _ in slots[end:])


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
    # Field by field, scope probes before injection probes.
    path_classes = [case.probe.probe_class for case in cases if case.probe.field == "path"]
    assert path_classes == sorted(path_classes, key=lambda c: c is not ProbeClass.SCOPE)
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
    # Scope probes first, then injections, then the boundary's; every label unique within the field.
    classes = [case.probe.probe_class for case in cases]
    boundary_classes = (ProbeClass.SIBLING, ProbeClass.SYMLINK)
    first = min(i for i, c in enumerate(classes) if c in boundary_classes)
    assert set(classes[first:]) == set(boundary_classes)
    assert classes[:first] == [
        c.probe.probe_class for c in probe_cases("t", {"properties": {"p": {"type": "string"}}}, {}, "k", CANARIES)
    ]
    assert len({case.probe.label for case in cases}) == len(cases)
    # No probe names a listing token: a reply naming one could not be an echo.
    assert not any("fzgcanary" in str(case.probe.value) for case in cases)
