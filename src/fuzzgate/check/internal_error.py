"""The tool hit an exception it did not handle. One exception is one observation, named by the best
evidence of it: a traceback on stderr, a traceback in the reply, the SDK's reply for an unhandled
exception, a JSON-RPC internal error for input the schema allows. A trace in the reply of a program
the tool ran (a code runner's output: only a script's top level, `_of_a_program_it_ran`) is not the
server's exception.

A tool answering `isError: true` with a plain message, or rejecting schema-violating input, is
correct behaviour and never an observation. A traceback on stderr of a call the server answered
properly (its own `isError` reply, a JSON-RPC error other than an internal error, a result) is an
exception the server or its framework caught and answered: it is reported, at most
`CAUGHT_SEVERITY`, and its message says so. Only the SDK's last-resort reply for an exception
nobody caught (`patterns.SDK_UNHANDLED`), a JSON-RPC internal error, no reply at all, or a
malformed one keep the kind's own severity. An internal error that is the TypeScript SDK refusing
the request itself (`sdk.envelope_rejection`) is the SDK's (`Cause.SDK`).

Messages name the exception by its type and the first line of its message (`headline`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from fuzzgate.check.environment import answered_read_only, sandbox_cause
from fuzzgate.check.headline import UNTYPED, headline, named_exception
from fuzzgate.check.normalize import abstract_arguments, normalize_message
from fuzzgate.check.observation import Observation, outcome_details, trace_details
from fuzzgate.check.patterns import INTERNAL_ERROR_CODES, SDK_PROMPT_ANSWERED, SDK_RESOURCE_CRASH, SDK_UNHANDLED
from fuzzgate.check.registry import CallContext, CheckEnv, check
from fuzzgate.check.sdk import TYPESCRIPT_SDK, envelope_rejection, names_another_request, through_sdk_only
from fuzzgate.check.traceback import Trace, parse_traces, root_cause
from fuzzgate.model.findings import Cause, Details, Kind, Severity, Surface
from fuzzgate.model.outcome import AfterTimeout, CallOutcome, OutcomeStatus

RPC_MESSAGE_CHARS = 200
CAUGHT_SEVERITY = Severity.LOW
"""The most an exception the server caught and answered properly is rated, whatever `[severity]`
says for `internal_error`: the caller got a proper answer; the traceback only says where it came from."""

_ANSWERED = (OutcomeStatus.OK, OutcomeStatus.TOOL_ERROR, OutcomeStatus.RPC_ERROR)
_PROMPT_ANSWER = "JSON-RPC error {code} carrying its message (how the Python SDK 1.x answers a prompt that raised)"
_TS_PROMPT_ANSWER = "JSON-RPC error {code} carrying its message (how the TypeScript SDK answers a prompt that threw)"
_JS_ENGINE_ERROR = re.compile(
    r"Cannot read propert|Cannot set propert|Cannot destructure|is not a function|is not defined|is not iterable"
    r"|is not a constructor|Cannot convert undefined or null|Cannot access '.*' before initialization"
    r"|Assignment to constant|Maximum call stack size exceeded|Invalid array length|Invalid string length"
    r"|Unexpected token|Unexpected end of JSON input|is not valid JSON|Cannot mix BigInt"
    r"|Do not know how to serialize a BigInt|Converting circular structure to JSON|toFixed\(\) digits"
)
"""Messages of the errors V8 itself throws (TypeError, ReferenceError, RangeError, SyntaxError from
JSON.parse): a prompt's code that fell over, not a prompt refusing a value, whatever SDK answered it."""


def _echoed(trace: Trace, arguments: dict[str, Any]) -> bool:
    """A tool that echoes its input echoes a stack trace the fuzzer sent: that is no exception."""
    sent = json.dumps(arguments, ensure_ascii=False)
    return bool(trace.exc_type) and trace.exc_type in sent and (not trace.message or trace.message in sent)


_TOP_LEVEL = frozenset({"<module>", "Object.<anonymous>"})
"""A frame of a script's own top level: Python's `<module>`, the function Node.js wraps a CommonJS
module in."""


def _of_a_program_it_ran(trace: Trace) -> bool:
    """Whether a reply's trace is of a program the tool ran (a code runner's output), not of the
    server handling the call: each frame outside a library is a script's top level, or every frame
    is Node.js's module loader (a script that did not compile). A server's own exception is raised
    in a function, its handler or below, whose frame the trace holds; a module's top level runs
    once, at the server's start."""
    if not trace.frames:
        return False
    own = trace.user_frames()
    if own:
        return all(frame.func in _TOP_LEVEL for frame in own)
    return all(frame.path.startswith("node:internal/modules/") for frame in trace.frames)


def _sdk_rejection(ctx: CallContext, trace: Trace) -> bool:
    """A prompt or resource request the schema forbids (a missing required argument) that the SDK
    itself refused by raising: the Python SDK answers it -32603 and logs the traceback, though the
    server's own code never ran. That is the SDK's choice of code, not the server's bug."""
    return ctx.surface is not Surface.TOOL and not ctx.schema_valid and not trace.user_frames()


def _anothers(ctx: CallContext, traces: Sequence[Trace]) -> bool:
    """Whether a traceback logged while other calls were in flight names another request as its
    own (`sdk.names_another_request`): a hung tool call beside a prompt's rejected arguments is not
    where "Error rendering prompt summarize_note" came from. That request's own call judged it (a
    schema-invalid prompt's rendering error is no bug)."""
    return ctx.outcome.concurrent > 1 and names_another_request(traces, ctx.surface, ctx.tool)


def _rejected_by_sdk(ctx: CallContext, env: CheckEnv, trace: Trace) -> Observation | None:
    """A tool call the schema forbids that the SDK refused by raising, with a traceback through
    nothing but the SDK and its validator: the SDK's behaviour, one low finding of the server."""
    if ctx.schema_valid or ctx.surface is not Surface.TOOL or ctx.outcome.status not in _ANSWERED:
        return None
    sdk = through_sdk_only(trace)
    if sdk is None:
        return None
    known = env.server.sdk
    if sdk.version is None and known is not None and known.package == sdk.package:
        sdk = known
    first = env.redact.cut(f"{trace.exc_type}: {trace.message}".rstrip(": "), RPC_MESSAGE_CHARS)
    return Observation(
        Kind.INTERNAL_ERROR,
        f"{sdk} raised on input the schema forbids, before the server's code ran ({first}), and logged "
        "a traceback instead of only rejecting it: the SDK's behaviour, not the server's bug",
        ("sdk", sdk.package, "raises-on-invalid-input"),
        trace_details(trace, ctx.outcome, env.redact),
        server_wide=True,
        cause=Cause.SDK,
    )


def _answer(outcome: CallOutcome, surface: Surface) -> str | None:
    """How the server properly answered a call whose exception it logged ("an isError reply",
    "JSON-RPC error -32602", "a result"): it caught the exception. None when there was no proper
    answer: no reply, a malformed one, the SDK's last-resort reply for an exception nobody caught,
    or a JSON-RPC internal error."""
    text = outcome.text.strip()
    if outcome.status is OutcomeStatus.OK:
        return "a result"
    if outcome.status is OutcomeStatus.TOOL_ERROR:
        return None if SDK_UNHANDLED.fullmatch(text) else "an isError reply"
    if outcome.status is OutcomeStatus.RPC_ERROR and outcome.rpc_code not in INTERNAL_ERROR_CODES:
        # An internal error is the server's own word that something went wrong it did not handle,
        # whatever its text (the exception's, the SDK's last resort, "Internal server error").
        return f"JSON-RPC error {outcome.rpc_code}"
    if surface is Surface.PROMPT and outcome.status is OutcomeStatus.RPC_ERROR and SDK_PROMPT_ANSWERED.fullmatch(text):
        # But for a prompt on the Python SDK 1.x, which answers whatever it raised so, with its message.
        return _PROMPT_ANSWER.format(code=outcome.rpc_code)
    return None


def _stderr_trace(ctx: CallContext, env: CheckEnv) -> Observation | None:
    outcome = ctx.outcome
    # A server that died with a traceback (during the call, on the ping after leaving it
    # unanswered, or right after answering it) crashed: the crash or unanswered check names it by
    # that traceback.
    died = (
        outcome.status is OutcomeStatus.CLOSED or outcome.after_timeout is AfterTimeout.DIED or outcome.died_after_reply
    )
    traces = parse_traces(outcome.stderr) if outcome.stderr and not died else []
    trace = root_cause(traces)
    if trace is None or _sdk_rejection(ctx, trace) or _anothers(ctx, traces):
        return None
    by_sdk = _rejected_by_sdk(ctx, env, trace)
    if by_sdk is not None:
        return by_sdk
    named = headline(named_exception(traces, trace), env.redact)
    answer = _answer(outcome, ctx.surface)
    if answer is None:
        # "unhandled exception (the traceback ends ...)", not "unhandled an exception".
        message, ceiling = f"unhandled {named.removeprefix('an ') if named == UNTYPED else named}", None
    else:
        message, ceiling = f"caught {named} (its traceback logged on stderr), answered with {answer}", CAUGHT_SEVERITY
    return Observation(
        Kind.INTERNAL_ERROR,
        message,
        ("trace", *trace.signature(env.redact.text)),
        trace_details(trace, outcome, env.redact),
        outcome.concurrent > 1,
        ceiling=ceiling,
    )


def _reply_trace(ctx: CallContext, env: CheckEnv) -> Observation | None:
    outcome = ctx.outcome
    if outcome.status not in _ANSWERED or not outcome.text:
        return None
    traces = parse_traces(outcome.text)
    trace = root_cause(traces)
    if trace is None or _echoed(trace, ctx.arguments) or _of_a_program_it_ran(trace):
        return None
    return Observation(
        Kind.INTERNAL_ERROR,
        f"stack trace in the reply: {headline(named_exception(traces, trace), env.redact)}",
        ("reply-trace", *trace.signature(env.redact.text)),
        trace_details(trace, outcome, env.redact),
    )


def _sdk_unhandled(ctx: CallContext, env: CheckEnv) -> Observation | None:
    outcome = ctx.outcome
    if outcome.status is not OutcomeStatus.TOOL_ERROR or not SDK_UNHANDLED.fullmatch(outcome.text.strip()):
        return None
    # Without the server's stderr (HTTP), the Python SDK's bare message is the only sign.
    text = env.redact.text(outcome.text.strip())
    return Observation(
        Kind.INTERNAL_ERROR,
        f"unhandled exception ({text!r}, the SDK's message for one)",
        ("sdk-unhandled",),
        Details(error=text),
    )


def _quoted_bare(ctx: CallContext) -> dict[str, Any] | None:
    """The arguments whose values are taken out of a message before the normalizers run: for
    prompts and resources, as fingerprint scheme `fuzzgate/1` did (their signatures are kept as
    they were). Every surface's message then has the values left in it taken out after the
    normalizers (`abstract_arguments`, `fuzzgate/2`)."""
    return ctx.arguments if ctx.surface is not Surface.TOOL else None


def rpc_signature(ctx: CallContext, text: str) -> tuple[str, ...]:
    """The signature of an internal error reply with the (redacted) message `text`."""
    normalized = abstract_arguments(normalize_message(text, _quoted_bare(ctx), request=ctx.arguments), ctx.arguments)
    return ("rpc", str(ctx.outcome.rpc_code), normalized)


def _rpc_internal_error(ctx: CallContext, env: CheckEnv) -> Observation | None:
    outcome = ctx.outcome
    if not (
        outcome.status is OutcomeStatus.RPC_ERROR and ctx.schema_valid and outcome.rpc_code in INTERNAL_ERROR_CODES
    ):
        return None
    if ctx.surface is Surface.RESOURCE and not SDK_RESOURCE_CRASH.fullmatch(outcome.text.strip()):
        # A resource handler refusing a value it does not serve answers -32603 with its own
        # message in the Python SDK (`ResourceError`): only the SDK's crash reply says "crash".
        return None
    redact = env.redact
    if ctx.surface is Surface.PROMPT and SDK_PROMPT_ANSWERED.fullmatch(outcome.text.strip()):
        # A prompt on the Python SDK 1.x refusing a value by raising, with no traceback to read
        # (an HTTP server): answered with its own message, as a caught exception is.
        return _prompt_caught(ctx, env, _PROMPT_ANSWER)
    issue = envelope_rejection(outcome.text)
    if issue is not None:
        # The SDK refused the request around the arguments: one low finding of the server, whatever
        # tool or prompt the request was for.
        return Observation(
            Kind.INTERNAL_ERROR,
            redact.text(issue.explained(ctx.arguments, env.server.sdk)),
            ("sdk", TYPESCRIPT_SDK, "rejects-request", issue.path),
            outcome_details(outcome, redact),
            server_wide=True,
            cause=Cause.SDK,
        )
    if (
        ctx.surface is Surface.PROMPT
        and env.server.sdk is not None
        and env.server.sdk.package == TYPESCRIPT_SDK
        and _JS_ENGINE_ERROR.search(outcome.text) is None
    ):
        # The TypeScript SDK answers whatever a prompt's handler threw -32603 with its message: a
        # prompt has no `isError` reply, so throwing is how it refuses a value (a tool's throw the
        # SDK answers `isError`, no finding), as on the Python SDK 1.x. What the JavaScript engine
        # threw (`Cannot read properties of undefined`) is the prompt's bug, and keeps its severity.
        return _prompt_caught(ctx, env, _TS_PROMPT_ANSWER)
    # Normalized from the redacted message, which `normalize_message` cuts: a secret must
    # not reach a signature in part, and the bug keeps its fingerprint whatever its value.
    return Observation(
        Kind.INTERNAL_ERROR,
        f"JSON-RPC internal error {outcome.rpc_code} for schema-valid input: "
        f"{redact.cut(outcome.text, RPC_MESSAGE_CHARS)}",
        rpc_signature(ctx, redact.text(outcome.text)),
        outcome_details(outcome, redact),
    )


def _prompt_caught(ctx: CallContext, env: CheckEnv, answer: str) -> Observation:
    """A prompt that raised, answered by its SDK with the exception's own message and no traceback
    to read: at most low, as a caught exception is."""
    outcome, redact = ctx.outcome, env.redact
    return Observation(
        Kind.INTERNAL_ERROR,
        f"caught an exception, answered with {answer.format(code=outcome.rpc_code)}: "
        f"{redact.cut(outcome.text, RPC_MESSAGE_CHARS)}",
        rpc_signature(ctx, redact.text(outcome.text)),
        outcome_details(outcome, redact),
        ceiling=CAUGHT_SEVERITY,
    )


_EVIDENCE: tuple[Callable[[CallContext, CheckEnv], Observation | None], ...] = (
    _stderr_trace,
    _reply_trace,
    _sdk_unhandled,
    _rpc_internal_error,
)
"""Best first: a traceback names the code that raised; the SDK's text and the code only say that
something did."""


def _caused_by_sandbox(ctx: CallContext, env: CheckEnv, observation: Observation) -> bool:
    """Whether the exception is the sandbox's doing (a refused connection, a read-only file system
    in the jail): then it is recorded for the run's note (`check.environment`), not reported."""
    if not env.server.jailed or observation.cause is not Cause.SERVER:
        return False
    outcome = ctx.outcome
    # What the server logged for the call too: an exception line the traceback parser does not
    # read as one (`socket.gaierror: [Errno -2] Name or service not known`) still names the cause.
    cause = sandbox_cause(observation.message, observation.details.error or "", outcome.text, outcome.stderr)
    if cause is None:
        return False
    env.server.environment.setdefault(cause, set()).add(ctx.tool or "?")
    return True


@check(order=400)
def internal_error(ctx: CallContext, env: CheckEnv) -> Iterator[Observation]:
    for evidence in _EVIDENCE:
        observation = evidence(ctx, env)
        if observation is not None:
            if not _caused_by_sandbox(ctx, env, observation):
                yield observation
            return
    # No exception, but an error the server answered properly may still be the sandbox's.
    answered_read_only(env.server, ctx.tool or "?", ctx.outcome)
