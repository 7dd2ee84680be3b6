"""Oracles: what in a call's outcome is a bug, and the signature that identifies which bug.

A tool answering `isError: true` with a plain message, or rejecting schema-violating input, is
correct behaviour and never an observation.

Oracles read the raw outcome (tracebacks, signatures and the secret scan need it as sent), and every
text they put into an observation is redacted whole before it is cut or quoted.
"""

from __future__ import annotations

import json
import re
import signal
from dataclasses import dataclass
from typing import Any

from fuzzgate.check.secrets import Redactor, SecretScanner
from fuzzgate.check.traceback import Trace, parse_traces, root_cause
from fuzzgate.findings import Details, Kind
from fuzzgate.outcome import AnomalyKind, CallOutcome, OutcomeStatus

STDERR_EXCERPT_LINES = 40
PROTOCOL_EXCERPT_CHARS = 120
RPC_MESSAGE_CHARS = 200
SCHEMA_ERROR_CHARS = 500
FRAMES_KEPT = 8
INTERNAL_ERROR_CODES = frozenset({-32603, 0})
"""JSON-RPC internal error, and the code 0 handshake-era SDK servers use for unhandled exceptions."""

_SDK_UNHANDLED = re.compile(r"Error executing tool [^\s:]+")
"""What the Python SDK's MCPServer answers, and only that, when a tool raises an unexpected exception."""

_ANOMALY_TEXT = {
    AnomalyKind.NON_JSON: "wrote a line that is not JSON to stdout",
    AnomalyKind.INVALID_MESSAGE: "sent a message that is not valid JSON-RPC",
    AnomalyKind.WRONG_ID: "answered with a JSON-RPC id that matches no pending request",
    AnomalyKind.OVERSIZED: "sent a line too long to be a message",
}


@dataclass(frozen=True, slots=True)
class Observation:
    """One symptom of one call. `signature` identifies the bug (never the payload)."""

    kind: Kind
    message: str
    signature: tuple[str, ...]
    details: Details
    ambiguous: bool = False
    """Several calls were in flight, so a process-wide symptom may belong to another one."""


def _excerpt(stderr: str, redact: Redactor) -> str | None:
    """The last lines of what the server logged, redacted whole first."""
    lines = [line.rstrip() for line in redact.text(stderr).splitlines() if line.strip()]
    if not lines:
        return None
    return "\n".join(lines[-STDERR_EXCERPT_LINES:])


def _details(outcome: CallOutcome, redact: Redactor, error: str | None = None) -> Details:
    return Details(error=redact(error if error is not None else outcome.error), stderr=_excerpt(outcome.stderr, redact))


def _trace_details(trace: Trace | None, outcome: CallOutcome, redact: Redactor) -> Details:
    frames: tuple[str, ...] = ()
    location = None
    if trace is not None:
        frames = tuple(redact.text(f"{f.path}:{f.line} in {f.func}") for f in trace.frames[-FRAMES_KEPT:])
        user = trace.user_frames()
        if user:
            location = (redact.text(user[-1].path), user[-1].line)
    return Details(
        error=redact(outcome.error), stderr=_excerpt(outcome.stderr, redact), frames=frames, location=location
    )


def _exit_label(code: int | None) -> str:
    if code is None:
        return "connection closed"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def _echoed(trace: Trace, arguments: dict[str, Any]) -> bool:
    """A tool that echoes its input echoes a stack trace the fuzzer sent: that is no exception."""
    sent = json.dumps(arguments, ensure_ascii=False)
    return bool(trace.exc_type) and trace.exc_type in sent and (not trace.message or trace.message in sent)


def normalize_schema_path(path: str | None) -> str:
    """`properties/items/items/3/type` → `properties/items/items/*/type`: the failing keyword, not the index."""
    return re.sub(r"(?<=/)\d+(?=/|$)", "*", path or "")


def has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= ch <= "\udfff" for ch in value)
    if isinstance(value, dict):
        return any(has_lone_surrogate(k) or has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_lone_surrogate(v) for v in value)
    return False


class Oracles:
    def __init__(self, *, slow_s: float, scanner: SecretScanner, redact: Redactor | None = None) -> None:
        self._slow_s = slow_s
        self._scanner = scanner
        self._redact = redact if redact is not None else Redactor(())

    def observe(self, arguments: dict[str, Any], schema_valid: bool, outcome: CallOutcome) -> list[Observation]:
        found: list[Observation] = []
        redact = self._redact
        ambiguous = outcome.concurrent > 1
        traces = parse_traces(outcome.stderr) if outcome.stderr else []
        stderr_trace = root_cause(traces)
        status = outcome.status

        if status is OutcomeStatus.CLOSED:
            what = _exit_label(outcome.exit_code)
            if stderr_trace is not None:
                signature = ("trace", *stderr_trace.signature())
                message = f"the server died ({what}) after {stderr_trace.exc_type}: {stderr_trace.message}"
            else:
                signature = ("exit", what)
                message = f"the server died during the call ({what})"
            details = _trace_details(stderr_trace, outcome, redact)
            found.append(Observation(Kind.CRASH, redact.text(message), signature, details, ambiguous))
        elif (
            status is OutcomeStatus.TIMEOUT
            and not has_lone_surrogate(arguments)
            and not any(a.kind is AnomalyKind.WRONG_ID for a in outcome.anomalies)
        ):
            # A request the server could not decode is dropped by some SDKs instead of answered
            # with a parse error; that is the SDK's choice, not this server's bug. And a reply
            # with the wrong id explains the wait: that is one protocol error, not also a hang.
            found.append(
                Observation(
                    Kind.HANG,
                    f"no reply within {outcome.duration_s:.1f}s",
                    (),
                    _details(outcome, redact),
                )
            )

        for kind in dict.fromkeys(a.kind for a in outcome.anomalies):
            excerpt = next(a.excerpt for a in outcome.anomalies if a.kind is kind)
            found.append(
                Observation(
                    Kind.PROTOCOL_ERROR,
                    f"the server {_ANOMALY_TEXT[kind]}: {redact.cut(excerpt, PROTOCOL_EXCERPT_CHARS)!r}",
                    (kind.value,),
                    _details(outcome, redact, excerpt),
                    ambiguous,
                )
            )

        if status is not OutcomeStatus.CLOSED and stderr_trace is not None:
            found.append(
                Observation(
                    Kind.INTERNAL_ERROR,
                    redact.text(f"unhandled {stderr_trace.exc_type}: {stderr_trace.message}".rstrip(": ")),
                    ("trace", *stderr_trace.signature()),
                    _trace_details(stderr_trace, outcome, redact),
                    ambiguous,
                )
            )
        elif status in (OutcomeStatus.OK, OutcomeStatus.TOOL_ERROR, OutcomeStatus.RPC_ERROR):
            text_trace = root_cause(parse_traces(outcome.text)) if outcome.text else None
            if text_trace is not None and _echoed(text_trace, arguments):
                text_trace = None
            if text_trace is not None:
                found.append(
                    Observation(
                        Kind.INTERNAL_ERROR,
                        redact.text(
                            f"stack trace in the reply: {text_trace.exc_type}: {text_trace.message}".rstrip(": ")
                        ),
                        ("reply-trace", *text_trace.signature()),
                        _trace_details(text_trace, outcome, redact),
                    )
                )
            elif status is OutcomeStatus.TOOL_ERROR and _SDK_UNHANDLED.fullmatch(outcome.text.strip()):
                # Without the server's stderr (HTTP), the Python SDK's bare message is the only sign.
                found.append(
                    Observation(
                        Kind.INTERNAL_ERROR,
                        f"unhandled exception ({redact.text(outcome.text.strip())!r}, the SDK's message for one)",
                        ("sdk-unhandled",),
                        Details(error=redact.text(outcome.text.strip())),
                    )
                )
            elif status is OutcomeStatus.RPC_ERROR and schema_valid and outcome.rpc_code in INTERNAL_ERROR_CODES:
                # Normalized from the redacted message, which `normalize_message` cuts: a secret must
                # not reach a signature in part, and the bug keeps its fingerprint whatever its value.
                found.append(
                    Observation(
                        Kind.INTERNAL_ERROR,
                        f"JSON-RPC internal error {outcome.rpc_code} for schema-valid input: "
                        f"{redact.cut(outcome.text, RPC_MESSAGE_CHARS)}",
                        ("rpc", str(outcome.rpc_code), normalize_message(redact.text(outcome.text))),
                        _details(outcome, redact),
                    )
                )

        if status is OutcomeStatus.OUTPUT_INVALID:
            path = normalize_schema_path(outcome.schema_path)
            found.append(
                Observation(
                    Kind.SCHEMA_VIOLATION,
                    f"structuredContent does not match the declared outputSchema (at {path or 'the root'})",
                    (path,),
                    _details(outcome, redact, redact.cut(outcome.text, SCHEMA_ERROR_CHARS)),
                )
            )

        if status in (
            OutcomeStatus.OK,
            OutcomeStatus.TOOL_ERROR,
            OutcomeStatus.RPC_ERROR,
            OutcomeStatus.OUTPUT_INVALID,
        ):
            for hit in dict.fromkeys(h.pattern for h in self._scanner.scan(outcome.payload or outcome.text, arguments)):
                found.append(
                    Observation(
                        Kind.SECRET_LEAK,
                        f"the reply contains a secret ({hit})",
                        (hit,),
                        Details(error=None, stderr=None),
                    )
                )
            if outcome.duration_s > self._slow_s:
                found.append(
                    Observation(
                        Kind.SLOW,
                        f"took {outcome.duration_s:.1f}s (slow threshold {self._slow_s:g}s)",
                        (),
                        Details(),
                    )
                )
        return found


_NORMALIZERS = (
    (re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"), "<uuid>"),
    (re.compile(r"0x[0-9a-fA-F]+|\b[0-9a-fA-F]{8,}\b"), "<hex>"),
    (re.compile(r"(['\"`]).*?\1"), "<str>"),
    (re.compile(r"(?:[A-Za-z]:)?(?:[/\\][\w.@-]+)+"), "<path>"),
    (re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"), "<num>"),
    (re.compile(r"\s+"), " "),
)


def normalize_message(text: str) -> str:
    """An error message with the payload taken out: ids, quoted values, paths and numbers become
    placeholders, so the same bug reached with other arguments normalizes the same way."""
    text = text.strip().splitlines()[0] if text.strip() else ""
    for pattern, placeholder in _NORMALIZERS:
        text = pattern.sub(placeholder, text)
    return text[:200]
