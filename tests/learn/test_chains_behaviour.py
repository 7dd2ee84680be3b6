"""What a tool does, read from its name and description (fuzzgate.learn.chains), and what an outcome
shows of the server's behaviour (fuzzgate.learn.behaviour)."""

from __future__ import annotations

import json

from fuzzgate.learn.behaviour import Behaviours, behaviour_key
from fuzzgate.learn.chains import INTERLEAVED, SINGLE, Verb, roles, verb_of
from fuzzgate.model.outcome import CallOutcome, OutcomeStatus


def test_verbs_from_names_then_descriptions() -> None:
    assert [verb_of(n) for n in ("get_note", "listNotes", "show-item", "describe_table")] == [Verb.READ] * 4
    assert [verb_of(n) for n in ("update_note", "renameFile", "add_tag", "set_title")] == [Verb.UPDATE] * 4
    assert [verb_of(n) for n in ("delete_note", "remove_item", "close_issue", "archiveProject")] == [Verb.DELETE] * 4
    assert [verb_of(n) for n in ("create_note", "new_session", "upload")] == [Verb.CREATE] * 3
    assert verb_of("note_tool") is None
    assert verb_of("note_tool", "Removes a note by its id.") is Verb.DELETE
    assert verb_of("notes", "Creates a note and returns its id") is Verb.CREATE
    # The name speaks first.
    assert verb_of("get_note", "Deletes nothing") is Verb.READ


def test_roles_the_tools_can_play() -> None:
    everything = {Verb.READ, Verb.UPDATE, Verb.DELETE}
    labels = [(r.verb.value, r.label) for r in roles(SINGLE, everything)]
    assert labels == [
        ("read", "first"),
        ("update", "first"),
        ("delete", "first"),
        ("delete", "again"),
        ("read", "after-delete"),
    ]
    # Without a delete tool (blocked by the guard), there is nothing to read after.
    assert [(r.verb.value, r.label) for r in roles(SINGLE, {Verb.READ, Verb.UPDATE})] == [
        ("read", "first"),
        ("update", "first"),
    ]
    interleaved = [(r.verb.value, r.label, r.target) for r in roles(INTERLEAVED, everything)]
    assert interleaved == [
        ("create", "second", "b"),
        ("delete", "first-of-two", "a"),
        ("read", "other", "b"),
        ("read", "after-delete", "a"),
    ]
    assert roles(INTERLEAVED, {Verb.READ, Verb.UPDATE}) == []


def outcome(
    status: OutcomeStatus, text: str = "", structured: object = None, rpc_code: int | None = None
) -> CallOutcome:
    payload = {"content": [{"type": "text", "text": text}], "isError": status is OutcomeStatus.TOOL_ERROR}
    if structured is not None:
        payload["structuredContent"] = structured
    return CallOutcome(status, 0.01, text=text, payload=json.dumps(payload), rpc_code=rpc_code)


def test_behaviour_keys_leave_out_values_and_timing() -> None:
    same = [
        outcome(OutcomeStatus.TOOL_ERROR, "note 'abc' not found"),
        outcome(OutcomeStatus.TOOL_ERROR, "note '6f1c2a8e-1234-4abc-8def-0123456789ab' not found"),
        outcome(OutcomeStatus.TOOL_ERROR, 'note "x" not found'),
    ]
    assert len({behaviour_key(o) for o in same}) == 1
    lists = [
        outcome(OutcomeStatus.OK, json.dumps([{"id": "a"}]), {"result": [{"id": "a"}]}),
        outcome(OutcomeStatus.OK, json.dumps([{"id": "b"}, {"id": "c"}]), {"result": [{"id": "b"}, {"id": "c"}]}),
    ]
    assert behaviour_key(lists[0]) == behaviour_key(lists[1]), "how many items a list holds is not behaviour"
    different = [
        outcome(OutcomeStatus.OK, "{}", {}),
        outcome(OutcomeStatus.OK, json.dumps({"id": "a"}), {"id": "a"}),
        outcome(OutcomeStatus.TOOL_ERROR, "note 'abc' not found"),
        outcome(OutcomeStatus.TOOL_ERROR, "text too long"),
        outcome(OutcomeStatus.RPC_ERROR, "Invalid params", rpc_code=-32602),
        outcome(OutcomeStatus.RPC_ERROR, "Invalid params", rpc_code=-32603),
        CallOutcome(OutcomeStatus.CLOSED, 0.5, exit_code=3),
    ]
    assert len({behaviour_key(o) for o in different}) == len(different)


def test_new_behaviour_per_tool() -> None:
    seen = Behaviours()
    missing = outcome(OutcomeStatus.TOOL_ERROR, "note 'a' not found")
    assert seen.new("get_note", missing)
    assert not seen.new("get_note", outcome(OutcomeStatus.TOOL_ERROR, "note 'b' not found"))
    assert seen.new("delete_note", missing), "per tool"
    assert seen.new("get_note", outcome(OutcomeStatus.OK, "{}", {}))


def test_an_echo_transformed_or_over_several_lines_is_one_behaviour() -> None:
    values = ["\u00c4-rH\u00ea\u00c4", "\rZ\u00a0\u00d3_F", "plain words here", "line one\nline two"]
    upper = {behaviour_key(outcome(OutcomeStatus.OK, v.upper()), {"text": v}) for v in values}
    lower = {behaviour_key(outcome(OutcomeStatus.OK, f"You said: {v.lower()}"), {"text": v}) for v in values}
    assert len(upper) == 1 and len(lower) == 1
    # What the server says around the value still counts.
    assert upper != lower
    assert behaviour_key(outcome(OutcomeStatus.OK, "rejected: too long"), {"text": "abcd"}) not in upper


def test_a_behaviour_key_is_never_another_calls() -> None:
    # The key is worked out once per call (outcome and arguments objects); another call's
    # arguments, even with the same outcome object, get their own.
    outcome = CallOutcome(OutcomeStatus.OK, 0.01, text="no note zebra-quartz here")
    first = behaviour_key(outcome, {"name": "zebra-quartz"})
    assert behaviour_key(outcome, {"name": "zebra-quartz"}) == first
    assert behaviour_key(outcome, {"name": "other-value"}) != first
    assert behaviour_key(CallOutcome(OutcomeStatus.OK, 0.01, text="no note zebra-quartz here")) != first
