"""The engine's feed (fuzzgate.learn.feed): dictionary values into later cases, producer → consumer
sequences, no identical request twice while the server's state has not changed. The plans here
have a stand-in generator (a fixed valid case per index), so no generation worker runs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import anyio
from jsonschema import Draft202012Validator

from fuzzgate.generate.cases import Case
from fuzzgate.learn.feed import Feed
from fuzzgate.model.outcome import CallOutcome, OutcomeStatus
from fuzzgate.plan.selection import ToolPlan
from fuzzgate.target.discover import ToolInfo

A = "6f1c2a8e-1234-4abc-8def-0123456789ab"
B = "0b7e4d2c-9999-4abc-8def-fedcba987654"


@dataclass
class StandIn:
    """Case k of a tool: every field a string `<field>-<k>` (valid)."""

    schema: dict[str, Any]

    def case(self, k: int) -> Case:
        arguments = {name: f"{name}-{k}" for name in self.schema.get("properties", {})}
        return Case(index=k, arguments=arguments, schema_valid=True, origin="example" if k == 0 else "random")

    def is_valid(self, arguments: dict[str, Any]) -> bool:
        return bool(Draft202012Validator(self.schema).is_valid(arguments))


def plan(name: str, read_only: bool | None = None, description: str = "", **fields: str) -> ToolPlan:
    schema = {
        "type": "object",
        "properties": {field: {"type": kind} for field, kind in fields.items()},
        "required": list(fields),
    }
    info = ToolInfo(name, description, schema, None, None, read_only)
    made = ToolPlan(info, lambda: StandIn(schema))  # type: ignore[arg-type,return-value]
    made.case(0)  # builds the generator, as the engine's first case of the tool does
    return made


def notes(delete: bool = True) -> dict[str, ToolPlan]:
    tools = [
        plan("list_notes"),
        plan("get_note", note_id="string"),
        plan("create_note", text="string"),
        plan("update_note", note_id="string", text="string"),
    ]
    if delete:  # not in the plans when the destructive guard blocks it
        tools.append(plan("delete_note", note_id="string"))
    return {p.info.name: p for p in tools}


def ok(structured: Any) -> CallOutcome:
    text = json.dumps(structured)
    payload = {"content": [{"type": "text", "text": text}], "structuredContent": structured, "isError": False}
    return CallOutcome(OutcomeStatus.OK, 0.001, text=text, payload=json.dumps(payload))


def error(text: str) -> CallOutcome:
    payload = {"content": [{"type": "text", "text": text}], "isError": True}
    return CallOutcome(OutcomeStatus.TOOL_ERROR, 0.001, text=text, payload=json.dumps(payload))


def drain(feed: Feed, replies: dict[str, CallOutcome]) -> list[tuple[str, dict[str, Any], str]]:
    """Send every queued sequence step, answering each tool as `replies` says."""
    sent: list[tuple[str, dict[str, Any], str]] = []

    async def main() -> None:
        while (step := await feed.next_chain_case()) is not None:
            target, case = step
            sent.append((target.info.name, case.arguments, case.origin))
            feed.after_call(target, case, replies.get(target.info.name, ok({})))

    anyio.run(main)
    return sent


def test_a_listed_id_reaches_a_consumer_every_fourth_case() -> None:
    plans = notes()
    feed = Feed(list(plans.values()))
    listing = plans["list_notes"]
    feed.after_call(listing, listing.case(0), ok({"result": [{"id": A, "text": "seeded"}]}))
    get = plans["get_note"]
    cases = [feed.override(get, get.case(k)) for k in range(8)]
    assert [c.origin for c in cases] == ["example", *["random"] * 2, "dictionary:/properties/note_id", *["random"] * 3,
                                          "dictionary:/properties/note_id"]  # fmt: skip
    assert cases[3].arguments == {"note_id": A} and cases[3].schema_valid
    # create_note's text is no id field: nothing to offer.
    create = plans["create_note"]
    assert feed.override(create, create.case(3)) == create.case(3)


def test_no_identical_request_while_the_state_is_unchanged() -> None:
    plans = notes()
    feed = Feed(list(plans.values()))
    get, create, listing = plans["get_note"], plans["create_note"], plans["list_notes"]
    case = get.case(1)
    assert not feed.seen(get, case.arguments)
    feed.after_call(get, case, error("no such note"))
    assert feed.seen(get, case.arguments) and not feed.seen(get, get.case(2).arguments)
    delete = plans["delete_note"]
    feed.after_call(delete, delete.case(1), error("no such note"))
    assert feed.seen(delete, {"note_id": "note_id-1"}) and not feed.seen(get, {"note_id": "other"})
    # A read-only tool's success changes nothing; a failed create neither.
    feed.after_call(listing, listing.case(0), ok({"result": []}))
    feed.after_call(create, create.case(0), error("text too long"))
    assert feed.seen(get, case.arguments) and feed.seen(listing, listing.case(0).arguments)
    # A successful create does; so does a restart.
    feed.after_call(create, create.case(1), ok({"id": A}))
    assert not feed.seen(get, case.arguments) and not feed.seen(listing, listing.case(0).arguments)
    feed.after_call(get, case, error("no such note"))
    feed.restarted()
    assert not feed.seen(get, case.arguments)


def test_create_read_update_delete_delete_read() -> None:
    plans = notes()
    feed = Feed(list(plans.values()))
    create = plans["create_note"]
    feed.after_call(create, create.case(0), ok({"id": A}))
    sent = drain(feed, {"delete_note": ok({"deleted": True}), "get_note": ok({"id": A, "text": "x"})})
    assert sent == [
        ("get_note", {"note_id": A}, "sequence:read:first:/properties/note_id"),
        ("update_note", {"note_id": A, "text": "text-0"}, "sequence:update:first:/properties/note_id"),
        ("delete_note", {"note_id": A}, "sequence:delete:first:/properties/note_id"),
        ("delete_note", {"note_id": A}, "sequence:delete:again:/properties/note_id"),
        ("get_note", {"note_id": A}, "sequence:read:after-delete:/properties/note_id"),
    ]


def test_delete_again_is_not_sent_when_the_delete_changed_nothing() -> None:
    plans = notes()
    feed = Feed(list(plans.values()))
    create = plans["create_note"]
    feed.after_call(create, create.case(0), ok({"id": A}))
    sent = drain(feed, {"delete_note": error("cannot delete"), "update_note": error("locked")})
    # Nothing changed the state since the first read either: the read after the delete would be
    # the same request to the same state.
    assert [(tool, origin.split(":")[2]) for tool, _, origin in sent] == [
        ("get_note", "first"),
        ("update_note", "first"),
        ("delete_note", "first"),
    ]


def test_without_the_delete_tool_no_delete_step() -> None:
    plans = notes(delete=False)
    feed = Feed(list(plans.values()))
    create = plans["create_note"]
    feed.after_call(create, create.case(0), ok({"id": A}))
    assert [(tool, origin) for tool, _, origin in drain(feed, {})] == [
        ("get_note", "sequence:read:first:/properties/note_id"),
        ("update_note", "sequence:update:first:/properties/note_id"),
    ]


def test_two_objects_interleaved() -> None:
    plans = notes()
    feed = Feed(list(plans.values()))
    create = plans["create_note"]
    feed.after_call(create, create.case(0), ok({"id": "n-1"}))
    drain(feed, {})
    feed.after_call(create, create.case(1), ok({"id": A}))

    sent: list[tuple[str, dict[str, Any], str]] = []

    async def main() -> None:
        while (step := await feed.next_chain_case()) is not None:
            target, case = step
            sent.append((target.info.name, case.arguments, case.origin))
            # The sequence's own create makes B.
            reply = ok({"id": B}) if target.info.name == "create_note" else error("no such note")
            feed.after_call(target, case, reply)

    anyio.run(main)
    assert sent == [
        ("create_note", {"text": "text-1"}, "sequence:create:second"),
        ("delete_note", {"note_id": A}, "sequence:delete:first-of-two:/properties/note_id"),
        ("get_note", {"note_id": B}, "sequence:read:other:/properties/note_id"),
        ("get_note", {"note_id": A}, "sequence:read:after-delete:/properties/note_id"),
    ]
    # B came from a sequence step: it starts no sequence of its own.
    assert drain(feed, {}) == []


def test_sequences_back_off_while_they_show_nothing_new() -> None:
    plans = notes(delete=False)
    feed = Feed(list(plans.values()))
    create = plans["create_note"]
    started = []
    for n in range(40):
        feed.after_call(create, create.case(n), ok({"id": f"n-{n}"}))
        # Every step answers the same way: after the first sequence, nothing is new.
        started.append(bool(drain(feed, {"get_note": error("boom"), "update_note": error("boom")})))
    assert started[:2] == [True, True]
    assert 4 <= sum(started) <= 10, started


def test_a_new_behaviour_is_reported_once_per_tool() -> None:
    plans = notes()
    feed = Feed(list(plans.values()))
    get = plans["get_note"]
    assert feed.after_call(get, get.case(1), error("note 'x' not found"))
    assert not feed.after_call(get, get.case(2), error("note 'y' not found"))
    assert feed.after_call(get, get.case(3), ok({"id": A, "text": "x"}))


def test_resource_uris_are_offered() -> None:
    info = ToolInfo("read_doc", "", {"type": "object", "properties": {"uri": {"type": "string"}}}, None, None, None)
    reader = ToolPlan(info, lambda: StandIn(info.input_schema))  # type: ignore[arg-type,return-value]
    reader.case(0)
    feed = Feed([reader], resources=["docs://intro"])
    assert feed.override(reader, reader.case(3)).arguments == {"uri": "docs://intro"}


def test_a_value_that_crashed_the_server_is_not_put_in_that_field_again() -> None:
    plans = notes()
    feed = Feed(list(plans.values()))
    listing, get, update = plans["list_notes"], plans["get_note"], plans["update_note"]
    feed.after_call(listing, listing.case(0), ok({"result": [{"id": A}]}))
    (step,) = [s for s in drain_one(feed)]
    assert step[0] is get and step[1].arguments == {"note_id": A}
    feed.after_call(get, step[1], CallOutcome(OutcomeStatus.CLOSED, 0.01, exit_code=3))
    feed.restarted()
    # The crash is recorded; every restart costs more than a call: not get_note(A) again ...
    assert feed.override(get, get.case(3)).origin == "random"
    # ... but A still goes to the other tools.
    assert feed.override(update, update.case(3)).arguments["note_id"] == A
    feed.after_call(plans["create_note"], plans["create_note"].case(0), ok({"id": B}))
    assert feed.override(get, get.case(7)).arguments == {"note_id": B}


def drain_one(feed: Feed) -> list[tuple[ToolPlan, Case]]:
    async def main() -> list[tuple[ToolPlan, Case]]:
        step = await feed.next_chain_case()
        return [step] if step is not None else []

    return anyio.run(main)
