"""The SARIF writer: valid against the 2.1.0 schema and GitHub's ingestion rules, one result per
reportable finding, every result with a location in the repository."""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from fuzzgate.model.commands import repro_command
from fuzzgate.model.findings import DEFAULT_SEVERITY, Kind, Severity
from fuzzgate.record.results import RunReport, TargetSummary
from fuzzgate.report.locate import FALLBACK_PATH, SourceLocation, source_location
from fuzzgate.report.sarif import SARIF_FILENAME, render_sarif, write_sarif
from tests.report.report_factory import SECRET, Sample, clean_report, make_finding, sample_report


def sarif(report: RunReport, repo: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(render_sarif(report, repo))
    return data


def results_by_fingerprint(log: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["partialFingerprints"]["primaryLocationLineHash"]: r for r in log["runs"][0]["results"]}


# --- GitHub code scanning's rules, asserted directly ------------------------------------------------


def assert_github_rules(log: dict[str, Any]) -> None:
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    for rule in rules:
        assert rule["id"]
        assert 0 < len(rule["shortDescription"]["text"]) <= 1024
        assert 0 < len(rule["fullDescription"]["text"]) <= 1024
        assert rule["help"]["text"] and rule["help"]["markdown"]
        assert 0.1 <= float(rule["properties"]["security-severity"]) <= 10.0
        assert isinstance(rule["properties"]["security-severity"], str)
        assert rule["properties"]["precision"] in {"very-high", "high", "medium", "low"}
        assert "security" in rule["properties"]["tags"]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result.get("level", "warning") in {"error", "warning", "note"}
        assert result["message"]["text"]
        assert 1 <= len(result["locations"]) <= 1000
        physical = result["locations"][0]["physicalLocation"]
        uri = physical["artifactLocation"]["uri"]
        assert uri and not uri.startswith(("/", "file:", "..")) and " " not in uri
        assert "uriBaseId" not in physical["artifactLocation"]
        assert physical["region"]["startLine"] >= 1
        assert result["partialFingerprints"]["primaryLocationLineHash"]


def test_sample_meets_github_rules(report: RunReport, repo: Path) -> None:
    assert_github_rules(sarif(report, repo))


def test_clean_run_meets_github_rules(repo: Path) -> None:
    log = sarif(clean_report(repo), repo)
    assert_github_rules(log)
    assert log["runs"][0]["results"] == []


def test_driver_and_category(report: RunReport, repo: Path) -> None:
    (run,) = sarif(report, repo)["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "fuzzgate"
    assert driver["version"] == "0.1.0"
    assert driver["informationUri"].startswith("https://")
    assert run["automationDetails"]["id"] == "fuzzgate/calc/"


def test_a_rule_for_every_kind_with_its_default_severity(repo: Path) -> None:
    rules = sarif(clean_report(repo), repo)["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [k.value for k in Kind]
    expected = {Severity.CRITICAL: "9.5", Severity.HIGH: "8.0", Severity.MEDIUM: "5.5", Severity.LOW: "3.0"}
    for rule in rules:
        kind = Kind(rule["id"])
        assert rule["properties"]["security-severity"] == expected[DEFAULT_SEVERITY[kind]]
        assert "fuzzgate replay" in rule["help"]["text"]
        assert {"mcp", "fuzzing"} <= set(rule["properties"]["tags"])


# --- which findings, and how ----------------------------------------------------------------------


def test_results_are_new_and_known_findings_only(report: RunReport, repo: Path, sample: Sample) -> None:
    results = results_by_fingerprint(sarif(report, repo))
    assert set(results) == {
        sample.crash_in_repo.fingerprint,
        sample.internal_outside.fingerprint,
        sample.slow_new.fingerprint,
        sample.prompt_new.fingerprint,
        sample.known.fingerprint,
        sample.known_flaky.fingerprint,
    }
    # Fixed entries are absent (so code scanning closes their alerts), and so are new flaky ones.
    assert sample.fixed.fingerprint not in results
    assert sample.flaky_new.fingerprint not in results
    assert {fp: r["baselineState"] for fp, r in results.items()} == {
        "fp-crash": "new",
        "fp-internal": "new",
        "fp-slow": "new",
        "fp-prompt": "new",
        "fp-known": "unchanged",
        "fp-known-flaky": "unchanged",
    }


def test_level_follows_the_findings_own_severity(report: RunReport, repo: Path) -> None:
    results = results_by_fingerprint(sarif(report, repo))
    levels = {fp: r.get("level", "warning") for fp, r in results.items()}
    assert levels == {
        "fp-crash": "error",  # critical
        "fp-internal": "error",  # high
        "fp-prompt": "error",  # high
        "fp-known": "warning",  # medium
        "fp-slow": "note",  # low
        "fp-known-flaky": "note",  # high, but flaky
    }
    assert results["fp-crash"]["properties"]["security-severity"] == "9.5"
    assert results["fp-slow"]["properties"]["security-severity"] == "3.0"


def test_a_severity_overridden_by_config_shows_on_the_result(repo: Path, sample: Sample) -> None:
    slow_but_high = replace(sample.slow_new, severity=Severity.HIGH)
    report = sample_report(repo, sample, findings=(slow_but_high,))
    (result,) = sarif(report, repo)["runs"][0]["results"]
    assert result["level"] == "error"
    assert result["properties"]["severity"] == "high"
    assert result["properties"]["security-severity"] == "8.0"


def test_known_flaky_result_is_tagged(report: RunReport, repo: Path) -> None:
    result = results_by_fingerprint(sarif(report, repo))["fp-known-flaky"]
    assert result["properties"]["flaky"] is True
    assert result["properties"]["tags"] == ["flaky"]


def test_result_carries_repro_fingerprint_and_evidence_counts(report: RunReport, repo: Path, sample: Sample) -> None:
    result = results_by_fingerprint(sarif(report, repo))["fp-crash"]
    command = repro_command(sample.crash_in_repo, "fuzzgate.toml")
    assert command in result["message"]["text"]
    assert "divide" in result["message"]["text"] and "ZeroDivisionError" in result["message"]["text"]
    assert result["ruleId"] == "crash"
    assert result["properties"]["repro"] == command
    assert result["properties"]["fingerprint"] == "fp-crash"
    assert result["properties"]["surface"] == "tool"
    assert result["properties"]["count"] == 3
    assert result["properties"]["flaky"] is False


def test_locations(report: RunReport, repo: Path) -> None:
    results = results_by_fingerprint(sarif(report, repo))

    def where(fp: str) -> tuple[str, int]:
        physical = results[fp]["locations"][0]["physicalLocation"]
        return physical["artifactLocation"]["uri"], physical["region"]["startLine"]

    assert where("fp-crash") == ("server.py", 12)  # the traceback's file, inside the repository
    assert where("fp-internal") == ("fuzzgate.toml", 3)  # traceback outside: the target's config line
    assert where("fp-prompt") == ("fuzzgate.toml", 3)  # no traceback


# --- source_location, the one place that picks locations ------------------------------------------


def test_location_prefers_the_traceback_inside_the_repository(repo: Path) -> None:
    report = sample_report(repo)
    (repo / "pkg").mkdir()
    relative = make_finding("x", location=("pkg/tools.py", 7))
    assert source_location(relative, report, repo) == SourceLocation("pkg/tools.py", 7)
    absolute = make_finding("x", location=(str(repo / "pkg" / "tools.py"), 9))
    assert source_location(absolute, report, repo) == SourceLocation("pkg/tools.py", 9)


@pytest.mark.parametrize(
    "path",
    [
        "/usr/lib/python3.11/json/decoder.py",
        "../outside.py",
        ".venv/lib/python3.11/site-packages/pydantic/main.py",
        "node_modules/zod/index.js",
        ".",
    ],
)
def test_location_outside_repository_code_falls_back_to_the_config(repo: Path, path: str) -> None:
    finding = make_finding("x", location=(path, 5))
    assert source_location(finding, sample_report(repo), repo) == SourceLocation("fuzzgate.toml", 3)


def test_location_line_is_at_least_one(repo: Path) -> None:
    finding = make_finding("x", location=("server.py", 0))
    assert source_location(finding, sample_report(repo), repo).line == 1
    assert source_location(None, sample_report(repo, target_line=0), repo).line == 1


def test_absolute_config_path_is_made_relative(repo: Path) -> None:
    (repo / "ci").mkdir()
    report = sample_report(repo, config_path=str(repo / "ci" / "fuzzgate.yaml"), target_line=4)
    assert source_location(None, report, repo) == SourceLocation("ci/fuzzgate.yaml", 4)


def test_without_a_config_file_the_server_script_is_used(repo: Path) -> None:
    report = sample_report(repo, config_path=None)
    assert source_location(None, report, repo) == SourceLocation("server.py", 1)


def test_without_config_or_script_the_fallback_path_is_used(repo: Path) -> None:
    report = sample_report(
        repo,
        config_path=None,
        target=TargetSummary(name="remote", kind="http", url="http://localhost:8000/mcp"),
    )
    assert source_location(None, report, repo) == SourceLocation(FALLBACK_PATH, 1)
    log = sarif(report, repo)
    assert_github_rules(log)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert uris == {"server.py", FALLBACK_PATH}  # the crash still points at its traceback


def test_paths_are_percent_encoded_uris(repo: Path, sample: Sample) -> None:
    (repo / "my tools").mkdir()
    finding = make_finding("x", location=("my tools/ü#1.py", 2))
    (result,) = sarif(sample_report(repo, sample, findings=(finding,)), repo)["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "my%20tools/%C3%BC%231.py"


# --- output as a whole ----------------------------------------------------------------------------


def test_output_is_deterministic_and_holds_no_environment_secret(
    report: RunReport, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("API_TOKEN", SECRET)
    text = render_sarif(report, repo)
    assert text == render_sarif(report, repo)
    assert SECRET not in text
    assert str(repo) not in text  # no absolute paths of the machine that ran it


def test_write_sarif_writes_the_rendered_text(report: RunReport, repo: Path, tmp_path: Path) -> None:
    path = write_sarif(report, repo, tmp_path / "out")
    assert path == tmp_path / "out" / SARIF_FILENAME
    assert path.read_text(encoding="utf-8") == render_sarif(report, repo)


# --- the real validators --------------------------------------------------------------------------


def _schema_errors(schema: dict[str, Any], log: dict[str, Any]) -> list[str]:
    validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(log)]


def test_schema_validator_checks_uri_formats(sarif_schema: dict[str, Any]) -> None:
    # Code scanning rejects URIs that are not uri-references; make sure the check is really on
    # (jsonschema needs rfc3986-validator for it).
    assert "uri-reference" in Draft202012Validator.FORMAT_CHECKER.checkers
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x", "informationUri": "not a uri"}}}]}
    assert _schema_errors(sarif_schema, bad)


@pytest.mark.parametrize("variant", ["sample", "clean", "no-config"])
def test_valid_against_the_sarif_schema(sarif_schema: dict[str, Any], repo: Path, variant: str) -> None:
    report = {
        "sample": sample_report(repo),
        "clean": clean_report(repo),
        "no-config": sample_report(repo, config_path=None),
    }[variant]
    assert _schema_errors(sarif_schema, sarif(report, repo)) == []


def _multitool_errors(multitool: Path, path: Path) -> list[str]:
    # Its exit code is 0 even when it reports errors, so read what it prints.
    done = subprocess.run(
        [str(multitool), "validate", str(path), "--rule-kind", "Gh;Sarif"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    output = done.stdout + done.stderr
    assert "Done. 1 files scanned." in output, output
    return [line for line in output.splitlines() if re.search(r"\berror\b", line)]


@pytest.mark.parametrize("variant", ["sample", "no-config"])
def test_multitool_finds_no_github_or_sarif_errors(multitool: Path, repo: Path, tmp_path: Path, variant: str) -> None:
    report = sample_report(repo) if variant == "sample" else sample_report(repo, config_path=None)
    path = write_sarif(report, repo, tmp_path / "out")
    assert _multitool_errors(multitool, path) == []


def test_multitool_really_checks_github_rules(multitool: Path, report: RunReport, repo: Path, tmp_path: Path) -> None:
    # A control: the same log with one location and one rule's help removed must be rejected, or
    # the test above proves nothing.
    log = sarif(report, repo)
    del log["runs"][0]["results"][0]["locations"]
    del log["runs"][0]["tool"]["driver"]["rules"][1]["help"]
    path = tmp_path / "broken.sarif"
    path.write_text(json.dumps(log), encoding="utf-8")
    errors = "\n".join(_multitool_errors(multitool, path))
    assert "GH1015" in errors or "GH2012" in errors
    assert "help" in errors
