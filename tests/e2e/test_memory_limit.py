"""`fuzzgate run` against a server one input can take the memory of (tests/servers/hoarder.py), over
real stdio, jailed where the sandbox works: past `--memory-limit` fuzzgate stops the server's
processes, and the call pending is an `out_of_memory` finding on the buggy tool alone, confirmed on
fresh servers, failing the gate, in the SARIF under its own rule; its one-line repro fails again
with the limit and passes without one (the allocation, not a crash of the server's own, is the bug)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from fuzzgate.target.connection import MEMORY_AT_START_HINT
from tests.e2e.conftest import ROOT, fuzzgate

pytestmark = pytest.mark.e2e

LIMIT = "256MiB"
HOARDER = ROOT / "tests" / "servers" / "hoarder.py"


def test_a_tool_that_takes_the_memory_is_out_of_memory(tmp_path: Path) -> None:
    run = fuzzgate(
        "run",
        "--command", sys.executable, f"--arg={HOARDER}",
        "--seed", "7", "--cases", "25", "--budget", "90s", "--replays", "2", "--memory-limit", LIMIT,
        # A big picture takes its time, the more so on a loaded machine: it is not what this test is about.
        "--slow", "60s",
        cwd=tmp_path,
    )  # fmt: skip
    assert run.code == 1, run.stdout + run.stderr
    [finding] = run.report["findings"]
    assert (finding["kind"], finding["name"], finding["severity"]) == ("out_of_memory", "render", "high")
    assert finding["signature"] == ["memory"]
    assert (finding["reproduced"], finding["flaky"], finding["unconfirmed"]) == (2, False, False)
    assert "past the limit of 256 MiB ([fuzzgate] memory_limit): fuzzgate stopped them" in finding["message"]
    assert finding["details"]["error"].startswith("stopped by fuzzgate (SIGKILL) at ")
    assert finding["repro"]["arguments"]["scale"] * (1 << 20) > 200 << 20  # a picture near the limit, or past it
    entries = {entry["name"]: entry for entry in run.report["entries"]}
    assert entries["render_bounded"]["cases"] > 10 and entries["word_count"]["cases"] > 10
    # The peak is the reading the watch stopped the server at: past the limit, and said so.
    assert run.report["memory"]["limit"] == 256 << 20 and run.report["memory"]["peak"] > 256 << 20
    assert "past memory_limit (256 MiB): fuzzgate stopped it" in " ".join(run.stdout.split())

    sarif = json.loads((run.out / "fuzzgate.sarif").read_text())
    [result] = sarif["runs"][0]["results"]
    rules = {rule["id"]: rule for rule in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert result["ruleId"] == "out_of_memory" and rules["out_of_memory"]["name"] == "MemoryExhaustion"

    # The command the console printed, as a user would paste it.
    [line] = [line.strip() for line in run.stdout.splitlines() if line.strip().startswith("reproduce: ")]
    words = shlex.split(line.removeprefix("reproduce: "))
    assert words[:2] == ["fuzzgate", "replay"] and f"--memory-limit={LIMIT}" in words and "--slow=60s" in words
    again = fuzzgate(*words[1:], cwd=tmp_path)
    assert again.code == 1, again.stdout + again.stderr
    assert "fails: out_of_memory:" in again.stdout
    unlimited = fuzzgate(
        *[w for w in words[1:] if not w.startswith("--memory-limit")], "--memory-limit", "off", cwd=tmp_path
    )
    assert unlimited.code == 0, unlimited.stdout + unlimited.stderr
    assert "no finding: render handled the request correctly" in unlimited.stdout
    # The finding itself is not replayed where the watch is off: it could only show "no longer fails".
    unwatched = fuzzgate("replay", finding["fingerprint"], "--out", str(run.out), "--memory-limit", "off", cwd=tmp_path)
    assert unwatched.code == 0, unwatched.stdout + unwatched.stderr
    assert "not replayed (its evidence is the memory watch stopping the server" in " ".join(unwatched.stdout.split())


def test_a_clean_run_reports_the_most_memory_a_server_held_against_the_default_limit(tmp_path: Path) -> None:
    """What a user sizes `memory_limit` by: the peak of the servers' resident memory, in report.json,
    the console and the job summary. Held from the start (HOARDER_AT_START_MIB), so the figure
    must be at least that, and under the default limit."""
    config = tmp_path / "fuzzgate.toml"
    config.write_text(
        "[target]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(HOARDER))}]\n"
        'env = { HOARDER_AT_START_MIB = "96" }\n'
    )
    run = fuzzgate("run", "--seed", "1", "--cases", "5", "--budget", "90s", "--include", "word_count", cwd=tmp_path)
    assert run.code == 0, run.stdout + run.stderr
    memory = run.report["memory"]
    assert memory["limit"] == 2 << 30 and 96 << 20 < memory["peak"] < memory["limit"], memory
    said = f"one server held at most {memory['peak'] / (1 << 20):.0f} MiB resident (its processes together)"
    assert said in " ".join(run.stdout.split()), run.stdout
    assert "of memory_limit (2.00 GiB)" in " ".join(run.stdout.split())
    assert f"**Memory:** {said}" in (run.out / "summary.md").read_text()


def test_a_server_past_the_limit_as_it_starts_is_a_target_error_that_says_so(tmp_path: Path) -> None:
    """Not "exited with status -9": a limit set below what the server holds once started is the
    user's to raise, and the one line says which setting."""
    config = tmp_path / "fuzzgate.toml"
    config.write_text(
        "[target]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(HOARDER))}]\n"
        'env = { HOARDER_AT_START_MIB = "200" }\n'
        "[fuzzgate]\n"
        'memory_limit = "128MiB"\n'
    )
    run = fuzzgate("run", "--seed", "1", "--budget", "30s", cwd=tmp_path)
    assert run.code == 3, run.stdout + run.stderr
    [error, hint] = run.stderr.strip().splitlines()[:2]
    assert error.startswith("fuzzgate: target error: could not start the stdio server")
    assert "resident memory as it started, past the limit of 128 MiB ([fuzzgate] memory_limit)" in error
    assert "exited with status" not in error
    assert hint == f"hint: {MEMORY_AT_START_HINT}"
    assert not (run.out / "report.json").exists()
    assert "Traceback" not in run.stderr
