"""The server answered, but slower than the run's slow threshold."""

from __future__ import annotations

from collections.abc import Iterator

from fuzzgate.check.observation import Observation
from fuzzgate.check.registry import CallContext, CheckEnv, check
from fuzzgate.findings import Details, Kind


@check(order=700)
def slow(ctx: CallContext, env: CheckEnv) -> Iterator[Observation]:
    outcome = ctx.outcome
    if ctx.replied and outcome.duration_s > env.slow_s:
        yield Observation(
            Kind.SLOW,
            f"took {outcome.duration_s:.1f}s (slow threshold {env.slow_s:g}s)",
            (),
            Details(),
        )
