"""`fuzzgate run` against tests/servers/network_user.py, whose tools use the network: inside the
sandbox (a loopback-only network that resolves no name) every call of them fails, which is the
sandbox's doing: one note per cause naming the tools, no finding. Without the sandbox the same
failures are the server's to handle, and stay findings."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import CliRun, fuzzgate

pytestmark = pytest.mark.e2e

SERVER = Path(__file__).resolve().parents[1] / "servers" / "network_user.py"


def _run(work: Path, *extra: str) -> CliRun:
    # A name lookup that cannot succeed may take its resolver's timeout: `--slow` above it.
    return fuzzgate(
        "run", "--command", sys.executable, f"--arg={SERVER}", "--cases", "20", "--budget", "120s",
        "--seed", "3", "--timeout", "8s", "--slow", "10s", *extra, cwd=work,
    )  # fmt: skip


def test_errors_the_sandbox_causes_are_one_note_per_cause(tmp_path: Path) -> None:
    run = _run(tmp_path, "--exclude", "sync_feed")
    report = run.report
    if not report["containment"].startswith("sandboxed"):
        pytest.skip(f"the sandbox does not work here: {report['containment']}")
    assert report["findings"] == [], report["findings"]
    assert run.code == 0, run.stdout + run.stderr
    notes = [n for n in report["notes"] if n.startswith("the sandbox caused errors")]
    assert len(notes) == 2, report["notes"]
    (dns,) = [n for n in notes if "name lookups failed" in n]
    (network,) = [n for n in notes if "connections were refused" in n]
    assert "1 tool(s) (check_updates)" in dns and "1 tool(s) (notify)" in network
    assert report["cases_per_tool"]["notify"] >= 10


def test_without_the_sandbox_the_same_errors_are_findings(tmp_path: Path) -> None:
    run = _run(tmp_path, "--sandbox", "off", "--include", "notify")
    assert run.report["containment"].startswith("not sandboxed"), run.report["containment"]
    assert [(f["kind"], f["name"]) for f in run.report["findings"]] == [("internal_error", "notify")]
    assert "Connection refused" in run.report["findings"][0]["message"]
    assert not [n for n in run.report["notes"] if n.startswith("the sandbox caused errors")]


def _waiting(work: Path, *extra: str) -> CliRun:
    return fuzzgate(
        "run", "--command", sys.executable, f"--arg={SERVER}", "--include", "sync_feed", "--cases", "2",
        "--budget", "60s", "--seed", "3", "--timeout", "2s", "--replays", "1", *extra, cwd=work,
    )  # fmt: skip


def test_a_call_waiting_on_a_service_the_sandbox_hides_is_a_note_not_a_hang(tmp_path: Path) -> None:
    """neo4j's and arxiv's servers retry a database or an API they cannot reach in the jail, and
    never answer: their hangs, and the protocol probes they leave unanswered, are the sandbox's."""
    run = _waiting(tmp_path)
    report = run.report
    if not report["containment"].startswith("sandboxed"):
        pytest.skip(f"the sandbox does not work here: {report['containment']}")
    assert report["findings"] == [], report["findings"]
    assert run.code == 0, run.stdout + run.stderr
    (note,) = [n for n in report["notes"] if n.startswith("the sandbox caused errors")]
    assert "1 tool(s) (sync_feed)" in note and "connections were refused" in note


def test_without_the_sandbox_a_call_waiting_on_a_service_is_a_hang(tmp_path: Path) -> None:
    run = _waiting(tmp_path, "--sandbox", "off")
    assert run.code == 1, run.stdout + run.stderr
    assert "hang" in {f["kind"] for f in run.report["findings"]}, run.report["findings"]
    assert not [n for n in run.report["notes"] if n.startswith("the sandbox caused errors")]
