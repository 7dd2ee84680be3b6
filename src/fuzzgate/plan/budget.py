"""The time box: `--budget` bounds the whole run, start to finish.

A CI job is sized by its budget, so every phase draws on one deadline: start-up, discovery,
fuzzing, verification (confirming new findings and replaying baseline entries fuzzing did not meet
again, concurrently on fresh servers) and writing the outputs. Fuzzing ends early enough to leave
verification the time it needs, estimated from the findings waiting for it and capped at a share
of the budget; what verification cannot finish in time is reported as cut short, never dropped.

The documented promise (README, "Time box"): the run ends within `margin_s` past the budget, the
larger of 10 s and 10 %, provided the per-request timeout is below that margin.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

OUTPUT_RESERVE_S = 1.0
"""Kept back at the end for stopping servers and writing the outputs."""
WRITE_RESERVE_S = 0.25
"""Kept back at the end of a run that starts no server (an HTTP target reached at its URL, without
`[target] command`): only the outputs are written then, about 0.1 s with a dozen findings, where a
stdio server takes up to half a second to end once its input closes."""
VERIFY_SHARE = 0.3
"""The largest share of the budget fuzzing gives up for verification."""
STOP_ALLOWANCE_S = 0.5
"""What stopping a fresh server usually costs, in the verification estimate until a stop of this
run's server was measured: a stdio server is given half a second to end once its input closes."""
HTTP_STOP_ALLOWANCE_S = 0.2
"""The same for an HTTP server fuzzgate starts: its session is closed and it is sent SIGTERM at
once (measured: 0.02-0.03 s for the reference `everything` server on Node, 0.02-0.2 s for the
Python example on uvicorn)."""


def process_start() -> float:
    """When this process started, on the `time.monotonic()` clock, so that the interpreter's start
    and fuzzgate's imports count against the budget too. Linux: from /proc (process start and
    uptime are both seconds since boot); elsewhere, now."""
    try:
        with open("/proc/self/stat", "rb") as stat:
            # The command name (field 2) may hold spaces: count fields after its closing parenthesis.
            fields = stat.read().rsplit(b")", 1)[1].split()
        started_after_boot = int(fields[19]) / os.sysconf("SC_CLK_TCK")
        with open("/proc/uptime", "rb") as uptime:
            since_boot = float(uptime.read().split()[0])
    except (OSError, ValueError, IndexError):
        return time.monotonic()
    age = since_boot - started_after_boot
    return time.monotonic() - age if 0 <= age < 3600 else time.monotonic()


def margin_s(budget_s: float) -> float:
    """How far past the budget a run may end: the larger of 10 s and 10 % of the budget."""
    return max(10.0, 0.1 * budget_s)


@dataclass(slots=True)
class TimeBox:
    """One run's clock. `start` is when the run began (monotonic seconds)."""

    budget_s: float
    start: float = field(default_factory=time.monotonic)
    starts_servers: bool = True
    """Whether the run starts servers it must stop before it ends (`verify_end`'s reserve)."""
    marks: dict[str, float] = field(default_factory=dict)
    """Seconds since `start` at which each phase ended, for the report."""

    @property
    def end(self) -> float:
        return self.start + self.budget_s

    def remaining(self) -> float:
        return max(0.0, self.end - time.monotonic())

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def mark(self, phase: str) -> None:
        self.marks[phase] = round(self.elapsed(), 3)

    def verify_end(self) -> float:
        """When verification must stop: stopping the servers and the outputs still get their
        reserve (only the outputs, for a run that starts no server)."""
        reserve = OUTPUT_RESERVE_S if self.starts_servers else WRITE_RESERVE_S
        return self.end - min(reserve, 0.05 * self.budget_s)

    def fuzz_end(self, verify_s: float, in_flight_s: float = 0.0) -> float:
        """When fuzzing must stop so that the calls in flight then can be observed to their end
        (`in_flight_s`) and verification's `verify_s` still fit before `verify_end`; the two
        together take at most `VERIFY_SHARE`."""
        return self.verify_end() - min(in_flight_s + verify_s, VERIFY_SHARE * self.budget_s)

    def latest_end(self) -> float:
        """The latest a run may end (the documented promise: the budget plus its margin), less what
        stopping the server and writing the outputs take."""
        return self.end + margin_s(self.budget_s) - OUTPUT_RESERVE_S - STOP_ALLOWANCE_S
