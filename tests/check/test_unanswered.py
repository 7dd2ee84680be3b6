"""A request the server never answered: what the follow-up ping showed decides the kind. A lone
surrogate the server's transport choked on is one server-wide protocol error; anything else that
timed out is a hang, or a crash when the server died on the ping."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from fuzzgate.check import CallContext, Observation, Oracles
from fuzzgate.check.secrets import Redactor, SecretScanner
from fuzzgate.model.findings import DEFAULT_SEVERITY, SERVER_NAME, Kind, Repro, Surface
from fuzzgate.model.outcome import AfterTimeout, CallOutcome, OutcomeStatus
from fuzzgate.triage.finding_set import FindingSet, fingerprint
from tests.check.test_traceback import PLAIN

ORACLES = Oracles(slow_s=10.0, scanner=SecretScanner([], {}))
SURROGATE = {"text": "abc\ud800def"}


def _timeout(after: AfterTimeout | None, stderr: str = "", exit_code: int | None = None) -> CallOutcome:
    return CallOutcome(
        OutcomeStatus.TIMEOUT, 1.0, error="no reply", stderr=stderr, exit_code=exit_code, after_timeout=after
    )


def _observe(arguments: dict[str, Any], outcome: CallOutcome, tool: str = "echo") -> list[Observation]:
    return ORACLES.observe_call(CallContext(tool, arguments, True, outcome))


@pytest.mark.parametrize(
    ("after", "label", "words"),
    [
        (AfterTimeout.ALIVE, "unanswered", "went on answering others"),
        (AfterTimeout.DIED, "unanswered-then-died", "died on the next request"),
        (AfterTimeout.STUCK, "unanswered-then-stuck", "stopped answering altogether"),
    ],
)
def test_an_unanswered_lone_surrogate_is_one_server_wide_finding(after: AfterTimeout, label: str, words: str) -> None:
    died = after is AfterTimeout.DIED
    outcome = _timeout(after, PLAIN if died else "", 1 if died else None)
    # Dying on the next request is a crash the request caused; dropping or stalling on it, a protocol error.
    kind = Kind.CRASH if died else Kind.PROTOCOL_ERROR
    # Anywhere in the arguments: nested in a list, or in a key.
    for arguments in (SURROGATE, {"items": [{"x": "\udfff"}]}, {"\udc80": 1}):
        (obs,) = _observe(arguments, outcome)
        assert (obs.kind, obs.signature, obs.server_wide) == (kind, (label, "lone-surrogate"), True)
        assert words in obs.message
    if died:
        assert "exit status 1 after ZeroDivisionError" in obs.message
        assert obs.details.location == ("/repo/server.py", 10)


def test_an_unanswered_lone_surrogate_among_concurrent_calls_is_ambiguous() -> None:
    (obs,) = _observe(SURROGATE, replace(_timeout(AfterTimeout.ALIVE), concurrent=3))
    assert obs.ambiguous


def test_a_lone_surrogate_timeout_without_a_ping_is_nothing() -> None:
    assert _observe(SURROGATE, _timeout(None)) == []


def test_a_silent_death_without_a_surrogate_is_a_crash_named_by_the_trace_or_the_exit() -> None:
    (obs,) = _observe({"text": "plain"}, _timeout(AfterTimeout.DIED, PLAIN, 1))
    assert (obs.kind, obs.signature, obs.server_wide) == (Kind.CRASH, ("trace", "server.py:split_bill"), False)
    assert "never answered, then died on the next request" in obs.message
    (obs,) = _observe({"text": "plain"}, _timeout(AfterTimeout.DIED, exit_code=-9))
    assert (obs.kind, obs.signature) == (Kind.CRASH, ("exit", "killed by SIGKILL"))


def test_the_same_death_during_the_call_has_the_same_signature() -> None:
    silent = _observe({}, _timeout(AfterTimeout.DIED, PLAIN, 1))
    during = _observe({}, CallOutcome(OutcomeStatus.CLOSED, 0.1, stderr=PLAIN, exit_code=1))
    assert [o.signature for o in silent] == [o.signature for o in during]


@pytest.mark.parametrize("status", [OutcomeStatus.OK, OutcomeStatus.TOOL_ERROR, OutcomeStatus.RPC_ERROR])
def test_a_death_right_after_the_reply_is_a_crash_with_the_signature_of_one_during_the_call(
    status: OutcomeStatus,
) -> None:
    """A replay watches for it (`call.follow_reply`): which side of the reply the death falls on is
    a race, so both give the same fingerprint; the traceback is the crash's, not an internal error's."""
    for stderr, exit_code in ((PLAIN, 1), ("", -15)):
        during = _observe({}, CallOutcome(OutcomeStatus.CLOSED, 0.1, stderr=stderr, exit_code=exit_code))
        after = CallOutcome(status, 0.1, text="reloaded", stderr=stderr, exit_code=exit_code, died_after_reply=True)
        (obs,) = _observe({}, after)
        assert obs.kind is Kind.CRASH and [obs.signature] == [o.signature for o in during]
    assert obs.message == "the server died right after answering the call (killed by SIGTERM)"
    (obs,) = _observe({}, replace(after, stderr=PLAIN, exit_code=1))
    assert obs.message.startswith("the server answered, then died before the next request (exit status 1) after ")
    # Without the death it is an answer like any other.
    assert _observe({}, replace(after, died_after_reply=False, stderr="", exit_code=None)) == []


@pytest.mark.parametrize("after", [AfterTimeout.ALIVE, AfterTimeout.STUCK, None])
def test_a_timeout_the_server_survived_is_a_hang_only(after: AfterTimeout | None) -> None:
    (obs,) = _observe({"text": "plain"}, _timeout(after))
    assert obs.kind is Kind.HANG and obs.signature == () and not obs.server_wide
    assert ("went on answering others" in obs.message) == (after is AfterTimeout.ALIVE)


def test_two_tools_give_one_server_finding_that_remembers_the_tool_called() -> None:
    found = FindingSet(DEFAULT_SEVERITY, Redactor([]))
    outcome = _timeout(AfterTimeout.ALIVE)
    first = None
    for tool, case in (("echo", 3), ("reverse", 5)):
        (obs,) = _observe(SURROGATE, outcome, tool)
        finding = found.add(obs, tool, Repro(seed=1, case_index=case, arguments=SURROGATE, transport="stdio"))
        first = first or finding
    assert first is not None
    assert (first.surface, first.name, first.repro.tool, first.tool) == (Surface.SERVER, SERVER_NAME, "echo", "echo")
    ((finding, ambiguous),) = found.items()
    assert finding.fingerprint == first.fingerprint
    assert finding.fingerprint == fingerprint(
        Kind.PROTOCOL_ERROR, Surface.SERVER, SERVER_NAME, ("unanswered", "lone-surrogate")
    )
    assert finding.count == 2 and not ambiguous
    # Equal repros: the first one stays, with the tool it was sent to.
    assert finding.repro.tool == "echo" and finding.repro.case_index == 3


def test_a_tool_finding_keeps_no_repro_tool() -> None:
    found = FindingSet(DEFAULT_SEVERITY, Redactor([]))
    (obs,) = _observe({"text": "plain"}, _timeout(AfterTimeout.ALIVE))
    finding = found.add(obs, "echo", Repro(seed=1, case_index=0, arguments={}, transport="stdio"))
    assert (finding.surface, finding.name, finding.repro.tool, finding.tool) == (Surface.TOOL, "echo", None, "echo")
