"""The reply contains a secret: a well-known token format, a pattern of the user's, or a canary
fuzzgate planted in the server's environment."""

from __future__ import annotations

from collections.abc import Iterator

from fuzzgate.check.observation import Observation
from fuzzgate.check.registry import CallContext, CheckEnv, check
from fuzzgate.model.findings import Details, Kind


@check(order=600)
def secret_leak(ctx: CallContext, env: CheckEnv) -> Iterator[Observation]:
    """One observation per pattern found (named by the pattern, never the value), read from the
    whole reply as sent."""
    if not ctx.replied:
        return
    outcome = ctx.outcome
    for hit in dict.fromkeys(h.pattern for h in env.scanner.scan(outcome.payload or outcome.text, ctx.arguments)):
        yield Observation(
            Kind.SECRET_LEAK,
            f"the reply contains a secret ({hit})",
            (hit,),
            Details(error=None, stderr=None),
        )
