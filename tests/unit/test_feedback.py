"""Features of a call, and which are new (`fuzzgate.feedback`)."""

from __future__ import annotations

from fuzzgate.feedback import Feedback, Signal, SignalKind, call_features, lines_of
from fuzzgate.findings import Surface
from fuzzgate.outcome import CallOutcome, OutcomeStatus
from fuzzgate.target.coverage import CallCoverage


def _ok(text: str, stderr: str = "") -> CallOutcome:
    return CallOutcome(OutcomeStatus.OK, 0.01, text=text, payload='{"content": [{"type": "text"}]}', stderr=stderr)


def test_the_same_code_path_with_other_values_is_one_behaviour() -> None:
    a = call_features(Surface.TOOL, "get", _ok("note 12 not found at /tmp/x"), None)
    b = call_features(Surface.TOOL, "get", _ok("note 977 not found at /var/y"), None)
    assert a == b


def test_stderr_templates_and_tools_tell_behaviours_apart() -> None:
    quiet = call_features(Surface.TOOL, "get", _ok("done"), None)
    logged = call_features(Surface.TOOL, "get", _ok("done", stderr="cache miss for key 12\n"), None)
    other_tool = call_features(Surface.TOOL, "put", _ok("done"), None)
    assert len({quiet, logged, other_tool}) == 3


def test_new_arcs_count_once_and_lines_come_from_arcs() -> None:
    feedback = Feedback(Signal(SignalKind.COVERAGE, "coverage: test"))
    first = feedback.observe(Surface.TOOL, "t", _ok("x"), CallCoverage(frozenset({"s.py:-1:3", "s.py:3:4"})))
    again = feedback.observe(Surface.TOOL, "t", _ok("x"), CallCoverage(frozenset({"s.py:3:4"})))
    more = feedback.observe(Surface.TOOL, "t", _ok("x"), CallCoverage(frozenset({"s.py:3:4", "s.py:4:9"})))
    assert len(first.new) == 3  # one behaviour, two arcs
    assert again.new == frozenset()
    assert more.new == {"a:s.py:4:9"}
    assert (feedback.behaviours, feedback.arcs, feedback.lines) == (1, 3, 3)
    assert lines_of({"a:s.py:4:9", "a:s.py:-1:3"}) == {"s.py:4", "s.py:9", "s.py:3"}


def test_an_echo_of_the_request_is_one_behaviour_whatever_it_echoes() -> None:
    one = call_features(Surface.TOOL, "echo", _ok("you said: blue whale"), None, {"text": "blue whale"})
    two = call_features(Surface.TOOL, "echo", _ok("you said: quiet river"), None, {"text": "quiet river"})
    other = call_features(Surface.TOOL, "echo", _ok("you said: nothing at all"), None, {"text": "quiet river"})
    assert one == two
    assert other != two
