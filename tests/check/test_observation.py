"""The evidence quoted with an observation: a traceback's paths are the user's files, not the
server's throwaway layer of them (another directory on every start)."""

from __future__ import annotations

from fuzzgate.check.observation import outcome_details, trace_details
from fuzzgate.check.secrets import Redactor
from fuzzgate.check.traceback import parse_traces, root_cause
from fuzzgate.model.outcome import CallOutcome, OutcomeStatus

LAYER = "/var/tmp/fuzzgate-ab12/s3/outside/scope/0-servers"
USER = "/home/me/project/servers"
STDERR = f"""Traceback (most recent call last):
  File "{LAYER}/server.py", line 218, in split_bill
    return total // people
ZeroDivisionError: integer division or modulo by zero
"""


def _outcome() -> CallOutcome:
    return CallOutcome(
        OutcomeStatus.CLOSED,
        0.1,
        error=f"server exited; it was reading {LAYER}/data.json",
        stderr=STDERR,
        sources=((LAYER, USER),),
    )


def test_the_stderr_and_error_quoted_name_the_users_files() -> None:
    details = outcome_details(_outcome(), Redactor([]))
    assert details.stderr is not None and details.error is not None
    assert f'File "{USER}/server.py", line 218' in details.stderr
    assert details.error.endswith(f"{USER}/data.json")
    assert "fuzzgate-ab12" not in details.stderr + details.error


def test_a_traces_frames_location_and_stderr_name_the_users_files() -> None:
    outcome = _outcome()
    details = trace_details(root_cause(parse_traces(outcome.stderr)), outcome, Redactor([]))
    assert details.location == (f"{USER}/server.py", 218)
    assert details.frames and all(USER in frame for frame in details.frames)
    assert details.stderr is not None and "fuzzgate-ab12" not in details.stderr


def test_a_path_outside_every_layer_is_left_as_it_is() -> None:
    outcome = CallOutcome(OutcomeStatus.CLOSED, 0.1, stderr=STDERR, sources=(("/elsewhere", USER),))
    details = outcome_details(outcome, Redactor([]))
    assert details.stderr is not None and f"{LAYER}/server.py" in details.stderr
