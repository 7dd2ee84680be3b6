"""`fuzzgate run` against tests/servers/protocol_breaker.py: its start-up banner and the protocol
bugs the round plants are found once each, as the server's findings, confirmed on fresh servers;
`fuzzgate replay` resends a probe's raw message; the clean look-alike gives no finding."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import CliRun, fuzzgate

pytestmark = pytest.mark.e2e

BREAKER = Path(__file__).resolve().parents[1] / "servers" / "protocol_breaker.py"


def target(*extra: str) -> list[str]:
    return ["--command", sys.executable, f"--arg={BREAKER}", *(f"--arg={x}" for x in extra)]


def run_breaker(work: Path, *extra: str) -> CliRun:
    # Bounded by cases, not time, the same for the planted server and its clean look-alike: the
    # protocol round probes the server once, right after discovery, before any case.
    return fuzzgate(
        "run", *target(*extra), "--cases", "100", "--budget", "120s", "--seed", "7", "--timeout", "2s",
        "--baseline", str(work / "baseline"), cwd=work,
    )  # fmt: skip


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> CliRun:
    return run_breaker(tmp_path_factory.mktemp("breaker"))


def test_each_planted_protocol_bug_is_one_confirmed_finding_of_the_server(planted: CliRun) -> None:
    assert planted.code == 1, planted.stdout + planted.stderr
    server = planted.findings(surface="server")
    by_probe = {f["repro"]["tool"]: f for f in server}
    assert {probe: f["kind"] for probe, f in by_probe.items()} == {
        "startup-banner": "protocol_error",
        "arguments-omitted": "internal_error",
        "arguments-null": "crash",
    }
    for f in server:
        assert f["name"] == "transport" and f["repro"]["surface"] == "server"
        assert f["replays"] > 0 and f["reproduced"] == f["replays"] and not f["flaky"], f
    # The repro is the raw message sent.
    null = by_probe["arguments-null"]["repro"]["arguments"]
    assert null["method"] == "tools/call" and null["params"]["arguments"] is None
    assert "4 non-JSON lines" in by_probe["startup-banner"]["message"]
    # A probe that killed the server did not stop the run: the tools were fuzzed after it.
    assert planted.report["calls"] > 0
    assert not planted.findings(surface="tool")


def test_a_protocol_finding_replays_from_the_report(planted: CliRun) -> None:
    crash = next(f for f in planted.findings(surface="server") if f["kind"] == "crash")
    cwd = planted.out.parent
    again = fuzzgate(
        "replay", crash["fingerprint"], "--out", str(planted.out), "--baseline", str(cwd / "baseline"), *target(),
        cwd=cwd,
    )  # fmt: skip
    assert again.code == 1, again.stdout + again.stderr
    assert "still fails" in again.stdout


def test_the_clean_look_alike_gives_no_finding(tmp_path: Path) -> None:
    run = run_breaker(tmp_path, "--clean")
    assert run.code == 0, run.stdout + run.stderr
    assert run.report["findings"] == []
