"""The entrypoint run as GitHub runs the Docker action: its own process, a job's environment, the
inputs as `INPUT_*` variables, and the example server with planted bugs as the target."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from action_harness import BUGGY_SERVER, clean_env, input_env, parse_github_output, run_action

from fuzzgate.cli import action
from fuzzgate.model.findings import Severity
from fuzzgate.record.results import RunReport, TargetSummary, Verdict
from fuzzgate.report import json_report

pytestmark = pytest.mark.e2e

HEAD_SHA = "3f786850e387550fdab836ed7e6dc881de23001b"
"""The pull request's head commit: the seed comes from it."""
MERGE_SHA = "9b1c0f5a27d3e8c4b6a5f0e1d2c3b4a596877869"
"""`$GITHUB_SHA` on a pull_request event: the merge commit, which must not decide the seed."""
SUMMARY_BEFORE = "## An earlier step's summary\n"
PATH_OUTPUTS = ("sarif", "junit", "report", "summary")


@dataclass(frozen=True, slots=True)
class Job:
    """A job's files and environment, with the repository checked out at `workspace`."""

    workspace: Path
    output_file: Path
    summary_file: Path
    env: dict[str, str]

    def outputs(self) -> dict[str, str]:
        if not self.output_file.exists():
            return {}
        return parse_github_output(self.output_file.read_text(encoding="utf-8"))


def _job(tmp_path: Path, inputs: dict[str, str], server_command: str = sys.executable) -> Job:
    workspace = tmp_path / "workspace"
    server_dir = workspace / "server"
    server_dir.mkdir(parents=True)
    config = [
        "[target]",
        'kind = "stdio"',
        f"command = {json.dumps(server_command)}",
        f"args = [{json.dumps(str(BUGGY_SERVER))}]",
    ]
    (server_dir / "fuzzgate.toml").write_text("\n".join(config) + "\n", encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    event = tmp_path / "event.json"
    event.write_text(
        json.dumps(
            {
                "action": "synchronize",
                "number": 7,
                "pull_request": {"number": 7, "head": {"sha": HEAD_SHA, "ref": "fix-parser"}},
            }
        ),
        encoding="utf-8",
    )
    output_file = tmp_path / "github_output"
    output_file.touch()
    summary_file = tmp_path / "step_summary.md"
    summary_file.write_text(SUMMARY_BEFORE, encoding="utf-8")
    markers = tmp_path / "markers"
    markers.mkdir()
    env = clean_env(
        home,
        CI="true",
        GITHUB_ACTIONS="true",
        GITHUB_WORKSPACE=str(workspace),
        GITHUB_OUTPUT=str(output_file),
        GITHUB_STEP_SUMMARY=str(summary_file),
        GITHUB_EVENT_NAME="pull_request",
        GITHUB_EVENT_PATH=str(event),
        GITHUB_SHA=MERGE_SHA,
        GITHUB_REF="refs/pull/7/merge",
        GITHUB_REPOSITORY="your-org/your-server",
        FUZZGATE_EXAMPLE_MARKER_DIR=str(markers),
        **input_env({"config": "fuzzgate.toml", "working-directory": "server", **inputs}),
    )
    return Job(workspace, output_file, summary_file, env)


def test_new_findings_fail_the_step_with_outputs_summary_and_annotations(tmp_path: Path) -> None:
    job = _job(
        tmp_path,
        # One buggy and one clean tool keep the run short and its finding certain; replays 1 keeps triage short.
        {"budget": "60s", "fail-on": "medium", "args": "--include split_bill --include echo --replays 1 --cases 30"},
    )
    result = run_action(job.env, cwd=job.workspace)
    log = result.stdout + result.stderr
    assert result.returncode == 1, log

    outputs = job.outputs()
    assert list(outputs) == list(action.OUTPUT_NAMES), log
    assert outputs["verdict"] == "fail"
    assert int(outputs["new"]) > 0
    assert outputs["known"] == "0" and outputs["fixed"] == "0"
    assert outputs["seed"] == str(int(HEAD_SHA[:16], 16))  # the PR head decides it, not $GITHUB_SHA
    for name, file_name in zip(PATH_OUTPUTS, ("fuzzgate.sarif", "junit.xml", "report.json", "summary.md"), strict=True):
        assert outputs[name] == f"server/.fuzzgate/out/{file_name}"
        assert (job.workspace / outputs[name]).is_file(), name

    report = json_report.read(job.workspace / outputs["report"])
    assert report.verdict is Verdict.FAIL
    assert str(report.seed) == outputs["seed"]
    new = sum(1 for f in report.findings if report.state_of(f).value == "new")
    assert int(outputs["new"]) == new

    summary = job.summary_file.read_text(encoding="utf-8")
    assert summary.startswith(SUMMARY_BEFORE), "the step summary must be appended to, not replaced"
    assert "fuzzgate failed" in summary[len(SUMMARY_BEFORE) :]
    assert summary.count("fuzzgate failed") == 1, "the summary is written once, by `fuzzgate run`"

    annotations = [line for line in result.stdout.splitlines() if line.startswith("::error ")]
    assert len(annotations) == len(report.gating()) > 0, "one annotation per gating finding"
    assert all("file=" in line and "line=" in line for line in annotations)


def test_findings_accepted_into_the_baseline_are_known_and_pass(tmp_path: Path) -> None:
    # A fixed number of cases per tool (the budget is only a ceiling) makes the second run send
    # the same requests as the first, so it finds the same bugs. Two buggy tools and a clean one
    # are enough here, and keep the server restarts few.
    args = "--include split_bill --include get_stock_level --include echo --replays 1 --cases 5"
    job = _job(tmp_path, {"budget": "60s", "args": args})
    first = run_action(job.env, cwd=job.workspace)
    assert first.returncode == 1, first.stdout + first.stderr
    assert int(job.outputs()["new"]) > 0

    accept = subprocess.run(
        [sys.executable, "-m", "fuzzgate", "baseline", "accept", "--config", "fuzzgate.toml"],
        cwd=job.workspace / "server",
        env=job.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert accept.returncode == 0, accept.stdout + accept.stderr
    job.output_file.write_text("", encoding="utf-8")
    job.summary_file.write_text(SUMMARY_BEFORE, encoding="utf-8")

    second = run_action(job.env, cwd=job.workspace)
    log = second.stdout + second.stderr
    assert second.returncode == 0, log
    outputs = job.outputs()
    assert outputs["verdict"] == "pass"
    assert int(outputs["known"]) > 0
    report = json_report.read(job.workspace / outputs["report"])
    assert report.gating() == []
    assert "fuzzgate passed" in job.summary_file.read_text(encoding="utf-8")
    assert "::error " not in second.stdout


def _assert_failed_without_results(job: Job, code: int, returncode: int, log: str) -> None:
    assert returncode == code, log
    assert job.outputs() == {"verdict": action.ERROR_VERDICT}, log
    assert job.summary_file.read_text(encoding="utf-8") == SUMMARY_BEFORE
    assert "::error " not in log


def _stale_report(job: Job) -> None:
    """A passing report left in the output directory by an earlier run."""
    stale = RunReport(
        version="0.0.0",
        target=TargetSummary(name="stale", kind="stdio"),
        seed=1,
        seed_source="--seed",
        budget_s=1.0,
        duration_s=1.0,
        calls=1,
        mode="mixed",
        fail_on=Severity.MEDIUM,
        entries=(),
        findings=(),
        verdict=Verdict.PASS,
    )
    json_report.write(stale, job.workspace / "server" / ".fuzzgate" / "out")


def test_a_bad_budget_is_a_config_error_and_never_reads_as_a_pass(tmp_path: Path) -> None:
    job = _job(tmp_path, {"budget": "soon"})
    _stale_report(job)
    result = run_action(job.env, cwd=job.workspace)
    _assert_failed_without_results(job, 2, result.returncode, result.stdout + result.stderr)
    assert "budget" in result.stderr


def test_a_bad_mode_is_a_usage_error(tmp_path: Path) -> None:
    job = _job(tmp_path, {"mode": "gentle"})
    _stale_report(job)
    result = run_action(job.env, cwd=job.workspace)
    _assert_failed_without_results(job, 2, result.returncode, result.stdout + result.stderr)
    assert "gentle" in result.stderr


def test_a_missing_working_directory_is_a_usage_error(tmp_path: Path) -> None:
    job = _job(tmp_path, {"working-directory": "no-such-dir"})
    result = run_action(job.env, cwd=job.workspace)
    _assert_failed_without_results(job, 2, result.returncode, result.stdout + result.stderr)
    assert "working-directory" in result.stderr


def test_a_server_that_cannot_start_exits_3(tmp_path: Path) -> None:
    job = _job(tmp_path, {"budget": "4s"}, server_command=str(tmp_path / "no-such-python"))
    _stale_report(job)
    result = run_action(job.env, cwd=job.workspace)
    _assert_failed_without_results(job, 3, result.returncode, result.stdout + result.stderr)
