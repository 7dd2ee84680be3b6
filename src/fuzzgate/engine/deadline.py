"""Fuzzing's deadline and its watchdog: what verification still has to run and what it costs
(`backlog_of`), when fuzzing must stop for it to fit (`fuzz_deadline`), how long observing one call
to its end takes (`observe_s`), and the watch that stops new calls at the deadline, gives the calls
in flight that grace and names those it cuts off."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import anyio

from fuzzgate.config.model import TargetConfig, TargetKind
from fuzzgate.engine.collector import COLLECT_TIMEOUT_S
from fuzzgate.model.findings import Finding, Kind
from fuzzgate.plan.budget import HTTP_STOP_ALLOWANCE_S, STOP_ALLOWANCE_S, TimeBox
from fuzzgate.plan.selection import Scheduler
from fuzzgate.target.call import AFTER_REPLY_S, FOLLOW_UP_S, WATCHED_AFTER_REPLY
from fuzzgate.target.settle import DEATH_S

_WATCH_S = 0.05
REPLAYS_IN_PARALLEL = 4
"""At most this many fresh stdio servers replay at once, and no more than there are CPUs: servers
starting side by side on fewer cores only slow each other down."""
_CPUS = os.cpu_count() or 1
"""Read once: the deadline asks for it before every case."""


def side_by_side(target: TargetConfig, *, relayed: bool) -> bool:
    """Whether fresh servers can run beside the one fuzzing: a stdio server's are processes of their
    own, and so is an HTTP server fuzzgate starts in the sandbox (`relayed`), on a loopback, and a
    port, of its own. Without the sandbox an HTTP server holds the URL's port, and a server the user
    started is one server."""
    return target.kind is TargetKind.STDIO or relayed


def parallel_replays(target: TargetConfig, *, relayed: bool = False) -> int:
    """How many replays run at once once fuzzing is over (`side_by_side`: else one at a time)."""
    if not side_by_side(target, relayed=relayed):
        return 1
    return max(1, min(REPLAYS_IN_PARALLEL, _CPUS))


@dataclass(frozen=True, slots=True)
class Backlog:
    """The replays verification still has to run, for the fuzzing deadline (`Verifier.backlog`)."""

    replays: int
    seconds: float
    """All of them one after another: their servers' starts (less the spares waiting) and calls."""
    longest_s: float
    """The longest finding's (or baseline entry's) replays, one after another: no number of
    replays at once makes verification shorter."""


def backlog_of(
    pending: Sequence[tuple[int, str]],
    start_s: float,
    durations: Mapping[str, float],
    *,
    default_s: float,
    timeout_s: float,
    stop_s: float,
    warm: int,
    waits: Mapping[str, float] | None = None,
    unseen: Sequence[tuple[int, float]] = (),
    unseen_after_s: float = 0.0,
) -> Backlog:
    """What the `pending` replays (a count per fingerprint, "" for a baseline entry's) cost: each
    one's server start (`start_s`; none for the `warm` spares already waiting), its failing call
    (the longest fuzzing saw of its fingerprint in `durations`, else `default_s`; at most
    `timeout_s`) and what its kind waits for after it (`waits`, per fingerprint: `replay_wait_s`),
    and stopping its server (`stop_s`: `stop_allowance`). A finding's replays run one after another
    (the verifier queues the next once one is done), so its count of them together may be the
    longest. `unseen`: the baseline entries fuzzing has not met, each as its replays and what the
    calls of one take (`baseline_replay_s`): they too run one after another, and only once
    fuzzing's server has stopped (`unseen_after_s`)."""
    waits = waits or {}
    replays = 0
    calls_s = longest = 0.0
    for count, key in pending:
        one_s = min(durations.get(key, default_s) if key else default_s, timeout_s) + waits.get(key, 0.0) + stop_s
        replays += count
        calls_s += count * one_s
        longest = max(longest, _chain_s(count, one_s, start_s))
    for count, seconds in unseen:
        replays += count
        calls_s += count * (seconds + stop_s)
        longest = max(longest, unseen_after_s + _chain_s(count, seconds + stop_s, start_s))
    return Backlog(replays, calls_s + max(0, replays - warm) * start_s, longest + (start_s if not warm else 0.0))


def _chain_s(count: int, one_s: float, start_s: float) -> float:
    """`count` replays of one finding, one after another, each taking `one_s` on its fresh server
    (the first's start is `backlog_of`'s to add): the server of each next one starts while the one
    before it runs (a spare is kept for a job that may queue another, `Verifier._wanted`), so it
    waits for whichever of the two takes longer. Counted as one replay, a hang's three replays
    (each a whole timeout) got a third of the time they take, and the last ones were cut off."""
    if count <= 0:
        return 0.0
    return one_s + (count - 1) * max(one_s, start_s)


def baseline_replay_s(entry: Finding, *, call_s: float, timeout_s: float) -> float:
    """What one replay of a baseline entry fuzzing has not met takes besides its server's start and
    stop: the calls of its prefix and its failing call, each `call_s` (the slowest call fuzzing
    saw), but a hang's whole timeout and the ping after it, and for a crash the wait for a death
    right after the reply and the ping (`engine.replay`). Counted as one quick call each, the
    deadline left a crash's replay 0.2 s of the 0.7 s it takes: no baseline entry fuzzing did not
    meet again was ever replayed, so none was ever shown fixed."""
    prefix_s = len(entry.repro.prefix) * call_s
    failing_s = timeout_s if entry.kind is Kind.HANG else call_s
    return prefix_s + failing_s + replay_wait_s(entry.kind, call_s)


def replay_wait_s(kind: Kind, call_s: float) -> float:
    """What a replay of a finding of `kind` waits for after its failing call (`engine.replay`): a
    hang's ping after the timeout, a crash's (or running out of memory's) wait for a death right
    after the reply and the ping after it (`call_s`); nothing for the others."""
    if kind is Kind.HANG:
        return FOLLOW_UP_S
    if kind in WATCHED_AFTER_REPLY:
        return AFTER_REPLY_S + call_s
    return 0.0


def stop_allowance(target: TargetConfig, *, spares: bool, measured: float | None) -> float:
    """What stopping a replay's server adds to it: nothing with warm spares (a spare's server stops
    beside the next replay), else the mean of this run's measured stops of it, else what a stop of
    its transport usually takes."""
    if spares:
        return 0.0
    if measured is not None:
        return measured
    return HTTP_STOP_ALLOWANCE_S if target.kind is TargetKind.HTTP else STOP_ALLOWANCE_S


def observe_s(target: TargetConfig, traced: bool) -> float:
    """The longest observing one call to its end takes: its timeout and the ping after a timeout,
    then a dead server's last words (`DEATH_S`) or, from a server still there, the coverage
    collector's read when it runs: never both (`engine.feedback.lost`). Switching the collector on
    or off comes before the request, outside the grace (`CallLoop.worker`)."""
    return target.timeout_ms / 1000 + FOLLOW_UP_S + max(DEATH_S, COLLECT_TIMEOUT_S if traced else 0.0)


def fuzz_deadline(
    box: TimeBox, target: TargetConfig, *, backlog: Backlog, observe: float, relayed: bool = False
) -> float:
    """Fuzzing stops early enough for verification of what is waiting for it (`Verifier.backlog`:
    the replays' measured server starts, less the spares already waiting, and their calls), run
    `parallel_replays` at a time, but never shorter than its longest replay alone."""
    # The grace for the calls in flight at the deadline runs into the margin first; fuzzing
    # stops earlier only for the part of it the margin cannot hold.
    beyond = max(0.0, observe - (box.latest_end() - box.verify_end()))
    if backlog.replays == 0:
        return box.fuzz_end(0.0, beyond)
    parallel = parallel_replays(target, relayed=relayed)
    return box.fuzz_end(max(backlog.seconds / parallel, backlog.longest_s), beyond)


@dataclass(frozen=True, slots=True)
class Watched:
    """How fuzzing ended (`watch`)."""

    cut_off: tuple[str, ...]
    """The calls still in flight when the grace ran out (`tool case N`), for the report."""
    grace_s: float
    """How long the calls in flight at the deadline took to end (or to be cut off)."""


async def watch(
    deadline: Callable[[], float],
    grace: Callable[[], float],
    box: TimeBox,
    calls_open: Mapping[object, str],
    scheduler: Scheduler,
    watched: list[Watched],
) -> None:
    """At the deadline no new call starts, and the calls in flight get a grace to be observed
    to their end (`observe_s`; it runs into the budget's margin, never past it, and verification
    after it keeps the time it was planned: `verify_end`): a request the server was sent is
    observed, so a crash or hang it causes near the end is reported (unconfirmed if no replay
    fits), not dropped with a PASS. Past the grace they are cut off. Appends how it ended to
    `watched` (the fuzzing scope ends the watch once the workers left, so a return value would be
    lost)."""
    while True:
        left = deadline() - time.monotonic()
        if left <= 0:
            break
        await anyio.sleep(min(_WATCH_S, left))
    scheduler.stopped = True
    stopped = time.monotonic()
    cutoff = min(stopped + grace(), box.latest_end())
    # The workers leave once their calls are answered; the fuzzing scope then ends the watch.
    try:
        while calls_open and time.monotonic() < cutoff:
            await anyio.sleep(_WATCH_S)
    finally:
        watched.append(Watched(tuple(sorted(calls_open.values())), time.monotonic() - stopped))


def verify_end(box: TimeBox, watched: Sequence[Watched]) -> float:
    """When verification after fuzzing must end: the time box's `verify_end`, later by the grace
    the calls in flight at fuzzing's deadline took (verification waits for them: its replays
    after fuzzing start once fuzzing's calls ended, and an HTTP target's fresh servers need its
    one port), never past what the margin holds (`latest_end`)."""
    grace_s = watched[-1].grace_s if watched else 0.0
    return min(box.verify_end() + grace_s, max(box.verify_end(), box.latest_end()))
