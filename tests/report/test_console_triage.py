"""The console's line for each finding verification labelled: confirmed, flaky, unconfirmed,
dropped as another call's symptom, or left out of the report (`engine.labels`)."""

from __future__ import annotations

from dataclasses import replace
from io import StringIO

from rich.console import Console

from fuzzgate.engine.events import FindingTriaged
from fuzzgate.model.findings import Kind, Severity
from fuzzgate.report.console import ConsoleReporter
from tests.report.report_factory import make_finding


def _line(dropped: bool, **changes: object) -> str:
    out = StringIO()
    finding = replace(make_finding("a" * 20, kind=Kind.SLOW, severity=Severity.LOW), **changes)
    ConsoleReporter(Console(file=out, width=300, highlight=False))(FindingTriaged(finding, dropped))
    return out.getvalue().strip()


def test_each_label_says_what_became_of_the_finding() -> None:
    assert _line(False).startswith("confirmed: slow in divide (3/3 replays)")
    assert _line(False, flaky=True, reproduced=1).startswith("flaky: slow in divide")
    assert _line(False, unconfirmed=True, replays=0, reproduced=0).startswith("unconfirmed (no replay finished")
    assert _line(True, reproduced=0).startswith("dropped (another call's symptom): slow in divide (0/3 replays)")
    left_out = _line(True, unconfirmed=True, replays=0, reproduced=0)
    assert left_out.startswith("not reported (below fail-on, never replayed, only seen beside other calls")
    assert left_out.endswith("slow in divide (0/0 replays)")


def test_a_finding_explained_by_another_calls_names_that_call() -> None:
    out = StringIO()
    finding = make_finding("a" * 20, kind=Kind.PROTOCOL_ERROR, severity=Severity.HIGH)
    finding = replace(finding, name="wait", unconfirmed=True, replays=0, reproduced=0)
    other = replace(make_finding("b" * 20, kind=Kind.PROTOCOL_ERROR, severity=Severity.HIGH), name="[bold]tail")
    ConsoleReporter(Console(file=out, width=300, highlight=False))(FindingTriaged(finding, True, other))
    line = out.getvalue().strip()
    assert line == (
        "not reported (another call's symptom: the same evidence as protocol_error in [bold]tail): "
        "protocol_error in wait (0/0 replays)"
    )
