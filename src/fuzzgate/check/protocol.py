"""The server broke the protocol on the wire: a line that is not JSON, an invalid message, a reply
to no pending request, a line too long to be a message."""

from __future__ import annotations

from collections.abc import Iterator

from fuzzgate.check.observation import Observation, outcome_details
from fuzzgate.check.registry import CallContext, CheckEnv, check
from fuzzgate.model.findings import Kind
from fuzzgate.model.outcome import AnomalyKind

PROTOCOL_EXCERPT_CHARS = 120

_ANOMALY_TEXT = {
    AnomalyKind.NON_JSON: "wrote a line that is not JSON to stdout",
    AnomalyKind.INVALID_MESSAGE: "sent a message that is not valid JSON-RPC",
    AnomalyKind.WRONG_ID: "answered with a JSON-RPC id that matches no pending request",
    AnomalyKind.OVERSIZED: "sent a line too long to be a message",
}


@check(order=300)
def protocol_anomalies(ctx: CallContext, env: CheckEnv) -> Iterator[Observation]:
    """One observation per kind of anomaly seen during the call, quoting its first instance."""
    outcome = ctx.outcome
    redact = env.redact
    for kind in dict.fromkeys(a.kind for a in outcome.anomalies):
        excerpt = next(a.excerpt for a in outcome.anomalies if a.kind is kind)
        yield Observation(
            Kind.PROTOCOL_ERROR,
            f"the server {_ANOMALY_TEXT[kind]}: {redact.cut(excerpt, PROTOCOL_EXCERPT_CHARS)!r}",
            (kind.value,),
            outcome_details(outcome, redact, excerpt),
            outcome.concurrent > 1,
        )
