"""The JUnit writer: valid against a JUnit XSD, and read by junitparser the way report actions do."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import xmlschema
from junitparser import Attr, Failure, IntAttr, JUnitXml, Skipped, TestCase, TestSuite

from fuzzgate.model.commands import repro_command
from fuzzgate.model.findings import Kind, Severity, Surface
from fuzzgate.record.results import RunReport
from fuzzgate.report.junit import JUNIT_FILENAME, render_junit, write_junit
from tests.report.report_factory import SECRET, Sample, clean_report, make_finding, sample_report

XSD = Path(__file__).with_name("junit.xsd")


@pytest.fixture(scope="module")
def schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(XSD)


def read(report: RunReport, repo: Path, tmp_path: Path) -> TestSuite:
    path = write_junit(report, repo, tmp_path / "out")
    xml = JUnitXml.fromfile(str(path))
    (suite,) = list(xml)
    assert isinstance(suite, TestSuite)
    return suite


class LocatedCase(TestCase):
    """A test case with the `file`/`line` attributes report actions annotate code with."""

    file = Attr()
    line = IntAttr()


def cases(suite: TestSuite) -> dict[str, LocatedCase]:
    return {case.name: LocatedCase.fromelem(case) for case in suite}  # type: ignore[no-untyped-call]


def test_xsd_rejects_what_it_should(schema: xmlschema.XMLSchema) -> None:
    assert not schema.is_valid('<testsuites><testsuite name="x"/></testsuites>')  # no counts
    assert not schema.is_valid(
        '<testsuite name="x" tests="1" failures="0" errors="0"><testcase name="t" classname="c" line="0"/></testsuite>'
    )
    assert schema.is_valid(
        '<testsuite name="x" tests="1" failures="0" errors="0">'
        '<testcase name="t" classname="c" file="a.py" line="3"/></testsuite>'
    )


@pytest.mark.parametrize("variant", ["sample", "clean", "no-config"])
def test_valid_against_the_junit_xsd(schema: xmlschema.XMLSchema, repo: Path, variant: str) -> None:
    report = {
        "sample": sample_report(repo),
        "clean": clean_report(repo),
        "no-config": sample_report(repo, config_path=None),
    }[variant]
    schema.validate(render_junit(report, repo))


def test_one_suite_named_after_the_target_with_a_case_per_entry(report: RunReport, repo: Path, tmp_path: Path) -> None:
    suite = read(report, repo, tmp_path)
    assert suite.name == "calc"
    assert list(cases(suite)) == [
        "divide",
        "echo",
        "lookup",
        "delete_all",
        "upload",
        "resource file:///{path}",
        "prompt summarize",
    ]
    assert {case.classname for case in suite} == {"calc"}
    assert all(case.file and case.line >= 1 for case in cases(suite).values())
    properties = {p.name: p.value for p in suite.properties()}  # type: ignore[no-untyped-call]
    assert properties["seed"] == "123456789"
    assert properties["verdict"] == "fail"


def test_counts_match_the_report(report: RunReport, repo: Path, tmp_path: Path) -> None:
    suite = read(report, repo, tmp_path)
    written = (suite.tests, suite.failures, suite.errors, suite.skipped)
    # One failing case per entry with a gating finding; blocked and skipped entries are skipped.
    failing_subjects = {(f.surface, f.name) for f in report.gating()}
    assert written == (len(report.entries), len(failing_subjects), 0, 2)
    suite.update_statistics()  # type: ignore[no-untyped-call]  # what junitparser counts itself agrees with what was written
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == written


def test_gating_findings_are_failures_with_message_location_and_repro(
    report: RunReport, repo: Path, tmp_path: Path, sample: Sample
) -> None:
    by_name = cases(read(report, repo, tmp_path))
    divide = by_name["divide"]
    (failure,) = [r for r in divide.result if isinstance(r, Failure)]
    assert failure.message == "crash (critical): ZeroDivisionError: division by zero"
    assert failure.type == "crash"
    assert repro_command(sample.crash_in_repo, "fuzzgate.toml") in (failure.text or "")
    assert "ZeroDivisionError" in (failure.text or "")  # the stderr excerpt
    assert (divide.file, divide.line) == ("server.py", 12)

    echo = by_name["echo"]
    (failure,) = [r for r in echo.result if isinstance(r, Failure)]
    assert failure.type == "internal_error"
    assert (echo.file, echo.line) == ("fuzzgate.toml", 3)

    assert [r.type for r in by_name["prompt summarize"].result] == ["protocol_error"]
    assert by_name["lookup"].is_passed


def test_known_flaky_and_below_threshold_findings_are_output_not_failures(
    report: RunReport, repo: Path, tmp_path: Path, sample: Sample
) -> None:
    by_name = cases(read(report, repo, tmp_path))
    echo_out = by_name["echo"].system_out or ""
    assert "[known, in the baseline] schema_violation" in echo_out
    assert repro_command(sample.known, "fuzzgate.toml") in echo_out
    assert "[flaky, reproduced 1 of 3 replays; never fails the run] hang" in echo_out
    divide_out = by_name["divide"].system_out or ""
    assert "[new, below fail-on medium] slow" in divide_out
    assert "flaky" in divide_out  # the known flaky hang
    failures = [r for case in by_name.values() for r in case.result if isinstance(r, Failure)]
    assert {f.type for f in failures} == {"crash", "internal_error", "protocol_error"}


def test_blocked_and_skipped_entries_are_skipped_with_their_reason(
    report: RunReport, repo: Path, tmp_path: Path
) -> None:
    by_name = cases(read(report, repo, tmp_path))
    (blocked,) = by_name["delete_all"].result
    assert isinstance(blocked, Skipped)
    assert blocked.message == "blocked: looks destructive (matches 'delete')"
    (skipped,) = by_name["upload"].result
    assert isinstance(skipped, Skipped) and skipped.message == "skipped: excluded by --exclude upload"


def test_several_gating_findings_on_one_tool_make_one_failure(repo: Path, tmp_path: Path, sample: Sample) -> None:
    hang = make_finding("fp-hang", kind=Kind.HANG, severity=Severity.HIGH, message="no reply", arguments={"b": 9})
    report = sample_report(repo, sample, findings=(hang, sample.crash_in_repo))
    suite = read(report, repo, tmp_path)
    (failure,) = cases(suite)["divide"].result
    assert isinstance(failure, Failure)
    assert failure.message == "crash (critical): ZeroDivisionError: division by zero (+1 more)"
    assert repro_command(hang, "fuzzgate.toml") in (failure.text or "")
    assert repro_command(sample.crash_in_repo, "fuzzgate.toml") in (failure.text or "")
    assert suite.failures == 1


def test_a_finding_on_something_not_listed_still_gets_a_case(repo: Path, tmp_path: Path) -> None:
    finding = make_finding(
        "fp-res",
        kind=Kind.INTERNAL_ERROR,
        severity=Severity.HIGH,
        surface=Surface.RESOURCE,
        name="file:///etc/x",
    )
    report = sample_report(repo, findings=(finding,), states={}, fixed=())
    suite = read(report, repo, tmp_path)
    assert cases(suite)["resource file:///etc/x"].result[0].type == "internal_error"
    assert suite.tests == len(report.entries) + 1


def test_control_characters_and_markup_in_messages_stay_valid_xml(
    schema: xmlschema.XMLSchema, repo: Path, sample: Sample
) -> None:
    nasty = replace(sample.crash_in_repo, message='bad \x00\x1b[31m <tag attr="x"> & ]]> end')
    xml = render_junit(sample_report(repo, sample, findings=(nasty,)), repo)
    schema.validate(xml)
    assert "&lt;tag attr=&quot;x&quot;&gt; &amp; ]]&gt; end" in xml


def test_clean_run_has_no_failures(repo: Path, tmp_path: Path) -> None:
    suite = read(clean_report(repo), repo, tmp_path)
    assert (suite.failures, suite.skipped) == (0, 2)


def test_output_is_deterministic_and_holds_no_environment_secret(
    report: RunReport, repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("API_TOKEN", SECRET)
    text = render_junit(report, repo)
    assert text == render_junit(report, repo)
    assert SECRET not in text
    path = write_junit(report, repo, tmp_path)
    assert path.name == JUNIT_FILENAME and path.read_text(encoding="utf-8") == text
