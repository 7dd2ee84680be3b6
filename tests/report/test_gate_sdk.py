"""Findings the server's SDK causes fail no gate unless `fail_on_sdk` says so; the flag and the
cause survive `report.json`."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from fuzzgate.model.findings import Cause, Kind, Severity, Surface
from fuzzgate.record.results import RunReport, Verdict
from fuzzgate.report.junit import render_junit
from fuzzgate.report.summary import render_summary
from tests.report.report_factory import clean_report, make_finding


def _report(tmp_path: Path, *, fail_on_sdk: bool) -> RunReport:
    sdk = replace(
        make_finding("5dcafe", kind=Kind.PROTOCOL_ERROR, severity=Severity.LOW, surface=Surface.SERVER),
        cause=Cause.SDK,
    )
    return replace(clean_report(tmp_path), findings=(sdk,), fail_on=Severity.LOW, fail_on_sdk=fail_on_sdk)


def test_an_sdk_finding_gates_only_with_fail_on_sdk(tmp_path: Path) -> None:
    quiet = _report(tmp_path, fail_on_sdk=False)
    assert quiet.gating() == [] and quiet.decide() is Verdict.PASS
    asked = _report(tmp_path, fail_on_sdk=True)
    assert len(asked.gating()) == 1 and asked.decide() is Verdict.FAIL
    # Asked for, it gates whatever `fail_on` is: an SDK finding is always low.
    assert len(replace(asked, fail_on=Severity.CRITICAL).gating()) == 1
    # The server's own low finding still follows `fail_on`.
    own = replace(quiet, findings=(replace(quiet.findings[0], cause=Cause.SERVER),))
    assert len(own.gating()) == 1 and replace(own, fail_on=Severity.MEDIUM).gating() == []


def test_the_cause_and_the_flag_survive_report_json(tmp_path: Path) -> None:
    report = _report(tmp_path, fail_on_sdk=True)
    again = RunReport.from_json(report.to_json())
    assert again.fail_on_sdk is True and again.findings[0].cause is Cause.SDK
    # A report written before either existed: the server's, and no SDK gate.
    data = report.to_json()
    del data["fail_on_sdk"]
    for finding in data["findings"]:
        del finding["cause"]
    old = RunReport.from_json(data)
    assert old.fail_on_sdk is False and old.findings[0].cause is Cause.SERVER


def test_the_summary_and_junit_say_why_an_sdk_finding_fails_no_gate(tmp_path: Path) -> None:
    report = _report(tmp_path, fail_on_sdk=False)
    why = "caused by the server&apos;s SDK", "caused by the server's SDK"
    assert why[1] in render_summary(report, tmp_path)
    assert any(w in render_junit(report, tmp_path) for w in why)
    asked = _report(tmp_path, fail_on_sdk=True)
    assert why[1] not in render_summary(asked, tmp_path)
    assert not any(w in render_junit(asked, tmp_path) for w in why)
