"""Observing a call to its end at fuzzing's deadline: the grace covers every way a call can end,
never a dead server's last words and the collector's read both (nothing is collected from a server
that lost its connection), so the coverage collector does not make fuzzing stop earlier."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest

from fuzzgate.config.model import TargetConfig, TargetKind
from fuzzgate.engine import deadline
from fuzzgate.engine.collector import COLLECT_TIMEOUT_S
from fuzzgate.engine.deadline import (
    Backlog,
    backlog_of,
    baseline_replay_s,
    fuzz_deadline,
    observe_s,
    parallel_replays,
    replay_wait_s,
    side_by_side,
    stop_allowance,
)
from fuzzgate.engine.feedback import call_coverage, lost
from fuzzgate.learn.features import Feedback, Signal, SignalKind
from fuzzgate.learn.feed import Feed
from fuzzgate.model.findings import DEFAULT_SEVERITY, Finding, Kind, Repro, Step, Surface
from fuzzgate.model.outcome import AfterTimeout, CallOutcome, OutcomeStatus
from fuzzgate.plan.budget import HTTP_STOP_ALLOWANCE_S, STOP_ALLOWANCE_S, TimeBox
from fuzzgate.target.call import AFTER_REPLY_S, FOLLOW_UP_S
from fuzzgate.target.settle import DEATH_S

TARGET = TargetConfig(kind=TargetKind.STDIO, command="server", timeout_ms=5000)


@pytest.mark.parametrize("traced", [False, True])
def test_the_grace_covers_every_way_a_call_ends(traced: bool) -> None:
    timeout = TARGET.timeout_ms / 1000
    collect = COLLECT_TIMEOUT_S if traced else 0.0
    ways = {
        "answered at its timeout, then collected": timeout + collect,
        "timed out, alive or stuck after the ping, then collected": timeout + FOLLOW_UP_S + collect,
        "timed out, dead after the ping": timeout + FOLLOW_UP_S + DEATH_S,
        "closed at its timeout": timeout + DEATH_S,
    }
    grace = observe_s(TARGET, traced=traced)
    assert all(grace >= took for took in ways.values()), (grace, ways)
    # And no more than the longest of them: the grace is what fuzzing gives up at its end.
    assert grace == max(ways.values())


def test_the_collector_does_not_stop_fuzzing_earlier() -> None:
    box = TimeBox(12.0)
    none = Backlog(0, 0.0, 0.0)
    traced = fuzz_deadline(box, TARGET, backlog=none, observe=observe_s(TARGET, traced=True))
    untraced = fuzz_deadline(box, TARGET, backlog=none, observe=observe_s(TARGET, traced=False))
    assert traced == untraced == box.fuzz_end(0.0)


@dataclass
class _Channel:
    collected: list[int] = field(default_factory=list)

    async def collect(self, timeout_s: float) -> None:
        self.collected.append(1)


@dataclass
class _Connection:
    coverage: _Channel

    def alive(self) -> bool:
        return True


@dataclass
class _Plan:
    info: Any


@dataclass
class _Info:
    name: str = "tool"
    surface: Surface = Surface.TOOL


@pytest.mark.parametrize(
    ("outcome", "collected"),
    [
        (CallOutcome(OutcomeStatus.OK, 0.01), 1),
        (CallOutcome(OutcomeStatus.TIMEOUT, 5.0, after_timeout=AfterTimeout.STUCK), 1),
        (CallOutcome(OutcomeStatus.TIMEOUT, 5.0, after_timeout=AfterTimeout.DIED), 0),
        (CallOutcome(OutcomeStatus.CLOSED, 0.5), 0),
    ],
)
def test_a_server_that_lost_its_connection_is_not_collected_from(outcome: CallOutcome, collected: int) -> None:
    channel = _Channel()
    # A process that has not exited yet: the collector's pipe may stay open as long as it does.
    connection = _Connection(channel)
    feedback = Feedback(Signal(SignalKind.COVERAGE, "coverage"))
    feed = Feed([])

    async def main() -> None:
        await call_coverage(feedback, connection, feed, _Plan(_Info()), outcome)  # type: ignore[arg-type]

    anyio.run(main)
    assert len(channel.collected) == collected
    assert lost(outcome) is (collected == 0)


def test_a_replays_stop_costs_what_was_measured_else_what_its_transport_usually_takes() -> None:
    http = TargetConfig(kind=TargetKind.HTTP, url="http://127.0.0.1:1/mcp", command="server", timeout_ms=5000)
    # Warm spares stop beside the next replay: nothing to add.
    assert stop_allowance(TARGET, spares=True, measured=0.4) == 0.0
    assert stop_allowance(http, spares=False, measured=0.03) == 0.03
    assert stop_allowance(TARGET, spares=False, measured=None) == STOP_ALLOWANCE_S
    assert stop_allowance(http, spares=False, measured=None) == HTTP_STOP_ALLOWANCE_S < STOP_ALLOWANCE_S
    # Six replays of 0.01 s calls on servers starting in 0.34 s (the reference `everything` server
    # over HTTP): the stop estimate was most of the backlog.
    backlog = backlog_of([(6, "fp")], 0.34, {"fp": 0.01}, default_s=0.1, timeout_s=5.0, stop_s=0.03, warm=0)
    assert backlog.seconds == pytest.approx(6 * (0.34 + 0.01 + 0.03))


def test_http_servers_in_the_sandbox_replay_side_by_side(monkeypatch: pytest.MonkeyPatch) -> None:
    """An HTTP server fuzzgate starts in the sandbox has a loopback, and a port, of its own: its
    fresh servers replay beside fuzzing and several at once after it, as a stdio server's do, and
    the fuzzing deadline divides the backlog between them. Otherwise one HTTP server at a time."""
    monkeypatch.setattr(deadline, "_CPUS", 4)
    http = TargetConfig(kind=TargetKind.HTTP, command="server", url="http://127.0.0.1:9/mcp", timeout_ms=5000)
    assert side_by_side(http, relayed=True) and side_by_side(TARGET, relayed=False)
    assert not side_by_side(http, relayed=False)
    assert parallel_replays(http, relayed=True) == parallel_replays(TARGET) == 4
    assert parallel_replays(http) == 1
    box = TimeBox(60.0)
    backlog = Backlog(replays=12, seconds=24.0, longest_s=2.0)
    alone = fuzz_deadline(box, http, backlog=backlog, observe=0.0)
    beside = fuzz_deadline(box, http, backlog=backlog, observe=0.0, relayed=True)
    assert beside > alone


def _entry(kind: Kind, prefix: int = 0) -> Finding:
    steps = tuple(Step("t", {}) for _ in range(prefix))
    repro = Repro(seed=1, case_index=0, arguments={}, transport="stdio", prefix=steps)
    return Finding(kind, DEFAULT_SEVERITY[kind], Surface.TOOL, "t", "m", "f" * 20, repro)


def test_a_baseline_entry_replay_costs_what_its_kind_waits_for() -> None:
    # A hang's replay waits its whole timeout and the ping; a crash's waits for a death after the reply.
    assert baseline_replay_s(_entry(Kind.HANG), call_s=0.02, timeout_s=5.0) == pytest.approx(5.0 + FOLLOW_UP_S)
    assert baseline_replay_s(_entry(Kind.CRASH), call_s=0.02, timeout_s=5.0) == pytest.approx(0.04 + AFTER_REPLY_S)
    assert baseline_replay_s(_entry(Kind.OUT_OF_MEMORY), call_s=0.02, timeout_s=5.0) == pytest.approx(
        0.04 + AFTER_REPLY_S
    )
    assert baseline_replay_s(_entry(Kind.SCHEMA_VIOLATION), call_s=0.02, timeout_s=5.0) == pytest.approx(0.02)
    assert baseline_replay_s(_entry(Kind.SCHEMA_VIOLATION, prefix=3), call_s=0.02, timeout_s=5.0) == pytest.approx(0.08)


def test_an_unmet_baseline_entrys_replays_run_one_after_another_once_fuzzings_server_stopped() -> None:
    # Three replays of 0.54 s each, after a 0.5 s stop, the first on the spare waiting: the next two
    # each wait for a server started as the one before began (0.7 s), however many run at once.
    backlog = backlog_of(
        [], 0.7, {}, default_s=0.02, timeout_s=5.0, stop_s=0.0, warm=1, unseen=[(3, 0.54)], unseen_after_s=0.5
    )
    assert backlog.replays == 3
    assert backlog.longest_s == pytest.approx(0.5 + 0.54 + 2 * 0.7)
    assert backlog.seconds == pytest.approx(3 * 0.54 + 2 * 0.7)


def test_a_findings_replays_are_one_chain_and_each_waits_what_its_kind_waits_for() -> None:
    # A hang's three replays (the verifier queues the next once one is done), each its whole timeout
    # and the ping after it: 18 s at the least, however many replays run at once. Counted as one
    # replay (5 s) beside a crash's, the fuzzing deadline left the last two no time.
    durations = {"hang": 5.0, "crash": 0.02}
    waits = {"hang": replay_wait_s(Kind.HANG, 5.0), "crash": replay_wait_s(Kind.CRASH, 0.02)}
    backlog = backlog_of(
        [(3, "hang"), (3, "crash")], 0.7, durations, default_s=5.0, timeout_s=5.0, stop_s=0.0, warm=2, waits=waits
    )
    hang_s = 5.0 + FOLLOW_UP_S
    crash_s = 0.02 + AFTER_REPLY_S + 0.02
    assert backlog.longest_s == pytest.approx(3 * hang_s)
    assert backlog.seconds == pytest.approx(3 * hang_s + 3 * crash_s + 4 * 0.7)
    box = TimeBox(120.0)
    assert box.verify_end() - fuzz_deadline(box, TARGET, backlog=backlog, observe=0.0) >= 3 * hang_s
    # A crash's quick replays are bound by their servers' starts: one after another, each next one
    # waits for its server.
    crashes = backlog_of([(3, "crash")], 0.7, durations, default_s=5.0, timeout_s=5.0, stop_s=0.0, warm=1, waits=waits)
    assert crashes.longest_s == pytest.approx(crash_s + 2 * 0.7)
    assert replay_wait_s(Kind.SCHEMA_VIOLATION, 0.02) == 0.0
