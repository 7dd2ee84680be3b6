"""Features of a call, and which are new (`fuzzgate.learn.features`)."""

from __future__ import annotations

from fuzzgate.coverage.channel import CallCoverage
from fuzzgate.learn.features import Feedback, Signal, SignalKind, call_features, lines_of
from fuzzgate.model.findings import Surface
from fuzzgate.model.outcome import CallOutcome, OutcomeStatus


def _ok(text: str, stderr: str = "") -> CallOutcome:
    return CallOutcome(OutcomeStatus.OK, 0.01, text=text, payload='{"content": [{"type": "text"}]}', stderr=stderr)


def test_the_same_code_path_with_other_values_is_one_behaviour() -> None:
    a = call_features(Surface.TOOL, "get", _ok("note 12 not found at /tmp/x"), None)
    b = call_features(Surface.TOOL, "get", _ok("note 977 not found at /var/y"), None)
    assert a == b


def test_a_logged_traceback_and_the_tool_tell_behaviours_apart_other_stderr_lines_do_not() -> None:
    quiet = call_features(Surface.TOOL, "get", _ok("done"), None)
    # A log line may be read before or after the reply, depending on load: not part of the key.
    logged = call_features(Surface.TOOL, "get", _ok("done", stderr="cache miss for key 12\n"), None)
    traceback = "Traceback (most recent call last):\n  File \"s.py\", line 3, in get\nKeyError: 'x'\n"
    failed = call_features(Surface.TOOL, "get", _ok("done", stderr=traceback), None)
    other_tool = call_features(Surface.TOOL, "put", _ok("done"), None)
    assert logged == quiet
    assert len({quiet, failed, other_tool}) == 3


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


def test_the_files_a_call_ran_are_named_by_its_line_and_arc_features() -> None:
    from fuzzgate.learn.features import ARC_PREFIX, LINE_PREFIX, files_of

    arcs = {f"{ARC_PREFIX}pkg/a.py:3:4", f"{ARC_PREFIX}pkg/a.py:-1:3"}
    features = frozenset({*arcs, f"{LINE_PREFIX}b.py:7", "behaviour:x"})
    assert files_of(features) == ("b.py", "pkg/a.py")
