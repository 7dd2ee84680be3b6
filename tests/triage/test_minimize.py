"""The greedy shrinking of a finding's failing call, with the bug faked as a predicate on the call
(no server), and the smaller calls it draws from (`generate.shrink.smaller_calls`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzgate.generate.shrink import smaller_calls
from fuzzgate.model.findings import Repro
from fuzzgate.triage.minimize import SMALL_CALL_CHARS, CallShrinker, call_size, worth_shrinking

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "maxLength": 400},
        "note": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "limit": {"type": "integer", "minimum": 0},
    },
    "required": ["path"],
}
SENT = {
    "path": "/srv/records/" + "archive-2024-" * 12 + "summary.json",
    "note": "a note that plays no part in the bug at all",
    "tags": ["alpha", "beta", "gamma", "delta"],
    "limit": 4711,
}


def repro(arguments: dict[str, Any]) -> Repro:
    return Repro(seed=3, case_index=7, arguments=arguments, transport="stdio")


def candidates(current: Repro) -> list[Repro]:
    return [replace(current, arguments=a, schema_valid=v) for a, v in smaller_calls(dict(current.arguments), SCHEMA)]


def shrink(start: Repro, bug: Callable[[dict[str, Any]], bool], tries: int = 200) -> tuple[Repro, list[Repro]]:
    shrinker = CallShrinker(start, candidates, tries)
    sent = []
    while (candidate := shrinker.next()) is not None:
        sent.append(candidate)
        shrinker.tried(candidate, bug(candidate.arguments))
    return shrinker.current, sent


def test_a_bug_that_needs_one_short_value_shrinks_to_it_and_keeps_the_original() -> None:
    # The bug: a path under /srv (the rest of the call plays no part).
    found, _ = shrink(repro(SENT), lambda a: a["path"].startswith("/srv"))
    assert set(found.arguments) == {"path"} and found.arguments["path"].startswith("/srv")
    assert len(found.arguments["path"]) < 10
    assert found.original_arguments == SENT
    assert found.schema_valid and found.seed == 3 and found.case_index == 7


def test_every_part_shrinks_towards_its_simplest_value() -> None:
    # The bug needs a limit of 100 or more and two tags: the number loses digits towards 0, the
    # array loses items, the strings it keeps are emptied.
    found, _ = shrink(repro(SENT), lambda a: a.get("limit", 0) >= 100 and len(a.get("tags", [])) >= 2)
    assert found.arguments["limit"] == 471 and found.arguments["tags"] == ["", ""]
    assert len(found.arguments["tags"]) == 2 and found.arguments["path"] == "" and "note" not in found.arguments


def test_a_call_no_smaller_variant_of_reproduces_stays_as_it_was() -> None:
    start = repro(SENT)
    found, sent = shrink(start, lambda a: a == SENT)
    assert found == start and found.original_arguments is None and sent


def test_shrinking_stops_after_its_tries_with_the_smallest_call_found() -> None:
    found, sent = shrink(repro(SENT), lambda a: a["path"].startswith("/srv"), tries=3)
    assert len(sent) == 3
    assert call_size(found.arguments) < call_size(SENT) and found.original_arguments == SENT


def test_a_short_call_is_not_worth_shrinking() -> None:
    assert not worth_shrinking(repro({"n": 1}))
    assert worth_shrinking(repro({"text": "x" * SMALL_CALL_CHARS}))


@settings(max_examples=30, deadline=None)
@given(st.text(max_size=60), st.lists(st.text(max_size=5), max_size=5), st.integers(0, 10**6))
def test_shrinking_is_deterministic_each_call_smaller_and_none_sent_twice(
    path: str, tags: list[str], limit: int
) -> None:
    start = repro({"path": path, "tags": tags, "limit": limit})

    def bug(arguments: dict[str, Any]) -> bool:
        return len(arguments.get("tags", [])) >= min(1, len(tags))

    first, sent = shrink(start, bug)
    again, sent_again = shrink(start, bug)
    assert first == again and sent == sent_again
    texts = [str(sorted(c.arguments.items())) for c in sent]
    assert len(texts) == len(set(texts))
    assert all(call_size(c.arguments) < call_size(start.arguments) for c in sent)
    assert bug(first.arguments)


def test_smaller_calls_say_whether_they_conform() -> None:
    invalid = {"path": 5, "note": "x" * 20}
    found = smaller_calls(invalid, SCHEMA)
    assert found and not any(valid for _, valid in found)
    assert all(valid for _, valid in smaller_calls(SENT, SCHEMA))
    # A schema fuzzgate cannot validate against gives none: the call stays as it was.
    assert smaller_calls(SENT, {"type": "object", "properties": {"path": {"type": 12}}}) == []
