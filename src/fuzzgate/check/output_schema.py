"""The reply's `structuredContent` does not match the tool's declared `outputSchema`."""

from __future__ import annotations

from collections.abc import Iterator

from fuzzgate.check.normalize import normalize_schema_path
from fuzzgate.check.observation import Observation, outcome_details
from fuzzgate.check.registry import CallContext, CheckEnv, check
from fuzzgate.model.findings import Kind
from fuzzgate.model.outcome import OutcomeStatus

SCHEMA_ERROR_CHARS = 500


@check(order=500)
def output_schema(ctx: CallContext, env: CheckEnv) -> Iterator[Observation]:
    """Named by the failing keyword's place in the schema (array indices folded)."""
    outcome = ctx.outcome
    if outcome.status is not OutcomeStatus.OUTPUT_INVALID:
        return
    path = normalize_schema_path(outcome.schema_path)
    yield Observation(
        Kind.SCHEMA_VIOLATION,
        f"structuredContent does not match the declared outputSchema (at {path or 'the root'})",
        (path,),
        outcome_details(outcome, env.redact, env.redact.cut(outcome.text, SCHEMA_ERROR_CHARS)),
    )
