"""The notes verification's labels leave in the report (`engine.labels.label`): each counts what the
report holds, and what it leaves out is said in a note of its own."""

from __future__ import annotations

from fuzzgate.config.model import TargetConfig, TargetKind
from fuzzgate.engine.labels import Tally, label
from fuzzgate.model.findings import Kind, Severity
from tests.report.report_factory import make_finding

TARGET = TargetConfig(kind=TargetKind.STDIO, command="server")


def _labelled(*tallies: Tally) -> tuple[list[str], list[str]]:
    verification = label(
        [(t.finding, t.ambiguous) for t in tallies],
        {t.finding.fingerprint: t for t in tallies},
        [],
        replays=3,
        target=TARGET,
    )
    return [f.fingerprint for f in verification.findings], list(verification.notes)


def test_a_finding_dropped_after_too_few_replays_is_not_counted_among_those_the_report_holds() -> None:
    # Seen only beside other calls, and its one replay alone did not fail: dropped. The note used to
    # say "1 finding(s) got fewer than 3 replays within the budget" of a report that held none.
    noise = Tally(make_finding("a" * 20, kind=Kind.INTERNAL_ERROR, severity=Severity.HIGH), True, attempts=1)
    findings, notes = _labelled(noise)
    assert findings == []
    assert notes == [
        "1 finding(s) seen only beside other calls failed on no replay alone: not reported"
        " (most likely another call's symptom)"
    ]


def test_a_reported_finding_with_too_few_replays_is_said_so_beside_a_dropped_one() -> None:
    noise = Tally(make_finding("a" * 20, kind=Kind.INTERNAL_ERROR, severity=Severity.HIGH), True, attempts=2)
    short = Tally(make_finding("b" * 20, kind=Kind.CRASH, severity=Severity.HIGH), False, attempts=2, reproduced=2)
    whole = Tally(make_finding("c" * 20, kind=Kind.CRASH, severity=Severity.HIGH), True, attempts=3, reproduced=3)
    findings, notes = _labelled(noise, short, whole)
    assert findings == ["b" * 20, "c" * 20]
    assert "1 finding(s) got fewer than 3 replays within the budget" in notes
    assert any(note.startswith("1 finding(s) seen only beside other calls failed on no replay alone") for note in notes)
