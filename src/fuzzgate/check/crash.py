"""The server died during the call, or never answered it."""

from __future__ import annotations

import re
import signal
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from fuzzgate.check.environment import waited_on_sandbox
from fuzzgate.check.headline import stderr_headline
from fuzzgate.check.observation import Observation, outcome_details, trace_details
from fuzzgate.check.registry import CallContext, CheckEnv, check
from fuzzgate.check.sdk import PYTHON_SDK, SURROGATE_FIXED_IN, Sdk, died_in_sdk, names_another_request, sdk_death
from fuzzgate.check.traceback import parse_traces, root_cause
from fuzzgate.model.findings import Cause, Kind, Severity
from fuzzgate.model.outcome import AfterTimeout, AnomalyKind, CallOutcome, MemoryExceeded, OutcomeStatus


def _exit_label(code: int | None) -> str:
    if code is None:
        return "connection closed"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


_SURROGATE = re.compile("[\ud800-\udfff]")
"""A UTF-16 surrogate code point: alone in a str, it cannot be encoded as UTF-8. A search in C: the
engine asks this of every call's arguments, which a character loop in Python made a measurable part
of each call's CPU."""


def has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return _SURROGATE.search(value) is not None
    if isinstance(value, dict):
        return any(has_lone_surrogate(k) or has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_lone_surrogate(v) for v in value)
    return False


def _died_after_silence(ctx: CallContext) -> bool:
    """The request timed out and the server died on the next one (the ping fuzzgate sent)."""
    return ctx.outcome.status is OutcomeStatus.TIMEOUT and ctx.outcome.after_timeout is AfterTimeout.DIED


@check(order=100)
def crash(ctx: CallContext, env: CheckEnv) -> Iterator[Observation]:
    """The connection closed while the call was pending, the server never answered it and died on
    the next request, or (seen on a replay, `call.follow_reply`) it answered and died right after:
    named by the traceback the server left on stderr, else by how it exited.
    (A request holding a lone surrogate is the server's transport failing: `unanswered`.)"""
    outcome = ctx.outcome
    silent = _died_after_silence(ctx)
    after = outcome.died_after_reply
    if (
        outcome.status is not OutcomeStatus.CLOSED
        and not after
        and not (silent and not has_lone_surrogate(ctx.arguments))
    ):
        return
    redact = env.redact
    if outcome.memory is not None:
        yield out_of_memory(outcome, outcome.memory, env)
        return
    traces = parse_traces(outcome.stderr) if outcome.stderr else []
    trace = root_cause(traces)
    if trace is not None and outcome.concurrent > 1 and names_another_request(traces, ctx.surface, ctx.tool):
        # Beside other calls, a traceback the SDK says is another request's (one it caught and
        # logged) is not how the server died: the crash is named by its exit, as the call that
        # caused it names it alone, which makes this one that call's symptom (`engine.labels`).
        trace = None
    what = _exit_label(outcome.exit_code)
    when = "died"
    if silent:
        when = "never answered, then died on the next request"
    elif after:
        when = "answered, then died before the next request"
    if trace is not None:
        signature = ("trace", *trace.signature(redact.text))
        message = f"the server {when} ({what}) after {stderr_headline(outcome.stderr, redact)}"
    else:
        # The same signature whether the death came during the call or right after its reply: which
        # one a replay sees can be a race, and it is the same bug.
        signature = ("exit", what)
        during = "died right after answering the call" if after else "died during the call"
        message = f"the server {when} ({what})" if silent else f"the server {during} ({what})"
    details = trace_details(trace, outcome, redact)
    yield Observation(Kind.CRASH, redact.text(message), signature, details, outcome.concurrent > 1)


MEMORY_SIGNATURE = ("memory",)
"""One bug per tool: which input or how far past the limit it went does not make another."""


def out_of_memory(outcome: CallOutcome, memory: MemoryExceeded, env: CheckEnv) -> Observation:
    """The server did not die: fuzzgate stopped it because its processes held more memory than the
    limit (`OwnedProcess.watch_memory`) while this call was pending or right after its reply. The
    call `crash` is asked about."""
    message = memory_message(memory, "after answering the call" if outcome.died_after_reply else "during the call")
    details = outcome_details(outcome, env.redact, memory_error(memory))
    return Observation(Kind.OUT_OF_MEMORY, message, MEMORY_SIGNATURE, details, outcome.concurrent > 1)


def memory_error(memory: MemoryExceeded) -> str:
    """The finding's `details.error`: not the client's word for the closed connection, which says
    nothing of why it closed."""
    return f"stopped by fuzzgate (SIGKILL) at {mebibytes(memory.held)} resident, over {mebibytes(memory.limit)}"


def memory_message(memory: MemoryExceeded, when: str) -> str:
    """What `out_of_memory` says, for a call or a protocol probe (`protocol_probes`)."""
    return (
        f"the server's processes held {mebibytes(memory.held)} of resident memory {when}, past the limit of "
        f"{mebibytes(memory.limit)} ([fuzzgate] memory_limit): fuzzgate stopped them"
    )


def mebibytes(size: int) -> str:
    """`size` bytes in MiB, or in GiB from 1 GiB on, as the limit is written."""
    if size >= 1 << 30:
        return f"{size / (1 << 30):.2f} GiB"
    return f"{size / (1 << 20):.0f} MiB"


HANG_ALIVE_SEVERITY = Severity.MEDIUM
"""The most a hang the server survived is rated: one call never returns (a client waiting for it
waits forever), but the server goes on serving every other request. A hang that takes the whole
server with it is a denial of service and keeps `[severity] hang` (high by default)."""


@check(order=200)
def hang(ctx: CallContext, env: CheckEnv) -> Iterator[Observation]:
    """No reply within the timeout. The client abandons the request (the SDK sends
    `notifications/cancelled` for it) and pings (`target.call.follow_timeout`): a ping answered
    means only this call hangs (at most `HANG_ALIVE_SEVERITY`); a ping left unanswered too means
    the whole server stopped answering, a denial of service. Which one it was is kept in the
    finding's `details.after_timeout`."""
    outcome = ctx.outcome
    if (
        outcome.status is OutcomeStatus.TIMEOUT
        and outcome.after_timeout is not AfterTimeout.DIED
        and not has_lone_surrogate(ctx.arguments)
        and not any(a.kind is AnomalyKind.WRONG_ID for a in outcome.anomalies)
    ):
        # A reply with the wrong id explains the wait: that is one protocol error, not also a hang.
        if waited_on_sandbox(env.server, ctx.tool or "?", outcome):
            return
        waited = f"no reply within {outcome.duration_s:.1f}s"
        ceiling = None
        if outcome.after_timeout is AfterTimeout.ALIVE:
            message = (
                f"{waited}; the server went on answering others (a ping after it was answered): only this call hangs"
            )
            ceiling = HANG_ALIVE_SEVERITY
        elif outcome.after_timeout is AfterTimeout.STUCK:
            message = (
                f"{waited}, and the server stopped answering altogether (a ping after it went unanswered too):"
                " a denial of service"
            )
        else:
            message = waited
        details = replace(outcome_details(outcome, env.redact), after_timeout=outcome.after_timeout)
        yield Observation(Kind.HANG, message, (), details, ceiling=ceiling)


_UNANSWERED = {
    AfterTimeout.ALIVE: ("unanswered", "and went on answering others"),
    AfterTimeout.STUCK: ("unanswered-then-stuck", "and stopped answering altogether"),
    AfterTimeout.DIED: ("unanswered-then-died", "and died on the next request"),
}


@check(order=250)
def unanswered(ctx: CallContext, env: CheckEnv) -> Iterator[Observation]:
    """A request holding a lone surrogate escape (valid JSON, which a strict decoder refuses) that
    the server never answered: JSON-RPC wants an error reply. The server's transport or SDK failed
    before any tool ran, so it is one finding for the server, whichever tool the request named.

    The SDK's (`check.sdk`) when the Python SDK dropped it and the server went on answering, or when
    the server died of it with a traceback that is the SDK's alone (`sdk.died_in_sdk`)."""
    outcome = ctx.outcome
    if outcome.status is not OutcomeStatus.TIMEOUT or outcome.after_timeout is None:
        return
    if not has_lone_surrogate(ctx.arguments):
        return
    label, then = _UNANSWERED[outcome.after_timeout]
    redact = env.redact
    died = outcome.after_timeout is AfterTimeout.DIED
    traces = parse_traces(outcome.stderr) if died and outcome.stderr else []
    trace = root_cause(traces)
    cause = f" ({_exit_label(outcome.exit_code)} after {stderr_headline(outcome.stderr, redact)})" if trace else ""
    message = f"never answered a request holding a lone surrogate escape, {then}{cause}"
    known = env.server.sdk
    by_sdk: Sdk | None = None
    # The Python SDK's transport drops such a request and goes on answering others; a server that
    # stalled on it, or died with a frame of its own in the traceback (or with none), did something
    # of its own.
    if known is not None and known.package == PYTHON_SDK and outcome.after_timeout is AfterTimeout.ALIVE:
        by_sdk = known
        message += (
            f": {known} drops a request it cannot parse without a reply; the SDK's bug, not the server's "
            f"({known.upgrade_advice(SURROGATE_FIXED_IN)})"
        )
    elif (by_sdk := died_in_sdk(traces, known)) is not None:
        message += f": {sdk_death(by_sdk, SURROGATE_FIXED_IN)}"
    # Killing the server on the next request is a crash (of the server, caused by this request);
    # dropping the request or stalling on it breaks the protocol.
    yield Observation(
        Kind.CRASH if died else Kind.PROTOCOL_ERROR,
        redact.text(message),
        (label, "lone-surrogate"),
        trace_details(trace, outcome, redact),
        outcome.concurrent > 1,
        server_wide=True,
        cause=Cause.SDK if by_sdk is not None else Cause.SERVER,
    )
