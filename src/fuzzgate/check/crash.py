"""The server died during the call, or never answered it."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from typing import Any

from fuzzgate.check.observation import Observation, outcome_details, stderr_root_cause, trace_details
from fuzzgate.check.registry import CallContext, CheckEnv, check
from fuzzgate.findings import Kind
from fuzzgate.outcome import AnomalyKind, OutcomeStatus


def _exit_label(code: int | None) -> str:
    if code is None:
        return "connection closed"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= ch <= "\udfff" for ch in value)
    if isinstance(value, dict):
        return any(has_lone_surrogate(k) or has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_lone_surrogate(v) for v in value)
    return False


@check(order=100)
def crash(ctx: CallContext, env: CheckEnv) -> Iterator[Observation]:
    """The connection closed while the call was pending: named by the traceback the server left
    on stderr, else by how it exited."""
    outcome = ctx.outcome
    if outcome.status is not OutcomeStatus.CLOSED:
        return
    redact = env.redact
    trace = stderr_root_cause(outcome)
    what = _exit_label(outcome.exit_code)
    if trace is not None:
        signature = ("trace", *trace.signature())
        message = f"the server died ({what}) after {trace.exc_type}: {trace.message}"
    else:
        signature = ("exit", what)
        message = f"the server died during the call ({what})"
    details = trace_details(trace, outcome, redact)
    yield Observation(Kind.CRASH, redact.text(message), signature, details, outcome.concurrent > 1)


@check(order=200)
def hang(ctx: CallContext, env: CheckEnv) -> Iterator[Observation]:
    """No reply within the timeout."""
    outcome = ctx.outcome
    if (
        outcome.status is OutcomeStatus.TIMEOUT
        and not has_lone_surrogate(ctx.arguments)
        and not any(a.kind is AnomalyKind.WRONG_ID for a in outcome.anomalies)
    ):
        # A request the server could not decode is dropped by some SDKs instead of answered
        # with a parse error; that is the SDK's choice, not this server's bug. And a reply
        # with the wrong id explains the wait: that is one protocol error, not also a hang.
        yield Observation(
            Kind.HANG,
            f"no reply within {outcome.duration_s:.1f}s",
            (),
            outcome_details(outcome, env.redact),
        )
