"""Telling the SDK's symptoms from the server's bugs: which SDK a traceback runs through, a rejection
the SDK raised before the server's code ran, and the lone-surrogate request the SDK's transport drops."""

from __future__ import annotations

from pathlib import Path

from fuzzgate.check import CallContext, Observation, Oracles
from fuzzgate.check.sdk import EnvelopeIssue, Sdk, ServerFacts, envelope_rejection, sdk_in_frames, through_sdk_only
from fuzzgate.check.secrets import SecretScanner
from fuzzgate.check.traceback import Frame, Trace
from fuzzgate.model.findings import Cause, Kind
from fuzzgate.model.outcome import AfterTimeout, CallOutcome, OutcomeStatus

SITE = "/opt/venv/lib/python3.12/site-packages"
VALIDATION = f"""\
ERROR mcp.server: Error validating tool arguments
Traceback (most recent call last):
  File "{SITE}/mcp/server/mcpserver/tools/base.py", line 170, in run
    validated = self.fn_metadata.arg_model.model_validate(arguments)
  File "{SITE}/pydantic/main.py", line 627, in model_validate
    return cls.__pydantic_validator__.validate_python(obj)
pydantic_core._pydantic_core.ValidationError: 1 validation error for addArguments
"""


def _trace(*paths: str) -> Trace:
    return Trace("ValidationError", "1 validation error", tuple(Frame(p, 1, "f") for p in paths))


def test_the_sdk_and_its_version_come_from_its_metadata_beside_the_frames(tmp_path: Path) -> None:
    site = tmp_path / "lib" / "python3.12" / "site-packages"
    (site / "mcp-1.9.4.dist-info").mkdir(parents=True)
    (site / "mcp-1.9.4.dist-info" / "METADATA").write_text("Metadata-Version: 2.4\nName: mcp\nVersion: 1.9.4\n")
    assert sdk_in_frames(_trace(f"{site}/mcp/server/lowlevel/server.py")) == Sdk("mcp", "1.9.4")
    assert str(Sdk("mcp", "1.9.4")) == "the Python MCP SDK (mcp 1.9.4)"
    # Nothing installed beside it: the SDK is known, its version is not.
    assert sdk_in_frames(_trace(f"{SITE}/mcp/server/lowlevel/server.py")) == Sdk("mcp")
    assert (
        str(Sdk("@modelcontextprotocol/sdk")) == "the TypeScript MCP SDK (@modelcontextprotocol/sdk, version not known)"
    )
    assert sdk_in_frames(_trace("/srv/app/server.py")) is None


def test_a_rejection_is_the_sdks_only_when_no_server_code_ran() -> None:
    assert through_sdk_only(_trace(f"{SITE}/mcp/server/tools/base.py", f"{SITE}/pydantic/main.py")) == Sdk("mcp")
    # The server's checkout, or an installed server's package, in the trace: the server's own.
    assert through_sdk_only(_trace(f"{SITE}/mcp/server/tools/base.py", "/srv/app/server.py")) is None
    assert through_sdk_only(_trace(f"{SITE}/mcp/server/tools/base.py", f"{SITE}/mcp_server_x/server.py")) is None
    assert through_sdk_only(_trace(f"{SITE}/pydantic/main.py")) is None  # no SDK frame: who knows


ORACLES = Oracles(slow_s=2.0, scanner=SecretScanner([], {}), server=ServerFacts(sdk=Sdk("mcp", "2.3.0")))


def _observe(
    arguments: dict[str, object], schema_valid: bool, outcome: CallOutcome, oracles: Oracles = ORACLES
) -> list[Observation]:
    return oracles.observe_call(CallContext("add", arguments, schema_valid, outcome))


def test_input_the_schema_forbids_rejected_by_the_sdk_is_one_low_server_finding() -> None:
    outcome = CallOutcome(OutcomeStatus.TOOL_ERROR, 0.05, text="Error executing tool add", stderr=VALIDATION)
    (observation,) = _observe({}, False, outcome)
    assert observation.cause is Cause.SDK and observation.server_wide
    assert observation.signature == ("sdk", "mcp", "raises-on-invalid-input")
    assert "the Python MCP SDK (mcp 2.3.0)" in observation.message  # the version the process showed
    # The same traceback for input the schema allows is a bug (the server's contract is broken).
    (valid,) = _observe({"a": 1, "b": 2}, True, outcome)
    assert valid.cause is Cause.SERVER and valid.kind is Kind.INTERNAL_ERROR and not valid.server_wide


def _dropped(after: AfterTimeout) -> CallOutcome:
    return CallOutcome(OutcomeStatus.TIMEOUT, 1.0, error="no reply within 1s", after_timeout=after)


def test_a_dropped_lone_surrogate_is_the_sdks_only_on_its_sdk_and_when_the_server_stays_up() -> None:
    arguments = {"a": "\ud800"}
    (by_sdk,) = _observe(arguments, False, _dropped(AfterTimeout.ALIVE))
    assert by_sdk.cause is Cause.SDK and by_sdk.signature == ("unanswered", "lone-surrogate")
    assert "the Python MCP SDK (mcp 2.3.0)" in by_sdk.message and "upgrading does not help yet" in by_sdk.message
    # Stalled or died on it: the server did something of its own.
    (stuck,) = _observe(arguments, False, _dropped(AfterTimeout.STUCK))
    assert stuck.cause is Cause.SERVER
    # Not known to run on the SDK: the server's, at its kind's severity.
    bare = Oracles(slow_s=2.0, scanner=SecretScanner([], {}))
    (unknown,) = _observe(arguments, False, _dropped(AfterTimeout.ALIVE), bare)
    assert unknown.cause is Cause.SERVER and unknown.signature == by_sdk.signature


# The TypeScript SDK's reply (1.32.2 on zod 3.25.76) to `{"constructor": {}}` as a tool's arguments,
# as a real server (`@kazuph/mcp-taskmanager` 1.1.1) sent it.
ENVELOPE_REJECTION = """[
  {
    "expected": "record",
    "code": "invalid_type",
    "path": [
      "params",
      "arguments"
    ],
    "message": "Invalid input: expected record, received object"
  }
]"""


def _internal_error(text: str) -> CallOutcome:
    error = f"{text} (JSON-RPC error -32603)"
    return CallOutcome(OutcomeStatus.RPC_ERROR, 0.01, text=text, error=error, rpc_code=-32603)


def test_a_request_the_typescript_sdk_refused_is_told_from_its_reply() -> None:
    issue = envelope_rejection(ENVELOPE_REJECTION)
    assert issue == EnvelopeIssue("params.arguments", "Invalid input: expected record, received object")
    # A handler's own zod error is about its arguments, never the request around them.
    handler = '[{"code": "too_small", "path": ["name"], "message": "Too small"}]'
    assert envelope_rejection(handler) is None
    mixed = (
        '[{"code": "custom", "path": ["params", "name"], "message": "x"}, '
        '{"code": "custom", "path": [], "message": "y"}]'
    )
    assert envelope_rejection(mixed) is None
    no_code = '[{"path": ["params"], "message": "m"}]'
    malformed = ("", "Internal error", "[]", "[1]", "[{]", '{"path": ["params"]}', no_code)
    for text in malformed:
        assert envelope_rejection(text) is None, text


def test_the_typescript_sdks_refusal_of_a_schema_valid_request_is_one_low_sdk_finding() -> None:
    (observation,) = _observe({"constructor": {}}, True, _internal_error(ENVELOPE_REJECTION))
    assert observation.cause is Cause.SDK and observation.server_wide and observation.kind is Kind.INTERNAL_ERROR
    assert observation.signature == ("sdk", "@modelcontextprotocol/sdk", "rejects-request", "params.arguments")
    assert "the TypeScript MCP SDK" in observation.message
    assert "zod 4.1.13 fixes it" in observation.message
    # Another refusal of the request: the SDK's still, with no fix known.
    (other,) = _observe({"note": {}}, True, _internal_error(ENVELOPE_REJECTION))
    assert other.cause is Cause.SDK and "4.1.13" not in other.message and "try upgrading" in other.message
    # Any other internal error for schema-valid input is the server's.
    (own,) = _observe({"constructor": {}}, True, _internal_error("Cannot read properties of undefined"))
    assert own.cause is Cause.SERVER and not own.server_wide
