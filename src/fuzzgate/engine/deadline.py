"""Fuzzing's deadline and its watchdog: when fuzzing must stop for verification of what waits for it
to fit (`fuzz_deadline`), how long observing one call to its end takes (`observe_s`), and the watch
that stops new calls at the deadline, gives the calls in flight that grace and names those it cuts
off."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

import anyio

from fuzzgate.config.model import TargetConfig
from fuzzgate.engine.collector import COLLECT_TIMEOUT_S
from fuzzgate.engine.verify import Backlog, parallel_replays
from fuzzgate.plan.budget import TimeBox
from fuzzgate.plan.selection import Scheduler
from fuzzgate.target.call import OBSERVE_SLACK_S

_WATCH_S = 0.05


def observe_s(target: TargetConfig, traced: bool) -> float:
    """The longest observing one call to its end takes: its timeout, the ping after a timeout and a
    dead server's last words (`OBSERVE_SLACK_S`), and the coverage collector's read when it runs."""
    return target.timeout_ms / 1000 + OBSERVE_SLACK_S + (COLLECT_TIMEOUT_S if traced else 0.0)


def fuzz_deadline(box: TimeBox, target: TargetConfig, *, backlog: Backlog, observe: float) -> float:
    """Fuzzing stops early enough for verification of what is waiting for it (`Verifier.backlog`:
    the replays' measured server starts, less the spares already waiting, and their calls), run
    `parallel_replays` at a time, but never shorter than its longest replay alone."""
    # The grace for the calls in flight at the deadline runs into the margin first; fuzzing
    # stops earlier only for the part of it the margin cannot hold.
    beyond = max(0.0, observe - (box.latest_end() - box.verify_end()))
    if backlog.replays == 0:
        return box.fuzz_end(0.0, beyond)
    return box.fuzz_end(max(backlog.seconds / parallel_replays(target), backlog.longest_s), beyond)


async def watch(
    deadline: Callable[[], float],
    grace: Callable[[], float],
    box: TimeBox,
    calls_open: Mapping[object, str],
    scheduler: Scheduler,
) -> tuple[str, ...]:
    """At the deadline no new call starts, and the calls in flight get a grace to be observed
    to their end (`observe_s`; the deadline leaves room for it before verification, and it never
    runs past the budget's margin): a request the server was sent is observed, so a crash or
    hang it causes near the end is reported (unconfirmed if no replay fits), not dropped with a
    PASS. Past the grace they are cut off: returns them (`tool case N`), for the report (`cut_off`)."""
    while True:
        left = deadline() - time.monotonic()
        if left <= 0:
            break
        await anyio.sleep(min(_WATCH_S, left))
    scheduler.stopped = True
    cutoff = min(time.monotonic() + grace(), box.latest_end())
    # The workers leave once their calls are answered; the fuzzing scope then ends the watch.
    while calls_open and time.monotonic() < cutoff:
        await anyio.sleep(_WATCH_S)
    return tuple(sorted(calls_open.values()))
