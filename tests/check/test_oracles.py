"""The oracles on hand-made outcomes: what is a finding, what is correct behaviour."""

from __future__ import annotations

from pathlib import Path

from fuzzgate.check import Oracles, normalize_message, normalize_schema_path
from fuzzgate.check.registry import CallContext
from fuzzgate.check.sdk import ServerFacts
from fuzzgate.check.secrets import Redactor, SecretScanner, canary_environment
from fuzzgate.check.slow import time_defaults
from fuzzgate.model.findings import Kind, Surface
from fuzzgate.model.outcome import AfterTimeout, AnomalyKind, CallOutcome, MemoryExceeded, OutcomeStatus, WireAnomaly
from tests.check.test_traceback import PLAIN

CANARIES = canary_environment(5)
ORACLES = Oracles(slow_s=2.0, scanner=SecretScanner([r"corp-[0-9]{6}"], CANARIES))


def kinds(outcome: CallOutcome, args: dict[str, object] | None = None, valid: bool = True) -> list[Kind]:
    return [o.kind for o in ORACLES.observe(args or {}, valid, outcome)]


def test_tool_error_with_plain_message_is_correct() -> None:
    assert kinds(CallOutcome(OutcomeStatus.TOOL_ERROR, 0.01, text="limit must be positive")) == []


def test_rejecting_invalid_input_is_correct() -> None:
    out = CallOutcome(OutcomeStatus.RPC_ERROR, 0.01, text="Invalid params", rpc_code=-32602)
    assert kinds(out, valid=False) == []
    internal = CallOutcome(OutcomeStatus.RPC_ERROR, 0.01, text="boom", rpc_code=-32603)
    assert kinds(internal, valid=False) == []
    assert kinds(internal, valid=True) == [Kind.INTERNAL_ERROR]


def test_crash_hang_and_slow() -> None:
    assert kinds(CallOutcome(OutcomeStatus.CLOSED, 0.1, exit_code=1)) == [Kind.CRASH]
    assert kinds(CallOutcome(OutcomeStatus.TIMEOUT, 5.0)) == [Kind.HANG]
    assert kinds(CallOutcome(OutcomeStatus.OK, 2.5)) == [Kind.SLOW]
    assert kinds(CallOutcome(OutcomeStatus.ABORTED, 0.1)) == []


def test_a_server_stopped_for_its_memory_is_out_of_memory_not_a_crash() -> None:
    memory = MemoryExceeded(held=(2 << 30) + (300 << 20), limit=2 << 30)
    for outcome in (
        CallOutcome(OutcomeStatus.CLOSED, 0.3, exit_code=-9, memory=memory, stderr=PLAIN),
        CallOutcome(OutcomeStatus.TIMEOUT, 5.0, after_timeout=AfterTimeout.DIED, exit_code=-9, memory=memory),
        CallOutcome(OutcomeStatus.OK, 0.3, text="1", died_after_reply=True, exit_code=-9, memory=memory),
    ):
        [observation] = ORACLES.observe({}, True, outcome)
        assert (observation.kind, observation.signature) == (Kind.OUT_OF_MEMORY, ("memory",))
        assert "held 2.29 GiB of resident memory" in observation.message
        assert "past the limit of 2.00 GiB" in observation.message
        assert not observation.ambiguous
    after = ORACLES.observe(
        {}, True, CallOutcome(OutcomeStatus.OK, 0.3, died_after_reply=True, exit_code=-9, memory=memory)
    )
    assert "after answering the call" in after[0].message
    # Beside other calls, the memory may be theirs: a replay must show it again.
    [beside] = ORACLES.observe(
        {}, True, CallOutcome(OutcomeStatus.CLOSED, 0.3, exit_code=-9, memory=memory, concurrent=2)
    )
    assert beside.kind is Kind.OUT_OF_MEMORY and beside.ambiguous
    # The same death without the memory watch's word is a crash.
    assert kinds(CallOutcome(OutcomeStatus.CLOSED, 0.3, exit_code=-9)) == [Kind.CRASH]


def test_a_call_that_asked_for_its_time_is_not_slow() -> None:
    schema = {
        "type": "object",
        "properties": {"duration": {"type": "number", "default": 10}, "steps": {"type": "integer", "default": 5}},
    }
    assert time_defaults(schema) == {"duration"}
    # A zero or a boolean default asks for no time.
    unasked = {"type": "object", "properties": {"delay_ms": {"default": 0}, "wait": {"default": True}}}
    assert time_defaults(unasked) == set()
    facts = ServerFacts(time_defaults={"trigger-long-running-operation": time_defaults(schema)})
    oracles = Oracles(slow_s=2.0, scanner=SecretScanner([], CANARIES), server=facts)

    def slow(tool: str, arguments: dict[str, object]) -> bool:
        ctx = CallContext(tool, arguments, True, CallOutcome(OutcomeStatus.OK, 10.0))
        return [o.kind for o in oracles.observe_call(ctx)] == [Kind.SLOW]

    # Asked for in the call, or left to a default that asks for it: by design.
    assert not slow("trigger-long-running-operation", {"duration": 10, "steps": 5})
    assert not slow("trigger-long-running-operation", {})
    assert not slow("trigger-long-running-operation", {"steps": 2})
    # Asked for nothing: slow. Another tool's defaults say nothing of this one.
    assert slow("trigger-long-running-operation", {"duration": 0})
    assert slow("echo", {})


def test_timeout_of_a_lone_surrogate_request_is_not_a_hang() -> None:
    assert kinds(CallOutcome(OutcomeStatus.TIMEOUT, 1.0), {"x": "\ud800"}) == []


def test_stderr_traceback_is_internal_error_with_location() -> None:
    (obs,) = ORACLES.observe(
        {}, True, CallOutcome(OutcomeStatus.TOOL_ERROR, 0.01, text="Error executing tool", stderr=PLAIN)
    )
    assert obs.kind is Kind.INTERNAL_ERROR
    assert obs.details.location == ("/repo/server.py", 10)
    assert obs.signature == ("trace", "server.py:split_bill")


def test_stack_trace_in_reply_text() -> None:
    assert kinds(CallOutcome(OutcomeStatus.OK, 0.01, text=PLAIN)) == [Kind.INTERNAL_ERROR]


def test_protocol_anomalies_and_schema_violation() -> None:
    out = CallOutcome(OutcomeStatus.OK, 0.01, anomalies=(WireAnomaly(AnomalyKind.NON_JSON, "hello"),) * 2)
    assert kinds(out) == [Kind.PROTOCOL_ERROR]
    drift = CallOutcome(OutcomeStatus.OUTPUT_INVALID, 0.01, text="bad", schema_path="properties/items/items/3/type")
    (obs,) = ORACLES.observe({}, True, drift)
    assert obs.kind is Kind.SCHEMA_VIOLATION and obs.signature == ("properties/items/items/*/type",)


def test_secret_leaks_but_not_echoes() -> None:
    token = "ghp_" + "A1b2C3d4" * 4 + "Zz9Y"
    assert kinds(CallOutcome(OutcomeStatus.OK, 0.01, text=f"token={token}")) == [Kind.SECRET_LEAK]
    assert kinds(CallOutcome(OutcomeStatus.OK, 0.01, text=f"you said {token}"), {"q": token}) == []
    canary = next(iter(CANARIES.values()))
    assert kinds(CallOutcome(OutcomeStatus.OK, 0.01, text=f"env: {canary}")) == [Kind.SECRET_LEAK]
    assert kinds(CallOutcome(OutcomeStatus.OK, 0.01, text="id corp-123456")) == [Kind.SECRET_LEAK]


def test_redactor_removes_values_and_patterns() -> None:
    token = "ghp_" + "A1b2C3d4" * 4 + "Zz9Y"
    redact = Redactor(["supersecretvalue", "1"], [r"corp-[0-9]{6}"])
    text = redact.text(f"a supersecretvalue b {token} c corp-123456 d 1")
    assert "supersecretvalue" not in text and token not in text and "corp-123456" not in text
    assert text.endswith("d 1")


def test_normalizers_take_the_payload_out() -> None:
    assert normalize_message("no user 'alice' (id 42) at /home/x/data.db") == normalize_message(
        "no user 'bob' (id 7) at /srv/y/other.db"
    )
    assert normalize_message("bad key 'x'") != normalize_message("timeout after 3s")
    assert normalize_schema_path("properties/a/items/0") == "properties/a/items/*"


def test_sdk_bare_unhandled_message_without_stderr() -> None:
    out = CallOutcome(OutcomeStatus.TOOL_ERROR, 0.01, text="Error executing tool split_bill")
    assert kinds(out) == [Kind.INTERNAL_ERROR]
    validation = CallOutcome(OutcomeStatus.TOOL_ERROR, 0.01, text="Error executing tool split_bill: 1 validation error")
    assert kinds(validation) == []
    with_trace = CallOutcome(OutcomeStatus.TOOL_ERROR, 0.01, text="Error executing tool split_bill", stderr=PLAIN)
    assert [o.signature[0] for o in ORACLES.observe({}, True, with_trace)] == ["trace"]


def test_echoed_stack_trace_is_not_an_exception() -> None:
    assert kinds(CallOutcome(OutcomeStatus.OK, 0.01, text=f"you said: {PLAIN}"), {"text": PLAIN}) == []


# What a code-running tool (`mcp-server-code-runner` 0.1.8) answered for `a` in Python and in
# JavaScript, and for a snippet that does not compile: the traces of the programs it ran.
RAN_PYTHON = """Traceback (most recent call last):
  File "/tmp/tmp.python", line 1, in <module>
    a
NameError: name 'a' is not defined
"""
RAN_NODE = """/tmp/tmp.js:1
a
^

ReferenceError: a is not defined
    at Object.<anonymous> (/tmp/tmp.js:1:1)
    at Module._compile (node:internal/modules/cjs/loader:1521:14)
    at Module._extensions..js (node:internal/modules/cjs/loader:1623:10)
    at Module.load (node:internal/modules/cjs/loader:1266:32)
    at Module._load (node:internal/modules/cjs/loader:1091:12)
"""
RAN_NODE_UNCOMPILED = """/tmp/tmp.js:1
/work/x/y
    ^

SyntaxError: Invalid regular expression flags
    at wrapSafe (node:internal/modules/cjs/loader:1464:18)
    at Module._compile (node:internal/modules/cjs/loader:1495:20)
    at Module._extensions..js (node:internal/modules/cjs/loader:1623:10)
    at Module.load (node:internal/modules/cjs/loader:1266:32)
"""
# A server's own exception in the reply, raised in its handler below a script's top level.
SERVER_NODE = """TypeError: Cannot read properties of undefined (reading 'id')
    at lookup (/srv/app/server.js:40:11)
    at Object.<anonymous> (/srv/app/server.js:88:1)
    at Module._compile (node:internal/modules/cjs/loader:1521:14)
"""


def test_a_trace_of_a_program_the_tool_ran_is_not_the_servers_exception() -> None:
    for text in (RAN_PYTHON, RAN_NODE, RAN_NODE_UNCOMPILED):
        assert kinds(CallOutcome(OutcomeStatus.OK, 0.01, text=text), {"code": "a"}) == [], text
    # A frame of a function outside libraries in it: the server's (or its helper's) own exception.
    assert kinds(CallOutcome(OutcomeStatus.OK, 0.01, text=SERVER_NODE), {"id": 1}) == [Kind.INTERNAL_ERROR]
    helper = 'line 1, in <module>\n  File "/tmp/h.py", line 3, in f\n'
    nested = RAN_PYTHON.replace("line 1, in <module>\n    a\n", helper)
    assert kinds(CallOutcome(OutcomeStatus.OK, 0.01, text=nested), {"code": "a"}) == [Kind.INTERNAL_ERROR]


def test_report_files_survive_lone_surrogates(tmp_path: Path) -> None:
    import json as _json

    from fuzzgate.model.files import write_atomic

    path = tmp_path / "r.json"
    write_atomic(path, _json.dumps({"a": "x\ud800y"}, ensure_ascii=False))
    assert _json.loads(path.read_text(encoding="utf-8")) == {"a": "x\ud800y"}


def test_one_bare_value_bug_is_one_signature_on_every_surface() -> None:
    """A prompt that answers -32603 with its value bare, reached with a plain, an empty and a
    form-feed value (a real server's one bug was three findings)."""
    signatures = set()
    for surface in (Surface.PROMPT, Surface.TOOL):
        for value in ("a", "", "\x15\f\x83R"):
            text = f"Invalid resourceType: {value}. Must be Text or Blob."
            outcome = CallOutcome(OutcomeStatus.RPC_ERROR, 0.01, text=text, rpc_code=-32603)
            arguments = {"resourceType": value, "resourceId": "1"}
            ctx = CallContext("resource-prompt", arguments, True, outcome, surface=surface)
            (obs,) = ORACLES.observe_call(ctx)
            signatures.add(obs.signature)
    assert signatures == {("rpc", "-32603", "Invalid resourceType: <arg>. Must be Text or Blob.")}


def test_an_unhandled_exception_cut_before_its_type_reads_as_one() -> None:
    """awslabs.aws-documentation-mcp-server 1.2.3: the exception line of a rich traceback was past
    the stderr kept for the call, and the finding read "unhandled an exception (...)"."""
    cut = 'Traceback (most recent call last):\n  File "/repo/server.py", line 12, in lookup\n    return next(rows)\n'
    (obs,) = ORACLES.observe(
        {}, True, CallOutcome(OutcomeStatus.RPC_ERROR, 0.01, text="boom", rpc_code=-32603, stderr=cut)
    )
    assert obs.kind is Kind.INTERNAL_ERROR
    assert obs.message == "unhandled exception (the traceback ends before its type)", obs.message
