"""Verification labels, its deadline and the baseline replays, with replays faked (no server)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import anyio
import pytest

from fuzzgate.check import Observation
from fuzzgate.config.model import Config, TargetConfig, TargetKind
from fuzzgate.engine import deadline, verify
from fuzzgate.engine.settings import VerifySettings
from fuzzgate.engine.verify import Verification, Verifier
from fuzzgate.model.findings import DEFAULT_SEVERITY, Details, Finding, Kind, Repro, Severity, Step, Surface
from fuzzgate.model.outcome import CallOutcome, OutcomeStatus
from fuzzgate.plan.budget import STOP_ALLOWANCE_S
from fuzzgate.sandbox.containment import UNHEARD, UNWATCHED, unobserved
from fuzzgate.target.call import AFTER_REPLY_S
from fuzzgate.triage.finding_set import fingerprint


def _finding(fp: str = "f" * 20, arguments: dict[str, Any] | None = None) -> Finding:
    repro = Repro(seed=1, case_index=0, arguments=arguments or {}, transport="stdio")
    return Finding(Kind.CRASH, DEFAULT_SEVERITY[Kind.CRASH], Surface.TOOL, "t", "m", fp, repro)


def _config(replays: int = 3, kind: TargetKind = TargetKind.STDIO) -> Config:
    target = (
        TargetConfig(kind=kind, command="x") if kind is TargetKind.STDIO else TargetConfig(kind=kind, url="http://h")
    )
    return Config(target=target, replays=replays)


Replay = Callable[[Finding], Any]


def _run(
    monkeypatch: pytest.MonkeyPatch,
    answer: Replay,
    config: Config,
    candidates: list[tuple[Finding, bool]],
    unseen: list[Finding] = [],  # noqa: B006 (never mutated)
    deadline_s: float = math.inf,
    before: Callable[[Verifier], Any] | None = None,
    unobserved: dict[Kind, str] | None = None,
) -> Verification:
    async def fake_replay(
        _config: Config, _oracles: Any, finding: Finding, *_: Any, **__: Any
    ) -> tuple[bool, list[Observation]]:
        result = answer(finding)
        if hasattr(result, "__await__"):
            result = await result
        return result, []

    monkeypatch.setattr(verify, "replay_once", fake_replay)

    async def main() -> Verification:
        verifier = Verifier(VerifySettings.of(config), None, {}, unobserved=unobserved)  # type: ignore[arg-type]
        async with anyio.create_task_group() as tg:
            tg.start_soon(verifier.serve)
            if before is not None:
                await before(verifier)
            result = await verifier.finish(candidates, unseen, anyio.current_time() + deadline_s)
            tg.cancel_scope.cancel()
        return result

    return anyio.run(main)


@pytest.mark.parametrize(
    ("results", "ambiguous", "expected"),
    [
        ([True, True, True], False, ("confirmed", 3)),
        ([True, False, True], False, ("flaky", 2)),
        ([False, False, False], False, ("flaky", 0)),
        ([False, False, False], True, ("dropped", 0)),
        ([True, False, False], True, ("flaky", 1)),
    ],
)
def test_labels(
    monkeypatch: pytest.MonkeyPatch, results: list[bool], ambiguous: bool, expected: tuple[str, int]
) -> None:
    answers = iter(results)
    out = _run(monkeypatch, lambda _: next(answers), _config(), [(_finding(), ambiguous)])
    label, reproduced = expected
    ((_, dropped),) = out.triaged
    assert dropped is (label == "dropped")
    if label == "dropped":
        assert out.findings == ()
        return
    (result,) = out.findings
    assert result.reproduced == reproduced and result.replays == 3 and not result.unconfirmed
    assert result.flaky == (label == "flaky")
    assert out.notes == ()


def test_findings_seen_alone_and_costing_no_timeout_are_replayed_first(monkeypatch: pytest.MonkeyPatch) -> None:
    # One replay at a time after fuzzing (an HTTP target): a budget too short for all of them
    # confirms the cheap ones, not a hang's or a crash only seen beside other calls.
    order: list[str] = []

    def replay(finding: Finding) -> bool:
        order.append(finding.name)
        return True

    beside = (replace(_finding("a" * 20), name="beside"), True)
    hang = (replace(_finding("h" * 20), name="hang", kind=Kind.HANG), False)
    slow_beside = (replace(_finding("s" * 20), name="slow_beside", kind=Kind.SLOW), True)
    alone = (replace(_finding("i" * 20), name="alone", kind=Kind.INTERNAL_ERROR), False)
    _run(monkeypatch, replay, _config(replays=1, kind=TargetKind.HTTP), [beside, hang, slow_beside, alone])
    assert order == ["alone", "hang", "beside", "slow_beside"]


def test_with_replays_at_once_one_of_them_runs_the_hangs_replays_from_the_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Two replays at once after fuzzing (a stdio target on two CPUs): the hang, last by cost and
    # seen beside other calls as a hang always is, gets one of them from the start and keeps it for
    # its next replay; the other runs the cheap ones. Put last, its replays, one after another, ran
    # past the deadline the fuzzing deadline had left time for.
    monkeypatch.setattr(deadline, "_CPUS", 2)
    order: list[str] = []

    async def replay(finding: Finding) -> bool:
        order.append(finding.name)
        await anyio.sleep(0.01 if finding.kind is Kind.HANG else 0.05)
        return True

    hang = (replace(_finding("h" * 20), name="hang", kind=Kind.HANG), True)
    cheap = [(replace(_finding(c * 20), name=c, kind=Kind.INTERNAL_ERROR), False) for c in "abc"]
    out = _run(monkeypatch, replay, _config(replays=2), [*cheap, hang])
    assert order[:3] == ["hang", "a", "hang"]
    assert sorted(order) == ["a", "a", "b", "b", "c", "c", "hang", "hang"]
    assert all(f.replays == 2 for f in out.findings)


def test_a_deadline_leaves_findings_unconfirmed_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    async def never(_: Finding) -> bool:
        await anyio.sleep(3600)
        return True

    out = _run(monkeypatch, never, _config(), [(_finding("a" * 20), False), (_finding("b" * 20), True)], deadline_s=0.2)
    assert [f.unconfirmed for f in out.findings] == [True, True]
    assert [f.flaky for f in out.findings] == [False, False]
    assert any("unconfirmed" in note for note in out.notes)


@pytest.mark.parametrize(
    ("severity", "ambiguous", "reported"),
    [
        # Below fail-on (medium), only ever seen beside other calls, never replayed: left out.
        (Severity.LOW, True, False),
        # Seen alone: reported unconfirmed, whatever its severity.
        (Severity.LOW, False, True),
        # At or above fail-on: reported unconfirmed, and it gates.
        (Severity.MEDIUM, True, True),
        (Severity.CRITICAL, True, True),
    ],
)
def test_an_unreplayed_finding_below_fail_on_with_only_ambiguous_evidence_is_not_reported(
    monkeypatch: pytest.MonkeyPatch, severity: Severity, ambiguous: bool, reported: bool
) -> None:
    async def never(_: Finding) -> bool:
        await anyio.sleep(3600)
        return True

    weak = replace(_finding("a" * 20), severity=severity)
    out = _run(monkeypatch, never, _config(), [(weak, ambiguous), (_finding("b" * 20), False)], deadline_s=0.2)
    assert [f.fingerprint for f in out.findings] == (["a" * 20] if reported else []) + ["b" * 20]
    assert all(f.unconfirmed for f in out.findings)
    assert [dropped for _, dropped in out.triaged] == [not reported, False]
    said = [note for note in out.notes if note.startswith("1 finding(s) below fail-on")]
    assert len(said) == (0 if reported else 1) and all(note.endswith("not reported") for note in said)


def test_replays_take_turns_so_a_deadline_spreads_them(monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[str] = []

    def record(finding: Finding) -> bool:
        sent.append(finding.fingerprint[0])
        return True

    findings = [(_finding(c * 20), False) for c in "abc"]
    _run(monkeypatch, record, _config(replays=2), findings)
    # Round by round: every finding's first replay comes before any second one.
    assert sorted(sent[:3]) == ["a", "b", "c"] and sorted(sent[3:]) == ["a", "b", "c"]


def test_baseline_entries_are_replayed_and_unfinished_ones_stay_unverified(monkeypatch: pytest.MonkeyPatch) -> None:
    async def answer(finding: Finding) -> bool:
        if finding.fingerprint.startswith("s"):
            await anyio.sleep(3600)
        return finding.fingerprint.startswith("k")

    unseen = [_finding("k" * 20), _finding("x" * 20), _finding("s" * 20)]
    out = _run(monkeypatch, answer, _config(replays=2), [], unseen, deadline_s=0.3)
    assert out.baseline_failing == {"k" * 20}
    assert out.baseline_unverified == {"s" * 20}
    assert "1 baseline entry was not replayed within the budget; it stays known" in out.notes


def test_an_ssrf_baseline_entry_is_not_replayed_where_no_listener_could_see_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # Replayed without the listener, its canary URL leads nowhere: the entry read as fixed.
    sent: list[str] = []

    def answer(finding: Finding) -> bool:
        sent.append(finding.fingerprint)
        return False

    ssrf = replace(_finding("u" * 20), kind=Kind.SSRF)
    unseen = [ssrf, _finding("x" * 20)]
    out = _run(monkeypatch, answer, _config(replays=1), [], unseen, unobserved={Kind.SSRF: UNHEARD})
    assert sent == ["x" * 20]
    assert out.baseline_unverified == {"u" * 20} and not out.baseline_failing
    assert (
        "1 baseline entry was not replayed: its evidence is a request only the SSRF listener sees, and this "
        "server has none (no sandbox, or no loopback of its own: the containment line says which); it stays known"
    ) in out.notes
    # Where the server has a listener, the entry is replayed like any other.
    sent.clear()
    heard = _run(monkeypatch, answer, _config(replays=1), [], unseen)
    assert sorted(sent) == ["u" * 20, "x" * 20] and heard.baseline_unverified == frozenset()


def test_an_out_of_memory_baseline_entry_is_not_replayed_without_the_memory_watch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sent: list[str] = []

    def answer(finding: Finding) -> bool:
        sent.append(finding.fingerprint)
        return False

    hoarding = replace(_finding("m" * 20), kind=Kind.OUT_OF_MEMORY)
    blind = {Kind.SSRF: UNHEARD, Kind.OUT_OF_MEMORY: UNWATCHED}
    out = _run(monkeypatch, answer, _config(replays=1), [], [hoarding, _finding("x" * 20)], unobserved=blind)
    assert sent == ["x" * 20] and out.baseline_unverified == {"m" * 20}
    assert (
        "1 baseline entry was not replayed: its evidence is the memory watch stopping the server, and the watch "
        'is off here (memory_limit = "off", or no /proc to read); it stays known'
    ) in out.notes


def test_what_a_containment_cannot_show_is_said_per_kind() -> None:
    assert unobserved(None, 2 << 30) == {Kind.SSRF: UNHEARD}
    assert unobserved(None, None) == {Kind.SSRF: UNHEARD, Kind.OUT_OF_MEMORY: UNWATCHED}


def test_a_redacted_baseline_repro_that_passes_proves_no_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    redacted = replace(_finding("r" * 20), repro=replace(_finding().repro, redacted=True))
    out = _run(monkeypatch, lambda finding: False, _config(replays=1), [], [redacted, _finding("x" * 20)])
    assert out.baseline_failing == frozenset()
    assert out.baseline_unverified == {"r" * 20}, "the plain entry that passed is fixed; the redacted one stays"
    assert any("redacted repro" in note for note in out.notes)


def test_a_new_repro_restarts_its_tally(monkeypatch: pytest.MonkeyPatch) -> None:
    def answer(finding: Finding) -> bool:
        return finding.repro.arguments == {"small": 1}

    big = _finding(arguments={"big": "x" * 40})
    small = _finding(arguments={"small": 1})

    async def offer_big(verifier: Verifier) -> None:
        verifier.offer(big, False)

    out = _run(monkeypatch, answer, _config(), [(small, False)], before=offer_big)
    (result,) = out.findings
    assert result.repro.arguments == {"small": 1}
    assert (result.replays, result.reproduced, result.flaky) == (3, 3, False)


def test_an_unreachable_http_server_leaves_the_finding_unconfirmed(monkeypatch: pytest.MonkeyPatch) -> None:
    from fuzzgate.model.errors import TargetError

    def down(_: Finding) -> bool:
        raise TargetError("gone")

    out = _run(monkeypatch, down, _config(kind=TargetKind.HTTP), [(_finding(), False)])
    (result,) = out.findings
    # Seen, never replayed: neither confirmed nor dropped, and it fails the gate as unconfirmed.
    assert (result.replays, result.unconfirmed, result.flaky) == (0, True, False)
    assert out.triaged == ((result, False),)
    (note,) = out.notes
    assert "could not be reached" in note and "command" in note and "unconfirmed" in note
    # An HTTP target fuzzgate starts: the fresh server could not be started.
    served = Config(target=TargetConfig(kind=TargetKind.HTTP, url="http://h", command="x"), replays=3)
    out = _run(monkeypatch, down, served, [(_finding(), False)])
    assert out.findings[0].unconfirmed
    assert [note for note in out.notes if "a fresh server could not be started" in note]
    # Below fail-on and only seen beside other calls: still reported, since no replay could be tried.
    weak = replace(_finding(), severity=Severity.LOW)
    out = _run(monkeypatch, down, _config(kind=TargetKind.HTTP), [(weak, True)])
    assert [f.unconfirmed for f in out.findings] == [True]


def test_a_baseline_entry_whose_server_cannot_start_is_not_replayed_and_stays_known(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from fuzzgate.model.errors import TargetError

    def unstartable(finding: Finding) -> bool:
        if finding.fingerprint.startswith("u"):
            raise TargetError("could not start the stdio server `x`: no answer to initialize within 1s")
        return False

    unseen = [_finding("u" * 20), _finding("x" * 20)]
    out = _run(monkeypatch, unstartable, _config(replays=2), [], unseen)
    # Not shown fixed: known, like an entry the budget left unreplayed; the other one was replayed.
    assert out.baseline_unverified == {"u" * 20}
    assert out.baseline_failing == frozenset()
    (note,) = out.notes
    assert "1 baseline entry was not replayed" in note and note.endswith("it stays known")
    assert "no answer to initialize within 1s" in note


def test_a_repro_settled_without_the_calls_that_named_the_workspace_drops_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # The workspace is a per-run directory: a repro keeps it only while one of its calls names it
    # (a probe), or a baseline file of the same bug would differ from run to run.
    probe = Step(tool="t", arguments={"path": "/var/tmp/fuzzgate-x/s1/outside/../etc"})
    finding = _finding(arguments={"n": 1})
    finding = replace(
        finding, repro=replace(finding.repro, prefix=(probe,), workspace="/var/tmp/fuzzgate-x/s1/outside")
    )
    assert finding.repro.narrowed() is finding.repro
    out = _run(monkeypatch, lambda f: True, _config(), [(finding, False)])
    (result,) = out.findings
    assert result.repro.prefix == () and result.repro.workspace is None


def _on(
    name: str, fp: str, *, kind: Kind = Kind.PROTOCOL_ERROR, signature: tuple[str, ...] | None = ("non_json",)
) -> Finding:
    return replace(_finding(fp), kind=kind, severity=Severity.HIGH, name=name, signature=signature)


def test_a_finding_only_seen_beside_others_with_another_calls_evidence_is_that_calls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`wait` hung while `tail` printed to stdout: `wait`'s protocol error is `tail`'s. Its
    replays wait behind every other one, and it is dropped though none ran."""
    sent: list[str] = []

    async def replay(finding: Finding) -> bool:
        sent.append(finding.name)
        if finding.name == "wait":
            await anyio.sleep(3600)
        return True

    beside, alone = _on("wait", "a" * 20), _on("tail", "b" * 20)
    out = _run(monkeypatch, replay, _config(), [(beside, True), (alone, False)], deadline_s=0.5)
    assert sent[0] == "tail" and sent.count("tail") == 3
    assert [f.fingerprint for f in out.findings] == ["b" * 20]
    assert out.triaged[0] == (replace(beside, replays=0, reproduced=0, unconfirmed=True), True)
    assert {fp: other.fingerprint for fp, other in out.explained.items()} == {"a" * 20: "b" * 20}
    said = "1 finding(s) seen only beside other calls showed the same evidence"
    assert any(note.startswith(said) for note in out.notes)


@pytest.mark.parametrize(
    ("beside", "ambiguous", "alone_seen_alone", "reported"),
    [
        # Reproduced on a fresh server itself: its own bug.
        (_on("wait", "a" * 20), True, True, "replayed"),
        # Seen alone itself.
        (_on("wait", "a" * 20), False, True, "yes"),
        # The other call's was only seen beside others too, and never reproduced: nothing names it.
        (_on("wait", "a" * 20), True, False, "yes"),
        # A hang is the call's own time.
        (_on("wait", "a" * 20, kind=Kind.HANG, signature=()), True, True, "yes"),
        # Other evidence.
        (_on("wait", "a" * 20, signature=("wrong_id",)), True, True, "yes"),
        # No signature kept (it would have quoted a secret): nothing to compare.
        (_on("wait", "a" * 20, kind=Kind.INTERNAL_ERROR, signature=None), True, True, "yes"),
    ],
)
def test_what_another_call_does_not_explain_is_reported(
    monkeypatch: pytest.MonkeyPatch, beside: Finding, ambiguous: bool, alone_seen_alone: bool, reported: str
) -> None:
    async def replay(finding: Finding) -> bool:
        never = "tail" if not alone_seen_alone else None
        if finding.name in ("wait" if reported != "replayed" else None, never):
            await anyio.sleep(3600)
        return True

    alone_signature = {Kind.HANG: (), Kind.INTERNAL_ERROR: None}.get(beside.kind, ("non_json",))
    alone = _on("tail", "b" * 20, kind=beside.kind, signature=alone_signature)
    out = _run(monkeypatch, replay, _config(), [(beside, ambiguous), (alone, not alone_seen_alone)], deadline_s=0.5)
    (kept,) = [f for f in out.findings if f.name == "wait"]
    assert kept.reproduced == (3 if reported == "replayed" else 0)
    assert out.explained == {}


def test_the_fuzzing_deadline_reserves_no_time_for_another_calls_symptom(monkeypatch: pytest.MonkeyPatch) -> None:
    async def check(verifier: Verifier) -> None:
        def pending() -> int:
            return verifier.backlog(1.0, {}, default_s=0.1).replays

        verifier.offer(_on("wait", "a" * 20), True)
        assert pending() == 3
        verifier.offer(_on("tail", "b" * 20), False)
        assert pending() == 3

    _run(monkeypatch, lambda _: True, _config(), [], before=check)


def test_a_sequence_repro_not_yet_settled_reserves_one_try_beyond_its_replays(monkeypatch: pytest.MonkeyPatch) -> None:
    # Its first replay sends the failing call alone, and counts as a replay when that reproduces;
    # the whole sequence is the one try more when it does not, and for a crash, the sequence
    # without its failing call one more again. Shrinking is not reserved for.
    async def check(verifier: Verifier) -> None:
        finding = replace(_finding("s" * 20), kind=Kind.INTERNAL_ERROR)
        sequence = replace(finding, repro=replace(finding.repro, prefix=(Step("open", {}),)))
        verifier.offer(sequence, False)
        assert verifier.backlog(1.0, {}, default_s=0.1).replays == 3 + 1
        verifier.offer(_finding("p" * 20), False)
        assert verifier.backlog(1.0, {}, default_s=0.1).replays == 3 + 1 + 3
        crash = _finding("c" * 20)
        verifier.offer(replace(crash, repro=replace(crash.repro, prefix=(Step("open", {}),))), False)
        assert verifier.backlog(1.0, {}, default_s=0.1).replays == 3 + 1 + 3 + 3 + 2

    _run(monkeypatch, lambda _: True, _config(), [], before=check)


def test_an_unmet_baseline_entry_reserves_its_replays_one_after_another(monkeypatch: pytest.MonkeyPatch) -> None:
    # A crash entry fuzzing has not met: 3 replays, each its call, the wait for a death after the
    # reply and the ping, after fuzzing's server has stopped (0.5 s, nothing measured), plus the
    # first server's start (1 s; no spare waiting). It was counted as one quick call (0.1 s here), so
    # time-boxed runs left it "not replayed within the budget" and never showed it fixed.
    crash = _finding("c" * 20)
    ssrf = replace(_finding("u" * 20), kind=Kind.SSRF)

    async def check(verifier: Verifier) -> None:
        backlog = verifier.backlog(1.0, {}, default_s=0.1, unseen=[crash, ssrf])
        assert backlog.replays == 3  # the ssrf entry is not replayed where no listener could see it
        # Each replay stops its server too (no spares: 0.5 s, nothing measured).
        one = 0.1 + AFTER_REPLY_S + 0.1 + STOP_ALLOWANCE_S
        assert backlog.longest_s == pytest.approx(STOP_ALLOWANCE_S + 3 * one + 1.0)
        assert backlog.seconds == pytest.approx(3 * one + 3 * 1.0)

    _run(monkeypatch, lambda _: True, _config(), [], before=check, unobserved={Kind.SSRF: UNHEARD})


def test_what_the_replay_of_a_finding_seen_beside_others_shows_instead_is_a_finding_of_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`sync` hung while another call crashed the server: seen as a crash beside that call. Alone on
    a fresh server it hangs: the crash is dropped, and the hang is found and confirmed."""
    hang = Observation(Kind.HANG, "no reply within 5.0s", (), Details(error=None))
    crash = replace(_on("sync", "c" * 20, kind=Kind.CRASH, signature=("exit",)), severity=Severity.CRITICAL)
    replayed: list[Kind] = []

    async def fake_replay(
        _config: Config, _oracles: Any, finding: Finding, *_: Any, **__: Any
    ) -> tuple[bool, list[Observation]]:
        replayed.append(finding.kind)
        return finding.kind is Kind.HANG, [hang]

    monkeypatch.setattr(verify, "replay_once", fake_replay)

    async def main() -> Verification:
        verifier = Verifier(VerifySettings.of(_config()), None, {})  # type: ignore[arg-type]

        def seen(observation: Observation, tool: str, repro: Repro) -> None:
            found = Finding(observation.kind, Severity.MEDIUM, Surface.TOOL, tool, observation.message, "h" * 20, repro)
            verifier.offer(found, observation.ambiguous)

        verifier.on_seen = seen
        async with anyio.create_task_group() as tg:
            tg.start_soon(verifier.serve)
            result = await verifier.finish([(crash, True)], [], anyio.current_time() + 30)
            tg.cancel_scope.cancel()
        return result

    out = anyio.run(main)
    (found,) = out.findings
    assert (found.kind, found.name, found.replays, found.reproduced) == (Kind.HANG, "sync", 3, 3)
    assert [(f.kind, dropped) for f, dropped in out.triaged] == [(Kind.CRASH, True), (Kind.HANG, False)]
    assert replayed.count(Kind.CRASH) == 3 and replayed.count(Kind.HANG) == 3


_KILLED = ("exit", "killed by SIGTERM")


def _crash_of(name: str, *steps: str) -> Finding:
    """A crash of `name` as fuzzing records it: after `steps`, with its real fingerprint."""
    repro = Repro(seed=1, case_index=0, arguments={}, transport="stdio", prefix=tuple(Step(s, {}) for s in steps))
    fp = fingerprint(Kind.CRASH, Surface.TOOL, name, _KILLED)
    return Finding(Kind.CRASH, Severity.CRITICAL, Surface.TOOL, name, "m", fp, repro, signature=_KILLED)


Killer = Callable[[list[str]], int | None]
"""Of the calls a fresh server gets, in order, the index of the one it dies right after answering."""


def _moving_run(
    monkeypatch: pytest.MonkeyPatch, candidate: Finding, killer: Killer
) -> tuple[Verification, list[tuple[str, tuple[str, ...]]]]:
    """Verify `candidate` against a server `killer` says dies right after answering a call: the
    next call sees it die during it, or the replay's watch after the last one; a death before the
    failing call leaves no outcome, as `replay_once` does."""
    sent: list[tuple[str, tuple[str, ...]]] = []

    async def fake_replay(
        _config: Config,
        _oracles: Any,
        finding: Finding,
        _env: Any,
        _connector: Any,
        repro: Repro | None = None,
        *,
        outcomes: list[CallOutcome] | None = None,
        **_: Any,
    ) -> tuple[bool, list[Observation]]:
        repro = repro if repro is not None else finding.repro
        calls = [*(step.tool for step in repro.prefix), finding.tool]
        sent.append((finding.tool, tuple(calls[:-1])))
        killed = killer(calls)
        if killed is not None and killed < len(calls) - 2:
            return False, []
        died = killed is not None
        during = killed == len(calls) - 2
        status = OutcomeStatus.CLOSED if during else OutcomeStatus.OK
        if outcomes is not None:
            outcomes.append(CallOutcome(status, 0.1, died_after_reply=died and not during))
        if not died:
            return False, []
        message = "the server died during the call" if during else "the server died right after answering the call"
        observation = Observation(Kind.CRASH, message, _KILLED, Details(error=None))
        return fingerprint(Kind.CRASH, Surface.TOOL, finding.tool, _KILLED) == finding.fingerprint, [observation]

    monkeypatch.setattr(verify, "replay_once", fake_replay)

    async def main() -> Verification:
        verifier = Verifier(VerifySettings.of(_config()), None, {})  # type: ignore[arg-type]

        def seen(observation: Observation, tool: str, repro: Repro) -> Finding:
            fp = fingerprint(observation.kind, Surface.TOOL, tool, observation.signature)
            found = Finding(
                observation.kind, Severity.CRITICAL, Surface.TOOL, tool, observation.message, fp, repro,
                signature=observation.signature,
            )  # fmt: skip
            verifier.offer(found, observation.ambiguous)
            return found

        verifier.on_seen = seen
        async with anyio.create_task_group() as tg:
            tg.start_soon(verifier.serve)
            result = await verifier.finish([(candidate, False)], [], anyio.current_time() + 30)
            tg.cancel_scope.cancel()
        return result

    return anyio.run(main), sent


def _first(tool: str, after: str | None = None) -> Killer:
    """A server that dies after the first call of `tool` (that follows a call of `after`)."""

    def killer(calls: list[str]) -> int | None:
        return next((i for i, c in enumerate(calls) if c == tool and (after is None or after in calls[:i])), None)

    return killer


def test_a_crash_the_call_before_caused_is_moved_to_that_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """`reload` answers, then the server dies: fuzzing saw it die during `echo`, sent next, after
    `add`, which came in before it did. The crash is traced back to `reload` and reported there."""
    echo = _crash_of("echo", "list", "reload", "add")
    out, sent = _moving_run(monkeypatch, echo, _first("reload"))
    # echo alone; the sequence stopped after add (dies during add), after reload (dies after it),
    # after list (survives): the first call the server dies after is reload.
    assert sent[:4] == [("echo", ()), ("add", ("list", "reload")), ("reload", ("list",)), ("list", ())]
    (found,) = out.findings
    assert (found.name, found.replays, found.reproduced, found.repro.prefix) == ("reload", 3, 3, ())
    assert found.message == "the server died right after answering the call"
    assert [(f.name, dropped) for f, dropped in out.triaged] == [("echo", True), ("reload", False)]
    assert {fp: f.name for fp, f in out.moved.items()} == {echo.fingerprint: "reload"}
    assert any(note.startswith("1 crash(es) came from the call before") for note in out.notes)


def test_the_call_that_killed_the_server_is_found_far_back_in_few_tries(monkeypatch: pytest.MonkeyPatch) -> None:
    steps = [f"step{i}" for i in range(60)]
    steps[21] = "reload"
    echo = _crash_of("echo", *steps)
    out, sent = _moving_run(monkeypatch, echo, _first("reload"))
    (found,) = out.findings
    assert found.name == "reload" and found.reproduced == 3
    # Back 1, 2, 4 ... calls from the end, then halving: a dozen fresh servers, not one per call.
    search = sent[1 : sent.index(("reload", tuple(steps[:21]))) + 1]
    assert len(search) <= 12


def test_a_crash_its_own_call_caused_earlier_in_the_sequence_is_settled_from_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # reload kills the server after an open: fuzzing saw the death during the reload after add.
    reload = _crash_of("reload", "open", "reload", "add")
    out, _ = _moving_run(monkeypatch, reload, _first("reload", after="open"))
    (found,) = out.findings
    assert (found.fingerprint, found.replays, found.reproduced, found.flaky) == (reload.fingerprint, 3, 3, False)
    assert [step.tool for step in found.repro.prefix] == ["open"] and out.moved == {}


def test_a_crash_the_calls_before_do_not_cause_is_settled_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    # echo crashes after an add: without echo the server lives, so the whole sequence is tried next.
    echo = _crash_of("echo", "list", "add")
    out, sent = _moving_run(monkeypatch, echo, _first("echo", after="add"))
    assert sent[:3] == [("echo", ()), ("add", ("list",)), ("echo", ("list", "add"))]
    (found,) = out.findings
    assert found.name == "echo" and found.reproduced == 3 and out.moved == {}
