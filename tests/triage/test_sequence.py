"""Sequence repros: shrinking (ddmin over the prefix, then argument keys) with a fake predicate,
their JSON form and size, the commands reports print for them, and verification's order of tries
(alone, whole, shrunk) with replays faked."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzgate.check import Observation
from fuzzgate.config.model import Config, TargetConfig, TargetKind
from fuzzgate.engine import verify
from fuzzgate.engine.settings import VerifySettings
from fuzzgate.engine.steps import placed
from fuzzgate.engine.verify import Verification, Verifier
from fuzzgate.generate.probes import OUTSIDE
from fuzzgate.model.commands import repro_command, sequence_text
from fuzzgate.model.findings import DEFAULT_SEVERITY, Finding, Kind, Repro, Step, Surface
from fuzzgate.triage import sequence

A = Step("create", {"name": "a", "note": "first"})
B = Step("list", {"limit": 5})
C = Step("close", {"id": 1, "force": True})
D = Step("list", {})
E = Step("create", {"name": "e"})


def _repro(prefix: tuple[Step, ...] = (), arguments: dict[str, Any] | None = None, **fields: Any) -> Repro:
    arguments = {"id": 1, "mode": "fast"} if arguments is None else arguments
    return Repro(seed=3, case_index=9, arguments=arguments, transport="stdio", prefix=prefix, **fields)


class Oracle:
    """A fake server: the bug shows iff the prefix holds the steps of tools `needs` (in order) and
    the failing call still has the argument `id`. Counts and records every try."""

    def __init__(self, *needs: str) -> None:
        self.needs = list(needs)
        self.tried: list[Repro] = []

    async def __call__(self, repro: Repro) -> bool | None:
        self.tried.append(repro)
        tools = [step.tool for step in repro.prefix]
        ordered = iter(tools)
        return all(need in ordered for need in self.needs) and "id" in repro.arguments


def _shrink(repro: Repro, oracle: Oracle, tries: int = sequence.MAX_SHRINK_TRIES) -> tuple[Repro, list[Repro]]:
    kept: list[Repro] = []
    result = anyio.run(sequence.shrink, repro, oracle, kept.append, tries)
    return result, kept


def test_ddmin_keeps_exactly_the_steps_the_bug_needs() -> None:
    oracle = Oracle("create", "close")
    result, _ = _shrink(_repro((A, B, C, D, E)), oracle)
    assert [step.tool for step in result.prefix] == ["create", "close"]
    assert [step.arguments for step in result.prefix] == [{}, {}]
    assert result.arguments == {"id": 1}
    assert len(oracle.tried) <= sequence.MAX_SHRINK_TRIES


def test_the_needed_steps_are_kept_wherever_they_are() -> None:
    oracle = Oracle("list", "create")  # B then E: far apart, the last one at the end
    result, _ = _shrink(_repro((A, B, C, D, E)), oracle, tries=100)
    assert [step.tool for step in result.prefix] == ["list", "create"]
    assert oracle.needs == ["list", "create"] and anyio.run(oracle, result)


def test_a_reproducing_suffix_is_tried_first() -> None:
    oracle = Oracle("close")
    result, _ = _shrink(_repro((A, B, D, E, C)), oracle)
    assert oracle.tried[0].prefix == (C,)
    assert [step.tool for step in result.prefix] == ["close"]


def test_argument_shrinking_drops_only_keys_not_needed() -> None:
    class NeedsName(Oracle):
        async def __call__(self, repro: Repro) -> bool | None:
            base = await super().__call__(repro)
            return bool(base) and any(s.tool == "create" and "name" in s.arguments for s in repro.prefix)

    result, _ = _shrink(_repro((A, C)), NeedsName("create", "close"))
    assert [(step.tool, step.arguments) for step in result.prefix] == [("create", {"name": "a"}), ("close", {})]
    assert result.arguments == {"id": 1}
    # A step that lost a key is no longer claimed valid for its schema.
    assert [step.schema_valid for step in result.prefix] == [False, False]


def test_every_smaller_repro_is_kept_at_once_and_the_last_is_the_result() -> None:
    oracle = Oracle("create", "close")
    original = _repro((A, B, C, D, E))
    result, kept = _shrink(original, oracle)
    assert kept and kept[-1] == result
    sizes = [original.size(), *(r.size() for r in kept)]
    assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == len(sizes)
    # Each one kept is a try the oracle accepted, kept in the order tried.
    assert [r for r in oracle.tried if r in kept] == kept
    assert all(anyio.run(oracle, r) for r in kept)


@pytest.mark.parametrize("tries", [0, 1, 3, 6])
def test_shrinking_respects_the_tries_bound(tries: int) -> None:
    oracle = Oracle("create", "close")
    result, kept = _shrink(_repro((A, B, C, D, E)), oracle, tries=tries)
    assert len(oracle.tried) == tries
    assert result == (kept[-1] if kept else _repro((A, B, C, D, E)))


def test_no_server_reached_is_no_smaller_repro() -> None:
    tried: list[Repro] = []

    async def unreachable(repro: Repro) -> bool | None:
        tried.append(repro)
        return None

    original = _repro((A, B, C))
    kept: list[Repro] = []
    assert anyio.run(sequence.shrink, original, unreachable, kept.append) == original
    assert kept == [] and 0 < len(tried) <= sequence.MAX_SHRINK_TRIES


def test_a_single_call_is_not_shrunk() -> None:
    oracle = Oracle()
    result, kept = _shrink(_repro(), oracle)
    assert result == _repro() and kept == [] and oracle.tried == []


def test_alone_and_prefix_of() -> None:
    repro = _repro((A, B))
    assert sequence.alone(repro) == _repro()
    history = [Step("t", {"i": i}) for i in range(sequence.RECENT_STEPS + 5)]
    assert sequence.prefix_of(history) == tuple(history)
    # Beyond the recent calls, only those to tools that may change state, up to HISTORY_STEPS in all.
    long = [Step("read" if i % 2 else "write", {"i": i}) for i in range(3 * sequence.HISTORY_STEPS)]
    prefix = sequence.prefix_of(long, read_only={"read"})
    assert prefix[-sequence.RECENT_STEPS :] == tuple(long[-sequence.RECENT_STEPS :])
    assert {s.tool for s in prefix[: -sequence.RECENT_STEPS]} == {"write"}
    assert prefix[0] == long[-sequence.HISTORY_STEPS] and len(prefix) < sequence.HISTORY_STEPS


def test_repro_json_round_trip_with_a_sequence() -> None:
    repro = _repro((A, Step("close", {"id": 1}, schema_valid=False)), tool="close", workspace="/var/tmp/w/s1/outside")
    data = json.loads(json.dumps(repro.to_json()))
    assert data["prefix"][1] == {"tool": "close", "arguments": {"id": 1}, "schema_valid": False}
    assert (data["tool"], data["workspace"]) == ("close", "/var/tmp/w/s1/outside")
    assert Repro.from_json(data) == repro


def test_a_single_call_repro_writes_no_new_keys() -> None:
    repro = _repro()
    data = repro.to_json()
    assert set(data) == {"seed", "case_index", "arguments", "transport", "schema_valid"}
    assert Repro.from_json(data) == repro
    # Older files, and explicit nulls, read the same.
    assert Repro.from_json({**data, "prefix": None, "tool": None, "workspace": None}) == repro


def test_size_orders_fewer_steps_first_then_bytes() -> None:
    one_big_call = _repro(arguments={"blob": "x" * 10_000})
    two_small_calls = _repro((D,), arguments={})
    assert one_big_call.size() < two_small_calls.size()
    assert _repro(arguments={"a": 1}).size() < _repro(arguments={"a": 10}).size()
    assert _repro((A,)).size()[0] == 2


def _finding(repro: Repro, surface: Surface = Surface.TOOL, name: str = "use") -> Finding:
    kind = Kind.INTERNAL_ERROR
    return Finding(kind, DEFAULT_SEVERITY[kind], surface, name, "boom", "0123456789abcdef0123", repro)


def test_merging_keeps_the_repro_with_fewer_steps() -> None:
    short = _finding(_repro(arguments={"id": 1, "padding": "y" * 500}))
    long = _finding(_repro((A, B)))
    assert long.merged_with(short).repro == short.repro
    assert short.merged_with(long).repro == short.repro


def test_a_sequence_or_workspace_bound_repro_is_replayed_by_fingerprint() -> None:
    plain = _finding(_repro(arguments={"id": 1}))
    assert repro_command(plain) == "fuzzgate replay --tool use --arguments '{\"id\":1}'"
    assert repro_command(_finding(_repro((A,)))) == "fuzzgate replay 0123456789abcdef0123"
    workspace = "/var/tmp/fzg/s1/outside"
    bound = _finding(_repro(arguments={"path": f"{workspace}/x"}, workspace=workspace))
    assert repro_command(bound, "fuzzgate.toml") == "fuzzgate replay 0123456789abcdef0123 --config fuzzgate.toml"
    unbound = _finding(_repro(arguments={"path": "notes"}, workspace=workspace))
    assert repro_command(unbound).startswith("fuzzgate replay --tool use ")
    server = _finding(_repro(arguments={"t": 1}, tool="echo"), Surface.SERVER, "transport")
    assert repro_command(server) == "fuzzgate replay 0123456789abcdef0123"


def test_sequence_text_names_the_earlier_calls_and_the_failing_tool() -> None:
    assert sequence_text(_finding(_repro())) is None
    text = sequence_text(_finding(_repro((A, C))))
    assert text == (
        'after 2 earlier call(s) on the same server: create {"name":"a","note":"first"}; '
        'close {"force":true,"id":1}; then use'
    )
    server = _finding(_repro((Step("list", {"q": "z" * 200}),) * 7, tool="echo"), Surface.SERVER, "transport")
    many = sequence_text(server)
    assert many is not None and many.endswith("; and 2 more; then echo") and "…" in many


def test_placed_swaps_the_placeholder_and_the_recorded_workspace_for_this_servers() -> None:
    connection: Any = SimpleNamespace(layer=SimpleNamespace(outside="/w/s2/outside"), listener=None)
    arguments = {"a": f"{OUTSIDE}/x", "b": ["/w/s1/outside/y", {"/w/s1/outside": 1}]}
    assert placed(connection, arguments, "/w/s1/outside") == {
        "a": "/w/s2/outside/x",
        "b": ["/w/s2/outside/y", {"/w/s2/outside": 1}],
    }
    assert placed(SimpleNamespace(layer=None, listener=None), arguments, "/w/s1/outside") == arguments  # type: ignore[arg-type]


# Verification's order of tries, with replays faked.


def _verify(
    monkeypatch: pytest.MonkeyPatch, finding: Finding, answer: Oracle, replays: int = 3
) -> tuple[Verification, list[Repro]]:
    async def fake_replay(
        _config: Config,
        _oracles: Any,
        finding: Finding,
        _env: Any,
        _connector: Any,
        repro: Repro | None = None,
        **_: Any,
    ) -> tuple[bool, list[Observation]]:
        return bool(await answer(repro if repro is not None else finding.repro)), []

    monkeypatch.setattr(verify, "replay_once", fake_replay)
    config = Config(target=TargetConfig(kind=TargetKind.STDIO, command="x"), replays=replays)

    async def main() -> Verification:
        verifier = Verifier(VerifySettings.of(config), None, {})  # type: ignore[arg-type]
        async with anyio.create_task_group() as tg:
            tg.start_soon(verifier.serve)
            result = await verifier.finish([(finding, False)], [], math.inf)
            tg.cancel_scope.cancel()
        return result

    return anyio.run(main), answer.tried


def test_a_sequence_that_fails_alone_is_confirmed_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    result, tried = _verify(monkeypatch, _finding(_repro((A, B, C))), Oracle())
    (confirmed,) = result.findings
    # The try alone counts as the first replay; nothing is shrunk.
    assert confirmed.repro.prefix == () and tried == [sequence.alone(_repro((A, B, C)))] * 3
    assert (confirmed.replays, confirmed.reproduced, confirmed.flaky) == (3, 3, False)


def test_a_sequence_is_tried_alone_then_whole_then_shrunk(monkeypatch: pytest.MonkeyPatch) -> None:
    original = _repro((A, B, C, D, E))
    result, tried = _verify(monkeypatch, _finding(original), Oracle("create", "close"))
    (confirmed,) = result.findings
    assert tried[0] == sequence.alone(original) and tried[1] == original
    assert [s.tool for s in confirmed.repro.prefix] == ["create", "close"]
    assert (confirmed.replays, confirmed.reproduced, confirmed.flaky) == (3, 3, False)
    # The replays after the search send the shrunk repro.
    assert tried[-2:] == [confirmed.repro, confirmed.repro]


def test_a_sequence_that_never_reproduces_is_flaky_not_shrunk(monkeypatch: pytest.MonkeyPatch) -> None:
    original = _repro((A, B))
    result, tried = _verify(monkeypatch, _finding(original), Oracle("delete"))
    (finding,) = result.findings
    assert tried[:2] == [sequence.alone(original), original] and len(tried) == 4
    assert finding.repro == original and (finding.replays, finding.reproduced, finding.flaky) == (3, 0, True)


def test_replays_after_the_search_see_the_repro_with_its_workspace(monkeypatch: pytest.MonkeyPatch) -> None:
    # The workspace stays while a call of the repro names it (here the failing call's `id`, a probe's path).
    original = replace(_repro((A, C), arguments={"id": "/w/s1/outside/1"}), workspace="/w/s1/outside")
    result, _ = _verify(monkeypatch, _finding(original), Oracle("close"), replays=1)
    (confirmed,) = result.findings
    assert confirmed.repro.workspace == "/w/s1/outside" and [s.tool for s in confirmed.repro.prefix] == ["close"]


def test_a_long_sequence_tries_the_calls_sharing_a_value_with_the_failing_one_first() -> None:
    # `git_diff` in repository "a" needs the `git_init("a")` made long before.
    init = Step("init", {"repo_path": "a"})
    noise = [Step("status", {"repo_path": f"r{i}"}) for i in range(60)]
    repro = _repro((init, *noise), arguments={"id": 1, "repo_path": "a"})
    oracle = Oracle("init")
    result, kept = _shrink(repro, oracle)
    assert oracle.tried[0].prefix == (init,), "the related calls come first"
    assert result.prefix[0].tool == "init" and len(result.prefix) == 1
    assert kept[0].prefix == (init,)


def test_no_tries_no_server_even_for_the_calls_sharing_a_value() -> None:
    # `shrink_tries = 0`: the repro stays as fuzzing sent it, without a single fresh server.
    init = Step("init", {"repo_path": "a"})
    noise = [Step("status", {"repo_path": f"r{i}"}) for i in range(60)]
    repro = _repro((init, *noise), arguments={"id": 1, "repo_path": "a"})
    oracle = Oracle("init")
    result, kept = _shrink(repro, oracle, tries=0)
    assert oracle.tried == [] and kept == [] and result == repro


def test_rebind_puts_the_fresh_servers_ids_where_the_recorded_ones_went() -> None:
    from fuzzgate.triage.sequence import rebind

    old, new = "3f2a9c1e-0000-4000-8000-000000000001", "77aa0b2c-0000-4000-8000-000000000002"
    bound = {old: new, 7: 9, "ab": "cd"}
    arguments = {"note_id": old, "path": f"/notes/{old}.md", "n": 7, "flag": True, "tags": [old, "ab", "xaby"]}
    assert rebind(arguments, bound) == {
        "note_id": new,
        "path": f"/notes/{new}.md",
        "n": 9,
        "flag": True,
        # A short value is replaced only where it is the whole value.
        "tags": [new, "cd", "xaby"],
    }
    assert rebind(arguments, {}) is arguments


def test_a_step_keeps_what_its_reply_brought_in_json_only_when_there_is_some() -> None:
    from fuzzgate.generate.dictionary import reply_values
    from fuzzgate.model.findings import Step

    produced = reply_values("create_note", '{"structuredContent": {"id": "note-1234abcd", "title": "x"}}')
    assert "note-1234abcd" in produced
    step = Step("create_note", {"text": "a"}, True, produced=produced)
    assert Step.from_json(step.to_json()) == step
    assert "produced" not in Step("get_note", {"note_id": "n"}).to_json()


def _search(steps: int, culprit: int | None, tries: int) -> tuple[int | None, list[int]]:
    """`first_death` over a server that dies once the sequence reaches call `culprit` (never: None)."""
    asked: list[int] = []

    async def dies(cut: int) -> bool:
        asked.append(cut)
        return culprit is not None and cut >= culprit

    return anyio.run(sequence.first_death, steps, dies, tries), asked


@given(steps=st.integers(1, 1000), data=st.data())
def test_the_first_call_the_server_dies_after_is_found_or_nothing_is(steps: int, data: st.DataObject) -> None:
    culprit = data.draw(st.none() | st.integers(1, steps))
    found, asked = _search(steps, culprit, verify.MOVE_TRIES)
    assert len(asked) <= verify.MOVE_TRIES and len(set(asked)) == len(asked)
    if culprit is None:
        assert found is None and asked == [steps]
    else:
        # Never a wrong call: the right one, or none when the tries ran out first.
        assert found in (culprit, None)
        if steps <= sequence.RECENT_STEPS:
            assert found == culprit


def test_the_call_just_before_takes_two_tries() -> None:
    assert _search(30, 30, verify.MOVE_TRIES) == (30, [30, 29])
    assert _search(1, 1, verify.MOVE_TRIES) == (1, [1])
