"""Protocol probes: requests every MCP server must survive, sent once per server, and the judge of
what each one got back.

A probe is one JSON-RPC message fuzzgate writes itself (`target.raw.send_raw`): a `tools/call`
with `arguments` omitted, null, an array or a string, an unknown tool or method, odd ids, params
of the wrong type, notifications nobody expects. What a probe expects decides what is a bug:

- a request the specification allows (`Expect.ANSWER`) must be answered, and not with an internal
  error: a rejection (-32600/-32601/-32602, an `isError` result) is right;
- a request whose params are malformed (`Expect.REJECT`) must be answered; any error is right;
- a message that is no valid MCP request at all (`Expect.TOLERATE`, e.g. params as an array) may go
  unanswered, as SDKs drop what they cannot parse; a reply, if any, must be valid JSON-RPC;
- a notification, or a response to nothing (`Expect.SILENCE`), must get no reply.

Whatever it expects, a server that dies on a probe crashed, and one that stops answering hangs. Each
failing probe is one finding of the server (`Surface.SERVER`), its signature naming the probe and
the symptom, never the payload. A death whose traceback is the SDK's alone (`sdk.died_in_sdk`) is
the SDK's bug (`Cause.SDK`, named in the message); any other is the server's. The judge reads only
the probe's name and the outcome, so a replay of a probe's repro on a fresh server is judged
exactly as the round was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NamedTuple

from fuzzgate.check.crash import memory_error, memory_message
from fuzzgate.check.headline import stderr_headline
from fuzzgate.check.observation import Observation, outcome_details, trace_details
from fuzzgate.check.patterns import INTERNAL_ERROR_CODES, SDK_UNHANDLED
from fuzzgate.check.sdk import died_in_sdk, sdk_death
from fuzzgate.check.secrets import Redactor
from fuzzgate.check.traceback import parse_traces, root_cause
from fuzzgate.model.findings import Cause, Details, Kind
from fuzzgate.model.outcome import (
    BODY_NOT_JSON,
    SSE_NOT_JSON,
    AfterTimeout,
    AnomalyKind,
    CallOutcome,
    OutcomeStatus,
    WireAnomaly,
)

__all__ = [
    "BANNER",
    "EXCERPT_CHARS",
    "PROBES",
    "Expect",
    "ProbeKind",
    "ProtocolProbe",
    "banner_observation",
    "banner_request",
    "build_probes",
    "judge",
    "probe_of",
]

EXCERPT_CHARS = 120
LONG_ID_CHARS = 10_000
UNKNOWN_TOOL = "fuzzgate-no-such-tool"
UNKNOWN_METHOD = "fuzzgate/no-such-method"
BANNER = "startup-banner"
"""The name of the start-up banner's finding (non-JSON lines on stdout before the first reply)."""


class Expect(StrEnum):
    ANSWER = "answer"
    """A request the specification allows: answered, and never with an internal error."""
    REJECT = "reject"
    """A request with malformed params: answered; any error is a correct rejection."""
    TOLERATE = "tolerate"
    """Not a valid MCP request: silence is allowed, a reply must be valid JSON-RPC."""
    SILENCE = "silence"
    """A notification or a response to nothing: no reply."""


@dataclass(frozen=True, slots=True)
class ProbeKind:
    """What a probe named `name` is, in words (`what`), and what it expects."""

    name: str
    expect: Expect
    what: str


PROBES: dict[str, ProbeKind] = {
    kind.name: kind
    for kind in (
        ProbeKind("arguments-omitted", Expect.ANSWER, "a tools/call without `arguments` to a tool that requires none"),
        ProbeKind(
            "arguments-omitted-required", Expect.REJECT, "a tools/call without `arguments` to a tool that requires some"
        ),
        ProbeKind("arguments-null", Expect.REJECT, "a tools/call with `arguments: null`"),
        ProbeKind("arguments-array", Expect.REJECT, "a tools/call with `arguments` as an array"),
        ProbeKind("arguments-string", Expect.REJECT, "a tools/call with `arguments` as a string"),
        ProbeKind("name-number", Expect.REJECT, "a tools/call whose tool `name` is a number"),
        ProbeKind("unknown-tool", Expect.ANSWER, "a tools/call of a tool that does not exist"),
        ProbeKind("unknown-method", Expect.ANSWER, "a request with an unknown method"),
        # RFC 8259 lets a parser limit the range of numbers: a server on IEEE doubles (every Node.js
        # SDK server) may drop an id past 2**53. It must survive it; silence is tolerated.
        ProbeKind("id-huge", Expect.TOLERATE, "a request with the id 2**63"),
        ProbeKind("id-negative", Expect.ANSWER, "a request with the id -1"),
        ProbeKind("id-zero", Expect.ANSWER, "a request with the id 0"),
        ProbeKind("id-string-empty", Expect.ANSWER, "a request with the empty string as its id"),
        ProbeKind("id-string-long", Expect.ANSWER, f"a request with a {LONG_ID_CHARS}-character string as its id"),
        ProbeKind("id-huge-float", Expect.TOLERATE, "a request with the id 1e300"),
        ProbeKind("params-array", Expect.TOLERATE, "a request whose params are an array"),
        ProbeKind("unexpected-notification", Expect.SILENCE, "a notification with an unknown method"),
        ProbeKind("cancel-unknown-request", Expect.SILENCE, "a cancellation of a request never sent"),
        ProbeKind("initialized-again", Expect.SILENCE, "a second `notifications/initialized`"),
        ProbeKind("unsolicited-response", Expect.SILENCE, "a response to a request the server never sent"),
    )
}
"""Every probe, in the order a round sends them: by name, what it is and what it expects."""


@dataclass(frozen=True, slots=True)
class ProtocolProbe:
    kind: ProbeKind
    message: dict[str, Any]
    """The JSON-RPC message as built, before the session's envelope (`target.raw.stamped`)."""

    @property
    def name(self) -> str:
        return self.kind.name


def _request(probe: str, method: str, params: Any, request_id: Any = None) -> dict[str, Any]:
    rid = f"fuzzgate-probe-{probe}" if request_id is None else request_id
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def _notification(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def build_probes(
    tool: str | None, tool_requiring_nothing: str | None, tool_requiring_some: str | None, known_tools: Sequence[str]
) -> tuple[ProtocolProbe, ...]:
    """The round's probes, in `PROBES` order. `tool` is the tool the `tools/call` probes go to (one
    fuzzing may call: never a tool the destructive guard blocks); without one those probes are left
    out. `arguments-omitted` goes to a tool whose schema requires no argument, and
    `arguments-omitted-required` to one that requires some, each when there is one. The unknown
    tool's name is none of `known_tools`."""
    unknown = UNKNOWN_TOOL
    while unknown in known_tools:
        unknown += "-x"

    def call(probe: str, params: dict[str, Any]) -> dict[str, Any]:
        return _request(probe, "tools/call", params)

    messages: dict[str, dict[str, Any]] = {}
    if tool_requiring_nothing is not None:
        messages["arguments-omitted"] = call("arguments-omitted", {"name": tool_requiring_nothing})
    if tool_requiring_some is not None:
        messages["arguments-omitted-required"] = call("arguments-omitted-required", {"name": tool_requiring_some})
    if tool is not None:
        messages["arguments-null"] = call("arguments-null", {"name": tool, "arguments": None})
        messages["arguments-array"] = call("arguments-array", {"name": tool, "arguments": []})
        messages["arguments-string"] = call("arguments-string", {"name": tool, "arguments": "{}"})
    messages["name-number"] = call("name-number", {"name": 42, "arguments": {}})
    messages["unknown-tool"] = call("unknown-tool", {"name": unknown, "arguments": {}})
    messages["unknown-method"] = _request("unknown-method", UNKNOWN_METHOD, {})
    # Ids go on `tools/list`, which every era has (2026-07-28 has no `ping`).
    for probe, request_id in (
        ("id-huge", 2**63),
        ("id-negative", -1),
        ("id-zero", 0),
        ("id-string-empty", ""),
        ("id-string-long", "i" * LONG_ID_CHARS),
        ("id-huge-float", 1e300),
    ):
        messages[probe] = _request(probe, "tools/list", {}, request_id)
    messages["params-array"] = _request("params-array", "tools/list", [])
    messages["unexpected-notification"] = _notification("notifications/fuzzgate-unexpected", {})
    messages["cancel-unknown-request"] = _notification(
        "notifications/cancelled", {"requestId": "fuzzgate-never-sent", "reason": "fuzzgate protocol probe"}
    )
    messages["initialized-again"] = _notification("notifications/initialized", {})
    messages["unsolicited-response"] = {"jsonrpc": "2.0", "id": "fuzzgate-never-asked", "result": {}}
    return tuple(ProtocolProbe(kind, messages[name]) for name, kind in PROBES.items() if name in messages)


def banner_request() -> dict[str, Any]:
    """The message a start-up banner finding's repro holds: a harmless request, since what shows the
    bug is the server's start, which any connection goes through."""
    return _request(BANNER, "tools/list", {})


def probe_of(observation: Observation) -> str | None:
    """The name of the probe an observation of this module is about, or None for any other."""
    signature = observation.signature
    return signature[1] if len(signature) == 3 and signature[0] == "probe" else None


def _internal_error(outcome: CallOutcome) -> str | None:
    """The reply's own evidence of an unhandled exception, in words, or None."""
    if outcome.status is OutcomeStatus.RPC_ERROR and outcome.rpc_code in INTERNAL_ERROR_CODES:
        return f"JSON-RPC error {outcome.rpc_code}"
    text = outcome.text.strip()
    if outcome.status is OutcomeStatus.TOOL_ERROR and SDK_UNHANDLED.fullmatch(text):
        return "the SDK's reply for an unhandled exception"
    if outcome.status in (OutcomeStatus.OK, OutcomeStatus.TOOL_ERROR, OutcomeStatus.RPC_ERROR) and text:
        trace = root_cause(parse_traces(text))
        if trace is not None:
            return "a stack trace in the reply"
    return None


_UNANSWERED = {
    AfterTimeout.ALIVE: "and went on answering others",
    AfterTimeout.STUCK: "and stopped answering altogether",
}


def judge(name: str, outcome: CallOutcome, redact: Redactor) -> list[Observation]:
    """What the outcome of probe `name` shows: at most one observation, the worst symptom (a
    death, then a hang, silence, an invalid reply, a reply to a notification, other wire anomalies,
    an internal error). For `BANNER`, the outcome's anomalies are the server's start-up output
    (`engine.protocol_round.send_probe`). An unknown probe name shows nothing."""
    if name == BANNER:
        banner = banner_observation(outcome.anomalies, redact)
        return [banner] if banner is not None else []
    kind = PROBES.get(name)
    if kind is None:
        return []
    found = _judge(kind, outcome, redact)
    if found is None:
        return []
    text = redact.text(f"{found.message} (protocol probe {name})")
    return [
        Observation(
            found.kind, text, ("probe", name, found.symptom), found.details, server_wide=True, cause=found.cause
        )
    ]


class _Found(NamedTuple):
    symptom: str
    """The signature's last part."""
    kind: Kind
    message: str
    """What happened, in words."""
    details: Details
    """The evidence."""
    cause: Cause = Cause.SERVER


def _judge(kind: ProbeKind, outcome: CallOutcome, redact: Redactor) -> _Found | None:
    what = kind.what
    status = outcome.status
    if outcome.memory is not None:
        message = memory_message(outcome.memory, f"on {what}")
        details = outcome_details(outcome, redact, memory_error(outcome.memory))
        return _Found("out-of-memory", Kind.OUT_OF_MEMORY, message, details)
    if status is OutcomeStatus.CLOSED or outcome.after_timeout is AfterTimeout.DIED:
        traces = parse_traces(outcome.stderr) if outcome.stderr else []
        trace = root_cause(traces)
        how = f"exit status {outcome.exit_code}" if outcome.exit_code is not None else "connection closed"
        cause = f" after {stderr_headline(outcome.stderr, redact)}" if trace is not None else ""
        when = "never answered, then died on the next request" if status is OutcomeStatus.TIMEOUT else "died"
        message = f"the server {when} ({how}{cause}) on {what}"
        details = trace_details(trace, outcome, redact)
        sdk = died_in_sdk(traces)
        if sdk is None:
            return _Found("crash", Kind.CRASH, message, details)
        return _Found("crash", Kind.CRASH, f"{message}: {sdk_death(sdk)}", details, Cause.SDK)
    if status is OutcomeStatus.TIMEOUT and outcome.after_timeout is AfterTimeout.STUCK:
        return _Found("hang", Kind.HANG, f"the server stopped answering after {what}", outcome_details(outcome, redact))
    wrong_id = next((a for a in outcome.anomalies if a.kind is AnomalyKind.WRONG_ID), None)
    if status is OutcomeStatus.TIMEOUT and kind.expect in (Expect.ANSWER, Expect.REJECT):
        then = _UNANSWERED.get(outcome.after_timeout or AfterTimeout.ALIVE, "")
        how = ", answering with an id that matches no request instead," if wrong_id is not None else ""
        error = wrong_id.excerpt if wrong_id is not None else outcome.error
        details = outcome_details(outcome, redact, error)
        return _Found("unanswered", Kind.PROTOCOL_ERROR, f"never answered {what}{how} {then}", details)
    invalid = next((a for a in outcome.anomalies if a.kind is AnomalyKind.INVALID_MESSAGE), None)
    if invalid is not None:
        message = f"answered {what} with a message that is not valid JSON-RPC: {invalid.excerpt}"
        return _Found("invalid-reply", Kind.PROTOCOL_ERROR, message, _reply_details(outcome, redact))
    if kind.expect is Expect.SILENCE and outcome.payload:
        message = f"answered {what}, which must get no reply"
        return _Found("answered-notification", Kind.PROTOCOL_ERROR, message, _reply_details(outcome, redact))
    other = _wire_anomaly(outcome.anomalies)
    if other is not None:
        message = f"{_anomaly_words(other)} while handling {what}"
        return _Found(other.kind.value, Kind.PROTOCOL_ERROR, message, outcome_details(outcome, redact, other.excerpt))
    if kind.expect is Expect.ANSWER and (evidence := _internal_error(outcome)) is not None:
        said = redact.cut(outcome.text.strip(), EXCERPT_CHARS)
        message = f"answered {what} with an internal error ({evidence}{': ' + said if said else ''})"
        return _Found("internal-error", Kind.INTERNAL_ERROR, message, _reply_details(outcome, redact))
    return None


_ANOMALY_WORDS = {
    AnomalyKind.NON_JSON: "wrote a line that is not JSON to stdout",
    AnomalyKind.WRONG_ID: "answered with an id that matches no request",
    AnomalyKind.OVERSIZED: "sent a line too long to be a message",
    AnomalyKind.INVALID_MESSAGE: "sent a message that is not valid JSON-RPC",
}


def _anomaly_words(anomaly: WireAnomaly) -> str:
    if anomaly.kind is AnomalyKind.NON_JSON and anomaly.excerpt in (SSE_NOT_JSON, BODY_NOT_JSON):
        # Over streamable HTTP: what the server answered with, not a line on its stdout (its log).
        return f"sent {anomaly.excerpt}"
    return _ANOMALY_WORDS[anomaly.kind]


def _wire_anomaly(anomalies: Sequence[WireAnomaly]) -> WireAnomaly | None:
    return next((a for a in anomalies if a.kind in _ANOMALY_WORDS), None)


def _reply_details(outcome: CallOutcome, redact: Redactor) -> Details:
    """The reply itself as the evidence (redacted whole, then cut), with the stderr excerpt."""
    reply = redact.cut(outcome.payload, 2 * EXCERPT_CHARS) if outcome.payload else None
    return outcome_details(outcome, redact, reply if reply is not None else outcome.error)


def banner_observation(anomalies: Sequence[WireAnomaly], redact: Redactor) -> Observation | None:
    """The stdout lines a stdio server wrote before its first reply that are not JSON (a start-up
    banner): they break the framing a client reads, and no call was pending to report them with."""
    lines = [a for a in anomalies if a.kind is AnomalyKind.NON_JSON]
    if not lines:
        return None
    first = redact.cut(lines[0].excerpt, EXCERPT_CHARS)
    count = f"{len(lines)} non-JSON line{'s' if len(lines) != 1 else ''}"
    message = f"the server wrote {count} to stdout before its first reply, the first: {first!r}"
    return Observation(
        Kind.PROTOCOL_ERROR, redact.text(message), ("probe", BANNER, "non_json"), Details(error=first), server_wide=True
    )
