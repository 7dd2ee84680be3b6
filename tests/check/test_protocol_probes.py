"""The protocol probes' judge, the JSON-RPC validity check of raw replies, and the probe list."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from fuzzgate.check.protocol_probes import (
    BANNER,
    PROBES,
    UNKNOWN_TOOL,
    Expect,
    banner_observation,
    build_probes,
    judge,
    probe_of,
)
from fuzzgate.check.secrets import Redactor
from fuzzgate.model.findings import Kind, Surface
from fuzzgate.model.outcome import AfterTimeout, AnomalyKind, CallOutcome, MemoryExceeded, OutcomeStatus, WireAnomaly
from fuzzgate.target.raw import expects_reply, jsonrpc_problem
from fuzzgate.target.stdio import id_key
from fuzzgate.triage.finding_set import subject
from fuzzgate.triage.fingerprint import fingerprint

REDACT = Redactor(())


def outcome(status: OutcomeStatus, **fields: Any) -> CallOutcome:
    return CallOutcome(status=status, duration_s=0.01, **fields)


def reply(payload: dict[str, Any], status: OutcomeStatus, **fields: Any) -> CallOutcome:
    return outcome(status, payload=json.dumps(payload), **fields)


RESULT = reply({"jsonrpc": "2.0", "id": 1, "result": {}}, OutcomeStatus.OK)
TOOL_ERROR = reply({"jsonrpc": "2.0", "id": 1, "result": {"isError": True}}, OutcomeStatus.TOOL_ERROR, text="no")
INVALID_PARAMS = reply({}, OutcomeStatus.RPC_ERROR, rpc_code=-32602, text="Invalid params")
METHOD_NOT_FOUND = reply({}, OutcomeStatus.RPC_ERROR, rpc_code=-32601, text="Method not found")
INVALID_REQUEST = reply({}, OutcomeStatus.RPC_ERROR, rpc_code=-32600, text="Invalid Request")
INTERNAL = reply({}, OutcomeStatus.RPC_ERROR, rpc_code=-32603, text="Internal error: 'arguments'")
CODE_ZERO = reply({}, OutcomeStatus.RPC_ERROR, rpc_code=0, text="'NoneType' object is not subscriptable")
SDK_UNHANDLED = reply({}, OutcomeStatus.TOOL_ERROR, text="Error executing tool echo")
REPLY_TRACE = reply(
    {},
    OutcomeStatus.TOOL_ERROR,
    text="Traceback (most recent call last):\n  File \"/srv/app.py\", line 3, in call\n    x()\nKeyError: 'a'",
)
DIED = outcome(OutcomeStatus.CLOSED, exit_code=3)
DIED_AFTER_SILENCE = outcome(OutcomeStatus.TIMEOUT, after_timeout=AfterTimeout.DIED, exit_code=1)
DROPPED = outcome(OutcomeStatus.TIMEOUT, after_timeout=AfterTimeout.ALIVE)
STUCK = outcome(OutcomeStatus.TIMEOUT, after_timeout=AfterTimeout.STUCK)
WRONG_ID = outcome(
    OutcomeStatus.TIMEOUT,
    after_timeout=AfterTimeout.ALIVE,
    anomalies=(WireAnomaly(AnomalyKind.WRONG_ID, '{"id": 9}'),),
)
INVALID = reply(
    {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {}},
    OutcomeStatus.OK,
    anomalies=(WireAnomaly(AnomalyKind.INVALID_MESSAGE, 'a reply with both "result" and "error"'),),
)
NO_REPLY = outcome(OutcomeStatus.OK)
HTTP_REFUSED_NOTIFICATION = outcome(OutcomeStatus.RPC_ERROR, error="HTTP 400")
NOTIFICATION_ANSWERED = reply({"jsonrpc": "2.0", "id": None, "error": {"code": -32601}}, OutcomeStatus.RPC_ERROR)
BANNER_LINE = outcome(OutcomeStatus.OK, anomalies=(WireAnomaly(AnomalyKind.NON_JSON, "DEBUG: got it"),))
ABORTED = outcome(OutcomeStatus.ABORTED)

# (probe, outcome, (kind, symptom) or None for no finding)
TABLE: list[tuple[str, CallOutcome, tuple[Kind, str] | None]] = [
    # A request the specification allows: answered, and a rejection is right.
    ("arguments-omitted", RESULT, None),
    ("arguments-omitted", TOOL_ERROR, None),
    ("arguments-omitted", INVALID_PARAMS, None),
    ("unknown-tool", TOOL_ERROR, None),
    ("unknown-tool", INVALID_PARAMS, None),
    ("unknown-method", METHOD_NOT_FOUND, None),
    ("id-huge", RESULT, None),
    ("id-string-long", INVALID_REQUEST, None),
    # ... but never with an internal error, in any of its shapes.
    ("arguments-omitted", INTERNAL, (Kind.INTERNAL_ERROR, "internal-error")),
    ("unknown-tool", CODE_ZERO, (Kind.INTERNAL_ERROR, "internal-error")),
    ("unknown-tool", SDK_UNHANDLED, (Kind.INTERNAL_ERROR, "internal-error")),
    ("unknown-method", REPLY_TRACE, (Kind.INTERNAL_ERROR, "internal-error")),
    ("id-zero", INTERNAL, (Kind.INTERNAL_ERROR, "internal-error")),
    # A malformed request: any error is a correct rejection, an internal error included.
    ("arguments-null", INTERNAL, None),
    ("arguments-array", INVALID_PARAMS, None),
    ("arguments-string", SDK_UNHANDLED, None),
    ("name-number", TOOL_ERROR, None),
    # Whatever the probe: a death is a crash, a stuck server a hang.
    ("arguments-null", DIED, (Kind.CRASH, "crash")),
    ("unexpected-notification", DIED, (Kind.CRASH, "crash")),
    ("params-array", DIED_AFTER_SILENCE, (Kind.CRASH, "crash")),
    # Stopped by fuzzgate for its memory: not a death of its own.
    ("id-huge", replace(DIED, memory=MemoryExceeded(300 << 20, 256 << 20)), (Kind.OUT_OF_MEMORY, "out-of-memory")),
    ("id-huge", STUCK, (Kind.HANG, "hang")),
    ("params-array", STUCK, (Kind.HANG, "hang")),
    # Fuzzgate's own restart is nobody's bug.
    ("arguments-null", ABORTED, None),
    # A request with an id must be answered; a message no SDK can read may be dropped.
    ("arguments-array", DROPPED, (Kind.PROTOCOL_ERROR, "unanswered")),
    ("id-negative", DROPPED, (Kind.PROTOCOL_ERROR, "unanswered")),
    ("id-string-empty", WRONG_ID, (Kind.PROTOCOL_ERROR, "unanswered")),
    ("params-array", DROPPED, None),
    ("id-huge-float", DROPPED, None),
    ("id-huge", DROPPED, None),
    ("params-array", INVALID_REQUEST, None),
    # A reply must be valid JSON-RPC.
    ("unknown-method", INVALID, (Kind.PROTOCOL_ERROR, "invalid-reply")),
    ("params-array", INVALID, (Kind.PROTOCOL_ERROR, "invalid-reply")),
    # A notification gets no reply; an HTTP status refusing it is no reply.
    ("cancel-unknown-request", NO_REPLY, None),
    ("unsolicited-response", HTTP_REFUSED_NOTIFICATION, None),
    ("initialized-again", NOTIFICATION_ANSWERED, (Kind.PROTOCOL_ERROR, "answered-notification")),
    # Other wire anomalies seen while a probe was pending are that probe's.
    ("unexpected-notification", BANNER_LINE, (Kind.PROTOCOL_ERROR, "non_json")),
    # An unknown probe name shows nothing.
    ("no-such-probe", DIED, None),
]


@pytest.mark.parametrize(("probe", "seen", "expected"), TABLE)
def test_judge(probe: str, seen: CallOutcome, expected: tuple[Kind, str] | None) -> None:
    observations = judge(probe, seen, REDACT)
    if expected is None:
        assert observations == []
        return
    [observation] = observations
    assert (observation.kind, observation.signature) == (expected[0], ("probe", probe, expected[1]))
    assert observation.server_wide
    assert probe_of(observation) == probe
    assert f"protocol probe {probe}" in observation.message


def test_one_finding_per_probe_with_a_payload_free_fingerprint() -> None:
    """The signature names the probe and the symptom: the same probe failing with other text is the
    same finding, another probe failing the same way is another one."""

    def finding_id(probe: str, seen: CallOutcome) -> str:
        [observation] = judge(probe, seen, REDACT)
        surface, name = subject(observation, "echo")
        assert (surface, name) == (Surface.SERVER, "transport")
        return fingerprint(observation.kind, surface, name, observation.signature)

    other_text = reply({}, OutcomeStatus.RPC_ERROR, rpc_code=-32603, text="Internal error: 'name' at 0x7f3a")
    assert finding_id("arguments-omitted", INTERNAL) == finding_id("arguments-omitted", other_text)
    assert finding_id("arguments-omitted", INTERNAL) != finding_id("unknown-tool", INTERNAL)


def test_judge_redacts_what_it_quotes() -> None:
    redact = Redactor(("hunter2-secret",))
    seen = reply({"secret": "hunter2-secret"}, OutcomeStatus.RPC_ERROR, rpc_code=-32603, text="bad hunter2-secret")
    [observation] = judge("unknown-method", seen, redact)
    assert "hunter2-secret" not in observation.message
    assert "hunter2-secret" not in (observation.details.error or "")


def test_banner() -> None:
    lines = (
        WireAnomaly(AnomalyKind.NON_JSON, "server 1.0 starting"),
        WireAnomaly(AnomalyKind.NON_JSON, "ready"),
        WireAnomaly(AnomalyKind.INVALID_MESSAGE, "{}"),
    )
    observation = banner_observation(lines, REDACT)
    assert observation is not None
    assert observation.kind is Kind.PROTOCOL_ERROR and observation.server_wide
    assert observation.signature == ("probe", BANNER, "non_json")
    assert "2 non-JSON lines" in observation.message and "server 1.0 starting" in observation.message
    assert banner_observation(lines[2:], REDACT) is None
    assert [o.signature for o in judge(BANNER, outcome(OutcomeStatus.OK, anomalies=lines), REDACT)] == [
        observation.signature
    ]
    assert judge(BANNER, NO_REPLY, REDACT) == []


VALID = {"jsonrpc": "2.0", "id": 1, "result": {}}

PROBLEMS: list[tuple[Any, str | None]] = [
    (VALID, None),
    ({"jsonrpc": "2.0", "id": "a", "result": {"tools": []}}, None),
    ({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}}, None),
    ({"jsonrpc": "2.0", "id": 2**63, "error": {"code": 0, "message": ""}}, None),
    ([VALID], "not an object"),
    ("ok", "not an object"),
    ({"id": 1, "result": {}}, '"jsonrpc" is not "2.0"'),
    ({"jsonrpc": "1.0", "id": 1, "result": {}}, '"jsonrpc" is not "2.0"'),
    ({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "x"}}, 'both "result" and "error"'),
    ({"jsonrpc": "2.0", "id": 1}, 'neither "result" nor "error"'),
    ({"jsonrpc": "2.0", "result": {}}, 'without "id"'),
    ({"jsonrpc": "2.0", "id": {"a": 1}, "result": {}}, '"id" is neither'),
    ({"jsonrpc": "2.0", "id": True, "result": {}}, '"id" is neither'),
    ({"jsonrpc": "2.0", "id": 1, "error": "boom"}, '"error" is not an object'),
    ({"jsonrpc": "2.0", "id": 1, "error": {"message": "no code"}}, 'without an integer "code"'),
    ({"jsonrpc": "2.0", "id": 1, "error": {"code": "-32603", "message": "x"}}, 'without an integer "code"'),
    ({"jsonrpc": "2.0", "id": 1, "error": {"code": 1.5, "message": "x"}}, 'without an integer "code"'),
    ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603}}, 'without a string "message"'),
    ({"jsonrpc": "2.0", "id": None, "result": {}}, 'result with a null "id"'),
    ({"jsonrpc": "2.0", "id": 1, "result": None}, '"result" is not an object'),
]


@pytest.mark.parametrize(("data", "problem"), PROBLEMS)
def test_jsonrpc_problem(data: Any, problem: str | None) -> None:
    found = jsonrpc_problem(data)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found


def test_reply_ids_match_by_value_and_type() -> None:
    # A server parsing ids as doubles answers 2**63 as 9223372036854776000: JSON allows it.
    assert id_key(2**63) == id_key(9223372036854776000) == id_key(9.223372036854776e18)
    assert id_key(0) == id_key(0.0)
    assert id_key(1) != id_key("1")
    assert id_key("") != id_key(None)
    assert id_key(True) != id_key(1)
    assert id_key(10**400) == id_key(10**400)


def test_expects_reply() -> None:
    assert expects_reply({"jsonrpc": "2.0", "id": 0, "method": "ping"})
    assert not expects_reply({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert not expects_reply({"jsonrpc": "2.0", "id": "x", "result": {}})
    assert not expects_reply([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
    assert not expects_reply('{"jsonrpc": "2.0", "id": 1, "method": "ping"}')


def test_probe_list() -> None:
    probes = build_probes("echo", "echo", "add", ["echo", "add", UNKNOWN_TOOL])
    names = [p.name for p in probes]
    assert names == list(PROBES)
    by_name = {p.name: p.message for p in probes}
    assert "arguments" not in by_name["arguments-omitted"]["params"]
    assert by_name["arguments-omitted"]["params"]["name"] == "echo"
    assert by_name["arguments-omitted-required"]["params"]["name"] == "add"
    assert by_name["arguments-null"]["params"] == {"name": "echo", "arguments": None}
    assert by_name["id-huge"]["id"] == 2**63
    assert by_name["id-string-empty"]["id"] == ""
    unknown = by_name["unknown-tool"]["params"]["name"]
    assert unknown.startswith(UNKNOWN_TOOL) and unknown not in ("echo", "add", UNKNOWN_TOOL)
    # Requests have distinct ids; notifications have none.
    for name, message in by_name.items():
        assert expects_reply(message) == (PROBES[name].expect in (Expect.ANSWER, Expect.REJECT, Expect.TOLERATE))
    ids = [json.dumps(m["id"]) for m in by_name.values() if expects_reply(m)]
    assert len(ids) == len(set(ids))


def test_no_tool_to_call_leaves_out_the_tool_calls() -> None:
    names = [p.name for p in build_probes(None, None, None, [])]
    assert not any(name.startswith("arguments-") for name in names)
    # Neither names a real tool.
    assert "unknown-tool" in names and "name-number" in names
