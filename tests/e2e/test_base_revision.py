"""`run --base DIR`: a finding that fails on the base revision too is pre-existing and never fails
the gate; the pull request is blamed only for what it brought. Real CLI, real stdio servers: the
head and the base are two checkouts of one small repository, the head adding one buggy tool."""

from __future__ import annotations

import json
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.e2e.conftest import CliRun, fuzzgate

SERVER = Path(__file__).resolve().parents[1] / "servers" / "revision.py"
# Bounded by cases, not by a time box: what is found must not depend on the machine's load (both
# bugs come within 30 cases with this seed; the budget is only a ceiling).
RUN = ("--cases", "30", "--budget", "120s", "--replays", "1", "--seed", "7", "--fail-on", "high")


def _checkout(directory: Path, *, head: bool) -> Path:
    directory.mkdir(parents=True)
    shutil.copy(SERVER, directory / "server.py")
    if head:
        (directory / "head.txt").write_text("the head adds `ratio`\n")
    return directory


def _run(head: Path, *extra: str) -> CliRun:
    return fuzzgate("run", "--command", sys.executable, "--arg", "server.py", *RUN, *extra, cwd=head)


def _states(run: CliRun) -> dict[str, str]:
    return {f["name"]: f["baseline_state"] for f in run.report["findings"] if f["kind"] == "internal_error"}


def test_only_the_heads_new_bug_fails_the_gate_and_the_old_one_is_pre_existing(tmp_path: Path) -> None:
    head = _checkout(tmp_path / "head", head=True)
    _checkout(tmp_path / "base", head=False)
    run = _run(head, "--base", "../base")
    assert run.code == 1, run.stdout + run.stderr
    assert _states(run) == {"ratio": "new", "average": "pre-existing"}, run.stdout
    assert any("fail there too (pre-existing)" in note for note in run.report["notes"]), run.report["notes"]

    sarif = json.loads((run.out / "fuzzgate.sarif").read_text())
    results = {r["properties"]["name"]: r for r in sarif["runs"][0]["results"] if r["ruleId"] == "internal_error"}
    assert results["average"]["baselineState"] == "unchanged"
    assert results["average"]["properties"]["baseline_state"] == "pre-existing"
    assert results["ratio"]["baselineState"] == "new"

    cases = {c.get("name", ""): c for c in ET.parse(run.out / "junit.xml").getroot().iter("testcase")}
    failing = {name for name, case in cases.items() if case.find("failure") is not None}
    assert any("ratio" in name for name in failing), failing
    assert not any("average" in name for name in failing), failing

    summary = (run.out / "summary.md").read_text()
    assert "Pre-existing findings" in summary
    assert "fuzzgate baseline accept --pre-existing" in summary
    assert "FAIL" in run.stdout and "pre-existing internal_error (high) in average" in run.stdout

    target = ("--command", sys.executable, "--arg", "server.py")
    accepted = fuzzgate("baseline", "accept", "--pre-existing", "--out", str(run.out), *target, cwd=head)
    assert accepted.code == 0, accepted.stderr
    pre_existing = [f for f in run.report["findings"] if f["baseline_state"] == "pre-existing"]
    assert f"recorded {len(pre_existing)} pre-existing finding(s)" in accepted.stdout
    listing = fuzzgate("baseline", "list", *target, cwd=head)
    assert "average" in listing.stdout and "ratio" not in listing.stdout


def test_head_equal_to_base_passes_without_any_baseline(tmp_path: Path) -> None:
    head = _checkout(tmp_path / "head", head=True)
    shutil.copytree(head, tmp_path / "base")
    run = _run(head, "--base", str(tmp_path / "base"))
    states = _states(run)
    assert states == {"ratio": "pre-existing", "average": "pre-existing"}, run.stdout
    assert run.code == 0, run.stdout + run.stderr
    assert run.report["verdict"] == "pass"


def test_a_base_whose_server_cannot_start_leaves_every_finding_new_and_says_so(tmp_path: Path) -> None:
    head = _checkout(tmp_path / "head", head=True)
    (tmp_path / "base").mkdir()  # the base checkout has no server.py: its server exits at once
    run = _run(head, "--base", "../base")
    assert run.code == 1, run.stdout + run.stderr
    assert set(_states(run).values()) == {"new"}, run.stdout
    notes = " ".join(run.report["notes"])
    assert "the base revision's server could not be started" in notes, notes
    assert "stay new" in notes or "stays new" in notes, notes


def test_a_base_that_is_not_a_directory_is_a_usage_error(tmp_path: Path) -> None:
    head = _checkout(tmp_path / "head", head=True)
    run = _run(head, "--base", "../nowhere")
    assert run.code == 2
    assert "--base: ../nowhere is not a directory" in run.stderr
    assert "Traceback" not in run.stderr
    assert not (run.out / "report.json").exists()
