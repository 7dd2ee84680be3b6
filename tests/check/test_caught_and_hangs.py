"""A traceback on stderr of a call the server answered properly is an exception it caught (at most
low); only an exception nobody caught keeps `internal_error`'s severity. A hang says whether the
server went on answering (at most medium) or stopped answering altogether (a denial of service)."""

from __future__ import annotations

import pytest

from fuzzgate.check import Oracles
from fuzzgate.check.crash import HANG_ALIVE_SEVERITY
from fuzzgate.check.internal_error import CAUGHT_SEVERITY
from fuzzgate.check.observation import Observation
from fuzzgate.check.registry import CallContext
from fuzzgate.check.sdk import PYTHON_SDK, TYPESCRIPT_SDK, Sdk, ServerFacts
from fuzzgate.check.secrets import Redactor, SecretScanner
from fuzzgate.model.findings import DEFAULT_SEVERITY, Kind, Repro, Severity, Surface
from fuzzgate.model.outcome import AfterTimeout, CallOutcome, OutcomeStatus
from fuzzgate.triage.finding_set import FindingSet
from tests.check.test_traceback import PLAIN

ORACLES = Oracles(slow_s=30.0, scanner=SecretScanner([], {}))


def observe(outcome: CallOutcome) -> Observation:
    (observation,) = ORACLES.observe({"people": 0}, True, outcome)
    return observation


@pytest.mark.parametrize(
    ("outcome", "answer"),
    [
        (CallOutcome(OutcomeStatus.TOOL_ERROR, 0.01, text="could not split the bill", stderr=PLAIN), "isError"),
        (CallOutcome(OutcomeStatus.RPC_ERROR, 0.01, text="bad people", rpc_code=-32602, stderr=PLAIN), "-32602"),
        (CallOutcome(OutcomeStatus.OK, 0.01, text="0 each", stderr=PLAIN), "a result"),
    ],
)
def test_an_exception_caught_and_answered_is_at_most_low(outcome: CallOutcome, answer: str) -> None:
    observation = observe(outcome)
    assert observation.kind is Kind.INTERNAL_ERROR and observation.ceiling is CAUGHT_SEVERITY
    assert observation.message.startswith("caught ZeroDivisionError: division by zero")
    assert answer in observation.message
    assert observation.rated(Severity.CRITICAL) is Severity.LOW
    # The same bug as when it goes uncaught: the fingerprint's signature does not change.
    assert observation.signature == ("trace", "server.py:split_bill")


@pytest.mark.parametrize(
    "outcome",
    [
        # The SDK's last resort for an exception nobody caught.
        CallOutcome(OutcomeStatus.TOOL_ERROR, 0.01, text="Error executing tool split_bill", stderr=PLAIN),
        # An internal error: the exception itself, the SDK's word for it, a masked one.
        CallOutcome(OutcomeStatus.RPC_ERROR, 0.01, text="division by zero", rpc_code=-32603, stderr=PLAIN),
        CallOutcome(OutcomeStatus.RPC_ERROR, 0.01, text="ZeroDivisionError", rpc_code=0, stderr=PLAIN),
        CallOutcome(OutcomeStatus.RPC_ERROR, 0.01, text="Error reading resource r://x", rpc_code=-32603, stderr=PLAIN),
        CallOutcome(OutcomeStatus.RPC_ERROR, 0.01, text="Internal server error", rpc_code=-32603, stderr=PLAIN),
        # No proper reply: a result that breaks its output schema, no reply at all.
        CallOutcome(OutcomeStatus.OUTPUT_INVALID, 0.01, text="bad", schema_path="type", stderr=PLAIN),
    ],
)
def test_an_exception_nobody_caught_keeps_its_severity(outcome: CallOutcome) -> None:
    observation = next(o for o in ORACLES.observe({"people": 0}, True, outcome) if o.kind is Kind.INTERNAL_ERROR)
    assert observation.ceiling is None
    assert observation.message == "unhandled ZeroDivisionError: division by zero"
    assert observation.rated(Severity.HIGH) is Severity.HIGH


def test_a_finding_set_rates_a_caught_exception_low_and_keeps_the_uncaught_one_when_both_show() -> None:
    findings = FindingSet(DEFAULT_SEVERITY, Redactor(()))
    small = Repro(seed=0, case_index=0, arguments={"people": 0}, transport="stdio")
    large = Repro(seed=0, case_index=1, arguments={"people": 0, "note": "x" * 50}, transport="stdio")
    caught = observe(CallOutcome(OutcomeStatus.TOOL_ERROR, 0.01, text="could not split", stderr=PLAIN))
    uncaught = observe(CallOutcome(OutcomeStatus.TOOL_ERROR, 0.01, text="Error executing tool t", stderr=PLAIN))
    first = findings.add(caught, "t", small)
    assert first.severity is Severity.LOW
    # One bug: the uncaught symptom wins, though its repro is larger.
    merged = findings.add(uncaught, "t", large)
    assert merged.fingerprint == first.fingerprint and merged.count == 2
    assert merged.severity is Severity.HIGH and merged.message.startswith("unhandled")
    assert findings.add(caught, "t", small).severity is Severity.HIGH


def test_a_hang_the_server_survives_is_at_most_medium_and_says_so() -> None:
    observation = observe(CallOutcome(OutcomeStatus.TIMEOUT, 5.0, after_timeout=AfterTimeout.ALIVE))
    assert observation.kind is Kind.HANG and observation.ceiling is HANG_ALIVE_SEVERITY is Severity.MEDIUM
    assert "went on answering others" in observation.message and "only this call" in observation.message
    assert observation.details.after_timeout is AfterTimeout.ALIVE


def test_a_hang_that_stops_the_whole_server_is_a_denial_of_service() -> None:
    observation = observe(CallOutcome(OutcomeStatus.TIMEOUT, 5.0, after_timeout=AfterTimeout.STUCK))
    assert observation.kind is Kind.HANG and observation.ceiling is None
    assert "stopped answering altogether" in observation.message and "denial of service" in observation.message
    assert observation.details.after_timeout is AfterTimeout.STUCK
    findings = FindingSet(DEFAULT_SEVERITY, Redactor(()))
    repro = Repro(seed=0, case_index=0, arguments={}, transport="stdio", surface=Surface.TOOL)
    finding = findings.add(observation, "freeze", repro)
    assert finding.severity is Severity.HIGH and finding.details.after_timeout is AfterTimeout.STUCK
    assert finding.to_json()["details"]["after_timeout"] == "stuck"


PROMPT_REJECTED = """Traceback (most recent call last):
  File "/app/.venv/lib/python3.11/site-packages/mcp/server/mcpserver/prompts/base.py", line 190, in render
    validated = self._arguments_model.model_validate(arguments)
pydantic_core._pydantic_core.ValidationError: 1 validation error for summarize_noteArguments
note_id
  Field required [type=missing, input_value={}, input_type=dict]

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/app/.venv/lib/python3.11/site-packages/mcp/server/mcpserver/server.py", line 1369, in get_prompt
    messages = await prompt.render(arguments, context)
  File "/app/.venv/lib/python3.11/site-packages/mcp/server/mcpserver/prompts/base.py", line 213, in render
    raise ValueError(f"Error rendering prompt {self.name}") from exc
ValueError: Error rendering prompt summarize_note
"""
"""What the Python SDK logs for a prompt whose arguments its own validation refused."""


@pytest.mark.parametrize(
    ("tool", "surface", "concurrent", "theirs"),
    [
        # A hung tool call beside the prompt's rejected arguments: the traceback names the prompt.
        ("sync_repository", Surface.TOOL, 2, False),
        ("other_prompt", Surface.PROMPT, 3, False),
        # The prompt's own call, or any call with nothing beside it: judged as before.
        ("summarize_note", Surface.PROMPT, 2, True),
        ("sync_repository", Surface.TOOL, 1, True),
    ],
)
def test_a_traceback_that_names_another_request_beside_is_not_this_calls(
    tool: str, surface: Surface, concurrent: int, theirs: bool
) -> None:
    outcome = CallOutcome(OutcomeStatus.TIMEOUT, 5.0, stderr=PROMPT_REJECTED, concurrent=concurrent)
    ctx = CallContext(tool=tool, arguments={"repo": "a"}, schema_valid=True, outcome=outcome, surface=surface)
    found = [o for o in ORACLES.observe_call(ctx) if o.kind is Kind.INTERNAL_ERROR]
    assert bool(found) is theirs, found


TOOL_FAILED = """Traceback (most recent call last):
  File "/app/server.py", line 80, in split_bill
    return total_cents // people
ZeroDivisionError: integer division or modulo by zero

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/app/.venv/lib/python3.11/site-packages/mcp/server/mcpserver/tools/base.py", line 213, in run
    raise UnexpectedToolError(f"Error executing tool {self.name}") from exc
mcp.server.mcpserver.exceptions.UnexpectedToolError: Error executing tool split_bill
"""
"""What the Python SDK logs for a tool's unhandled exception, which it answers and survives."""


@pytest.mark.parametrize(
    ("tool", "concurrent", "signature"),
    [
        # A slow call in flight when another call crashed the server (exit 3): split_bill's logged
        # traceback in its window is not how the server died. Named by the exit, as the crash's own
        # call names it alone, it is that call's symptom.
        ("analyze_dependencies", 2, ("exit", "exit status 3")),
        # split_bill's own call, or a call with nothing beside it: named by the traceback as before.
        ("split_bill", 2, ("trace", "server.py:split_bill")),
        ("analyze_dependencies", 1, ("trace", "server.py:split_bill")),
    ],
)
def test_a_crash_beside_other_calls_is_not_named_by_another_requests_traceback(
    tool: str, concurrent: int, signature: tuple[str, ...]
) -> None:
    outcome = CallOutcome(OutcomeStatus.CLOSED, 2.0, stderr=TOOL_FAILED, exit_code=3, concurrent=concurrent)
    ctx = CallContext(tool=tool, arguments={"depth": 6}, schema_valid=True, outcome=outcome)
    (crash,) = [o for o in ORACLES.observe_call(ctx) if o.kind is Kind.CRASH]
    assert crash.signature == signature


PROMPT_RAISED = """Traceback (most recent call last):
  File "/app/.venv/lib/python3.11/site-packages/mcp/server/fastmcp/prompts/base.py", line 156, in render
    result = self.fn(**call_args)
  File "/app/src/projects/prompts.py", line 679, in code_review
    project = registry.get(project_name)
  File "/app/src/projects/registry.py", line 40, in get
    raise ProjectError(f"Project '{name}' not found")
projects.errors.ProjectError: Project 'a' not found
"""
"""What a prompt of a server on the Python SDK 1.x logs when it refuses a value by raising."""


def _prompt(outcome: CallOutcome) -> Observation:
    ctx = CallContext("code_review", {"project": "a"}, True, outcome, surface=Surface.PROMPT)
    (observation,) = ORACLES.observe_call(ctx)
    return observation


@pytest.mark.parametrize("stderr", [PROMPT_RAISED, ""])
def test_a_prompt_that_raised_answered_with_its_message_by_the_sdk_1x_is_at_most_low(stderr: str) -> None:
    text = "Error rendering prompt code_review: Project 'a' not found"
    observation = _prompt(CallOutcome(OutcomeStatus.RPC_ERROR, 0.01, text=text, rpc_code=0, stderr=stderr))
    assert observation.kind is Kind.INTERNAL_ERROR and observation.ceiling is CAUGHT_SEVERITY
    assert observation.message.startswith("caught ") and "JSON-RPC error 0 carrying its message" in observation.message


TYPESCRIPT = Sdk(TYPESCRIPT_SDK, "1.32.2")


def _on_typescript(
    surface: Surface, sdk: Sdk | None = TYPESCRIPT, text: str = "Invalid resourceType: . Must be Text or Blob."
) -> Observation:
    # By default what server-everything's resource-prompt answers for a resource type it does not serve.
    outcome = CallOutcome(OutcomeStatus.RPC_ERROR, 0.01, text=text, rpc_code=-32603)
    oracles = Oracles(slow_s=30.0, scanner=SecretScanner([], {}), server=ServerFacts(sdk=sdk))
    ctx = CallContext("resource-prompt", {"resourceType": "", "resourceId": ""}, True, outcome, surface=surface)
    (observation,) = oracles.observe_call(ctx)
    return observation


def test_a_prompt_that_threw_answered_with_its_message_by_the_typescript_sdk_is_at_most_low() -> None:
    observation = _on_typescript(Surface.PROMPT)
    assert observation.kind is Kind.INTERNAL_ERROR and observation.ceiling is CAUGHT_SEVERITY
    assert observation.message.startswith("caught an exception, answered with JSON-RPC error -32603")
    assert "TypeScript SDK answers a prompt that threw" in observation.message
    assert observation.message.endswith("Invalid resourceType: . Must be Text or Blob.")


def test_what_the_javascript_engine_threw_in_a_typescript_prompt_keeps_its_severity() -> None:
    """A prompt's code that fell over is not a prompt refusing a value."""
    for text in (
        "Cannot read properties of undefined (reading 'length')",
        "args.style.toUpperCase is not a function",
        "Unexpected token 'x', \"xyz\" is not valid JSON",
        "Maximum call stack size exceeded",
    ):
        observation = _on_typescript(Surface.PROMPT, text=text)
        assert observation.ceiling is None, text
        assert observation.message.startswith("JSON-RPC internal error -32603"), text


def test_an_internal_error_of_a_typescript_tool_or_of_an_unknown_sdks_prompt_keeps_its_severity() -> None:
    assert _on_typescript(Surface.TOOL).ceiling is None
    unknown = _on_typescript(Surface.PROMPT, sdk=None)
    assert unknown.ceiling is None and unknown.message.startswith("JSON-RPC internal error -32603")
    assert _on_typescript(Surface.PROMPT, sdk=Sdk(PYTHON_SDK, "2.3.0")).ceiling is None


def test_a_prompt_the_sdk_2x_answers_as_an_unexpected_exception_keeps_its_severity() -> None:
    text = "Error rendering prompt code_review"
    observation = _prompt(CallOutcome(OutcomeStatus.RPC_ERROR, 0.01, text=text, rpc_code=-32603, stderr=PROMPT_RAISED))
    assert observation.kind is Kind.INTERNAL_ERROR and observation.ceiling is None
    assert observation.message.startswith("unhandled projects.errors.ProjectError")
    # The 1.x text on a tool's call is no prompt's answer.
    text = "Error rendering prompt code_review: Project 'a' not found"
    outcome = CallOutcome(OutcomeStatus.RPC_ERROR, 0.01, text=text, rpc_code=0, stderr=PROMPT_RAISED)
    (tool,) = ORACLES.observe_call(CallContext("code_review", {"project": "a"}, True, outcome))
    assert tool.ceiling is None
