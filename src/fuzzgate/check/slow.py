"""The server answered, but slower than the run's slow threshold."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from fuzzgate.check.observation import Observation
from fuzzgate.check.registry import CallContext, CheckEnv, check
from fuzzgate.model.findings import Details, Kind

_ASKED_TIME = re.compile(r"duration|delay|sleep|wait|timeout|seconds|secs|millis|_ms$|interval", re.IGNORECASE)
"""Argument names that ask a tool to take time."""


def _time_asked(arguments: Mapping[str, Any]) -> bool:
    """The call asked for the time it took: a positive number under a name like `duration` or
    `delay_ms` (server-everything's `trigger-long-running-operation(duration=10)` takes 10 s by
    design; that is not slowness)."""
    return any(
        _ASKED_TIME.search(str(name)) and isinstance(value, int | float) and not isinstance(value, bool) and value > 0
        for name, value in arguments.items()
    )


@check(order=700)
def slow(ctx: CallContext, env: CheckEnv) -> Iterator[Observation]:
    outcome = ctx.outcome
    if ctx.replied and outcome.duration_s > env.slow_s and not _time_asked(ctx.arguments):
        yield Observation(
            Kind.SLOW,
            f"took {outcome.duration_s:.1f}s (slow threshold {env.slow_s:g}s)",
            (),
            Details(),
        )
