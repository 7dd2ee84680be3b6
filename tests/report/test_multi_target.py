"""The writers for several targets (`fuzzgate merge`): one SARIF log with a run per target, valid
under the 2.1.0 schema and GitHub's rules and within its limits; one JUnit file with a suite per
target, valid against the XSD; one summary page under GitHub's 1 MiB with a section per target."""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
import xmlschema
from jsonschema import Draft202012Validator
from junitparser import JUnitXml

from fuzzgate.model.errors import ReportError
from fuzzgate.record.results import RunReport, Verdict
from fuzzgate.report.junit import render_junit, render_junit_many
from fuzzgate.report.sarif import MAX_RESULTS, MAX_RUNS, render_sarif, render_sarif_many
from fuzzgate.report.summary import SUMMARY_LIMIT, render_summary_many
from tests.report.report_factory import Sample, clean_report, make_finding, sample_report

XSD = Path(__file__).with_name("junit.xsd")


def named(report: RunReport, name: str) -> RunReport:
    return replace(report, target=replace(report.target, name=name))


@pytest.fixture
def reports(repo: Path, report: RunReport) -> list[RunReport]:
    return [report, named(clean_report(repo), "notes")]


def test_one_sarif_run_per_target_each_its_own_category(
    reports: list[RunReport], repo: Path, sarif_schema: dict[str, object]
) -> None:
    log = json.loads(render_sarif_many(reports, repo))
    Draft202012Validator(sarif_schema).validate(log)
    assert [run["automationDetails"]["id"] for run in log["runs"]] == ["fuzzgate/calc/", "fuzzgate/notes/"]
    # Each run is what the target's own upload would hold.
    single = json.loads(render_sarif(reports[0], repo))["runs"][0]
    assert log["runs"][0] == single
    assert log["runs"][1]["results"] == []


def test_the_multitool_finds_no_github_or_sarif_error_in_several_runs(
    reports: list[RunReport], repo: Path, tmp_path: Path, multitool: Path
) -> None:
    path = tmp_path / "merged.sarif"
    path.write_text(render_sarif_many(reports, repo), encoding="utf-8")
    done = subprocess.run(
        [str(multitool), "validate", str(path), "--rule-kind", "Gh;Sarif"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert "Done. 1 files scanned." in output, output
    assert [line for line in output.splitlines() if re.search(r"\berror\b", line)] == []


def test_github_s_limits_are_refused_not_uploaded(report: RunReport, repo: Path) -> None:
    with pytest.raises(ReportError, match=f"at most {MAX_RUNS} per upload"):
        render_sarif_many([named(report, f"t{i}") for i in range(MAX_RUNS + 1)], repo)
    assert len(json.loads(render_sarif_many([named(report, f"t{i}") for i in range(MAX_RUNS)], repo))["runs"]) == 20
    many = tuple(make_finding(f"fp{i}", name=f"tool{i}") for i in range(MAX_RESULTS + 1))
    with pytest.raises(ReportError, match=f"target calc: {MAX_RESULTS + 1} SARIF results"):
        render_sarif_many([replace(report, findings=many, states={})], repo)
    with pytest.raises(ReportError, match="share the SARIF category fuzzgate/calc/"):
        render_sarif_many([report, report], repo)


def test_one_junit_suite_per_target(reports: list[RunReport], repo: Path, tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    path.write_text(render_junit_many(reports, repo), encoding="utf-8")
    xmlschema.XMLSchema(XSD).validate(str(path))
    suites = list(JUnitXml.fromfile(str(path)))
    assert [suite.name for suite in suites] == ["calc", "notes"]
    assert suites[0].failures == len(reports[0].gating()) and suites[1].failures == 0
    # The single-target file is unchanged: the one suite alone.
    assert render_junit(reports[0], repo) == render_junit_many(reports[:1], repo)


def test_one_summary_page_with_a_section_per_target(reports: list[RunReport], repo: Path) -> None:
    text = render_summary_many(reports, repo, ["calc/report.json", "notes/report.json"])
    assert text.startswith("# ❌ fuzzgate failed: 1 of 2 target(s)")
    assert "| `calc` | ❌ fail |" in text and "| `notes` | ✅ pass |" in text
    assert text.index("## ❌ fuzzgate failed: `calc`") < text.index("## ✅ fuzzgate passed: `notes`")
    passing = render_summary_many([replace(reports[0], verdict=Verdict.PASS), reports[1]], repo)
    assert passing.startswith("# ✅ fuzzgate passed: 2 target(s)")


def test_the_page_of_many_big_targets_stays_under_github_s_limit(repo: Path, sample: Sample) -> None:
    findings = tuple(
        make_finding(f"fp{i:05d}", name=f"tool{i}", message="m" * 500, stderr="e" * 10_000) for i in range(300)
    )
    big = sample_report(repo, sample, findings=findings, states={})
    text = render_summary_many([named(big, f"server-{i}") for i in range(MAX_RUNS)], repo)
    assert len(text.encode("utf-8")) < SUMMARY_LIMIT
    # Every target keeps its section and its verdict; what is cut is each one's findings.
    assert all(f"## ❌ fuzzgate failed: `server-{i}`" in text for i in range(MAX_RUNS))
    assert text.count("**Summary cut:**") == MAX_RUNS
