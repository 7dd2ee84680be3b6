"""`fuzzgate run` against tests/servers/sdk_strict.py, a clean server on the real Python SDK whose
tools all require arguments: input the schema forbids is the SDK's to reject, and what the SDK does
wrong is reported once, low, as the SDK's, and fails no gate unless asked to."""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import CliRun, fuzzgate

pytestmark = pytest.mark.e2e

SERVER = Path(__file__).resolve().parents[1] / "servers" / "sdk_strict.py"


def _run(work: Path, *extra: str) -> CliRun:
    return fuzzgate(
        "run", "--command", sys.executable, f"--arg={SERVER}", "--cases", "100", "--budget", "120s",
        "--seed", "11", "--timeout", "2s", "--fail-on", "low", *extra, cwd=work,
    )  # fmt: skip


@pytest.fixture(scope="module")
def strict(tmp_path_factory: pytest.TempPathFactory) -> CliRun:
    return _run(tmp_path_factory.mktemp("sdk-strict"))


def test_a_clean_server_on_the_sdk_has_no_internal_error_and_passes(strict: CliRun) -> None:
    report = strict.report
    assert sum(report["cases_per_tool"].values()) >= 150, report["cases_per_tool"]
    assert [f for f in report["findings"] if f["kind"] == "internal_error" and f["cause"] != "sdk"] == []
    assert [f for f in report["findings"] if f["cause"] != "sdk"] == [], report["findings"]
    # The one finding is the SDK transport's: the lone-surrogate request it drops (seed 11 sends one).
    (sdk,) = report["findings"]
    assert (sdk["severity"], sdk["surface"], sdk["signature"]) == ("low", "server", ["unanswered", "lone-surrogate"])
    version = importlib.metadata.version("mcp")
    assert f"the Python MCP SDK (mcp {version})" in sdk["message"] and "the SDK's bug" in sdk["message"]
    # Even at fail-on low: the SDK's findings are not the server's to fix.
    assert strict.code == 0 and report["verdict"] == "pass", strict.stdout + strict.stderr


def test_fail_on_sdk_makes_the_sdks_finding_fail_the_gate(tmp_path: Path) -> None:
    asked = _run(tmp_path, "--fail-on-sdk")
    assert asked.code == 1 and asked.report["verdict"] == "fail", asked.stdout + asked.stderr
    assert asked.report["fail_on_sdk"] is True
    assert [f["cause"] for f in asked.report["findings"]] == ["sdk"]
