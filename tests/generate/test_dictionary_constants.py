"""Constants mined from the server's code in the per-run dictionary (fuzzgate.generate.dictionary):
offered by name through `offer` like reply values, an unnamed one to any field of its type less
often, numbers with their neighbours; never `fresh`, so never the start of a sequence."""

from __future__ import annotations

import json
from typing import Any

import anyio

from fuzzgate.generate.cases import Case
from fuzzgate.generate.dictionary import LOOSE_EVERY, Dictionary
from fuzzgate.generate.value_class import name_key
from fuzzgate.learn.feed import OVERRIDE_EVERY, Feed
from fuzzgate.model.outcome import CallOutcome, OutcomeStatus
from fuzzgate.plan.selection import ToolPlan
from fuzzgate.target.discover import ToolInfo


def schema(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def offered_values(d: Dictionary, tool: dict[str, Any], field: str, turns: int = 24) -> list[Any]:
    out = []
    for k in range(turns):
        found = d.offer(tool, {}, k)
        if found is not None and field in found[0]:
            out.append(found[0][field])
    return out


def test_learning_counts_new_constants_and_skips_what_is_not_one() -> None:
    d = Dictionary()
    assert d.learn_constants("server.py", [("mode", "turbo"), ("n", 41), ("n", 43), (None, "magic")]) == 4
    assert d.learn_constants("server.py", [("mode", "turbo"), ("n", 41.0)]) == 0, "seen before (41.0 is 41)"
    skipped = [("password", "hunter2"), ("flag", True), ("x", ""), ("ratio", float("nan")), ("y", float("inf"))]
    assert d.learn_constants("server.py", skipped) == 0
    assert d.constants() == (("mode", "turbo"), ("n", 41), ("n", 43), (None, "magic"))
    assert len(d) == 0 and d.entries() == (), "constants are not reply values"


def test_names_match_fields_by_their_last_identifier() -> None:
    assert [name_key(n) for n in ("mode", "self.mode", 'args["mode"]', "Mode", "len(items)", None, "")] == [
        "mode",
        "mode",
        "mode",
        "mode",
        "items",
        "",
        "",
    ]
    assert name_key("note_id") == name_key("noteId") == "noteid"


def test_a_named_string_constant_goes_to_the_field_named_like_it() -> None:
    d = Dictionary()
    d.learn_constants("server.py", [("self.mode", "turbo")])
    tool = schema(mode={"type": "string"}, path={"type": "string"})
    assert d.offer(tool, {"path": "/x"}, 0) == ({"path": "/x", "mode": "turbo"}, "dictionary:/properties/mode")
    assert set(offered_values(d, tool, "mode")) == {"turbo"}
    assert offered_values(d, tool, "path") == [], "a named constant goes by its name only"
    # Not into a field of another kind, nor into a closed one.
    assert d.offer(schema(mode={"type": "integer"}), {}, 0) is None
    assert d.offer(schema(mode={"type": "string", "enum": ["a", "b"]}), {}, 0) is None


def test_numbers_come_with_their_neighbours() -> None:
    d = Dictionary()
    # `if 41 < n < 43`: the collector reports both operands, named n.
    d.learn_constants("server.py", [("n", 41), ("n", 43)])
    ints = offered_values(d, schema(n={"type": "integer"}), "n")
    assert set(ints) == {40, 41, 42, 43, 44} and ints[:3] == [41, 40, 42]
    assert all(isinstance(v, int) for v in ints)
    d.learn_constants("server.py", [("ratio", 0.5)])
    assert set(offered_values(d, schema(ratio={"type": "number"}), "ratio")) == {0.5, -0.5, 1.5}
    assert set(offered_values(d, schema(ratio={"type": "integer"}), "ratio")) == {0, 1}, "the integers around it"


def test_reply_values_and_named_constants_share_a_field() -> None:
    d = Dictionary()
    d.learn("list_modes", {"structuredContent": {"modes": [{"mode_name": "x"}]}})
    d.learn("get_config", {"structuredContent": {"mode": "slow"}})
    d.learn_constants("server.py", [("mode", "turbo")])
    assert set(offered_values(d, schema(mode={"type": "string"}), "mode")) == {"slow", "turbo"}


def test_unnamed_constants_go_to_any_field_of_their_type_less_often() -> None:
    d = Dictionary()
    d.learn_constants("server.py", [(None, "magic"), (None, 7)])
    tool = schema(text={"type": "string"}, count={"type": "integer"})
    # Nothing else fits: every offer is an unnamed constant, fields in turn.
    picks = [d.offer(tool, {}, k) for k in range(8)]
    assert {json.dumps(p[0]) for p in picks if p} == {
        '{"text": "magic"}',
        '{"count": 7}',
        '{"count": 6}',
        '{"count": 8}',
    }
    # With a named value for `text`, only every LOOSE_EVERY-th offer is an unnamed constant.
    d.learn_constants("server.py", [("text", "hello")])
    picks = [d.offer(tool, {}, k) for k in range(4 * LOOSE_EVERY)]
    loose = [k for k, p in enumerate(picks) if p and p[0] != {"text": "hello"}]
    assert loose == [k for k in range(4 * LOOSE_EVERY) if k % LOOSE_EVERY == LOOSE_EVERY - 1]


def test_constants_are_never_fresh_and_hide_no_reply_value() -> None:
    d = Dictionary()
    assert d.learn("create_note", {"structuredContent": {"id": "n-1"}}) == 1
    fresh = d.fresh
    d.learn_constants("server.py", [("note_id", "n-2"), ("id", "n-3")])
    assert d.fresh == fresh, "learning constants leaves `fresh` (what sequences start from) alone"
    # A reply bringing a value the code also compares against is still a new value the server handed out.
    assert d.learn("create_note", {"structuredContent": {"id": "n-2"}}) == 1
    assert [e.value for e in d.fresh] == ["n-2"]


# --- through the engine's feed ------------------------------------------------------------------------


class StandIn:
    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema

    def case(self, k: int) -> Case:
        arguments = {name: f"{name}-{k}" for name in self.schema.get("properties", {})}
        return Case(index=k, arguments=arguments, schema_valid=True, origin="random")

    def is_valid(self, arguments: dict[str, Any]) -> bool:
        return all(isinstance(v, str) for v in arguments.values())


def plan(name: str, *fields: str) -> ToolPlan:
    tool = {"type": "object", "properties": {f: {"type": "string"} for f in fields}, "required": list(fields)}
    made = ToolPlan(ToolInfo(name, "", tool, None, None, None), lambda: StandIn(tool))  # type: ignore[arg-type,return-value]
    made.case(0)
    return made


def ok(structured: Any) -> CallOutcome:
    payload = {"content": [], "structuredContent": structured, "isError": False}
    return CallOutcome(OutcomeStatus.OK, 0.001, text="", payload=json.dumps(payload))


def test_a_constant_reaches_a_field_through_the_feed_and_starts_no_sequence() -> None:
    tools = [plan("set_mode", "mode"), plan("create_note", "text"), plan("get_note", "note_id")]
    feed = Feed(tools)
    feed.dictionary.learn_constants("server.py", [("mode", "turbo"), ("note_id", "n-7")])
    set_mode, create_note, _ = tools
    case = set_mode.generator.case(OVERRIDE_EVERY - 1)  # type: ignore[union-attr]
    overridden = feed.override(set_mode, case)
    assert overridden.arguments == {"mode": "turbo"} and overridden.origin == "dictionary:/properties/mode"
    # A call whose reply brings nothing starts no sequence, whatever the constants hold.
    feed.after_call(create_note, create_note.generator.case(0), ok({"status": "done"}))  # type: ignore[union-attr]
    assert anyio.run(feed.next_chain_case) is None
    # A reply value does, even one the code also compares against.
    feed.after_call(create_note, create_note.generator.case(1), ok({"id": "n-7"}))  # type: ignore[union-attr]
    step = anyio.run(feed.next_chain_case)
    assert step is not None and step[0].info.name == "get_note" and step[1].arguments == {"note_id": "n-7"}
