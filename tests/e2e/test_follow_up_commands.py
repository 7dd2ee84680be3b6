"""A run given its server by flags alone (no config file) prints commands that work as printed,
typed where the run was: each finding's replay starts the server the report recorded and fails
again, and the printed `baseline accept` records the findings where the run keeps its baseline.
Before, every one of them stopped at "no configuration found". The printed commands name no
target, so no command line reaches the job summary or the SARIF."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

from tests.e2e.conftest import fuzzgate

SERVERS = Path(__file__).resolve().parents[1] / "servers"


def _printed(text: str, command: str) -> list[list[str]]:
    """The words after `fuzzgate` of every `fuzzgate COMMAND ...` line in `text`."""
    return [shlex.split(line)[1:] for line in re.findall(rf"fuzzgate {command}[^\n`]*", text)]


def test_the_commands_a_run_by_flags_prints_work_as_printed(tmp_path: Path) -> None:
    target = ["--command", sys.executable, f"--arg={SERVERS / 'caught.py'}"]
    args = ["--seed", "0", "--budget", "60s", "--cases", "3", "--baseline", "known", "--timeout", "4s"]
    run = fuzzgate("run", *target, *args, cwd=tmp_path, out=tmp_path / "reports")
    assert run.code == 1, run.stdout + run.stderr
    assert {f["name"] for f in run.report["findings"]} == {"lookup", "divide"}
    summary = (tmp_path / "reports" / "summary.md").read_text()
    sarif = (tmp_path / "reports" / "fuzzgate.sarif").read_text()
    # Tracebacks name the server's file; its command line is in neither.
    assert f"{sys.executable} " not in summary and sys.executable not in sarif

    replays = _printed(run.stdout, "replay")
    assert len(replays) == 2, run.stdout
    for words in replays:
        assert "--baseline=known" in words and "--timeout=4s" in words and f"--out={tmp_path / 'reports'}" in words
        assert not any(w.startswith(("--command", "--arg=")) or w == "--arg" for w in words), words
        again = fuzzgate(*words, cwd=tmp_path)
        assert again.code == 1, again.stdout + again.stderr
        assert again.stdout.startswith("the server of the last run (")
        assert "fails: internal_error" in again.stdout, again.stdout

    [accept] = _printed(summary, "baseline accept")
    accepted = fuzzgate(*accept, cwd=tmp_path)
    assert accepted.code == 0, accepted.stdout + accepted.stderr
    assert "recorded 2 finding(s) in known" in accepted.stdout
    # The same run again now finds nothing new: the printed command recorded them where it looks.
    rerun = fuzzgate("run", *target, *args, cwd=tmp_path, out=tmp_path / "reports")
    assert rerun.code == 0, rerun.stdout + rerun.stderr
    assert {f["baseline_state"] for f in rerun.report["findings"]} == {"known"}


def test_headers_are_asked_for_again_rather_than_sent_without_them(
    tmp_path: Path, http_server: tuple[str, Path]
) -> None:
    url, _markers = http_server
    secret = "Bearer follow-up-3f9c1d7e5a"
    run = fuzzgate(
        "run", "--url", url, "--header", f"Authorization: {secret}", "--seed", "0", "--budget", "20s",
        "--include", "split_bill", cwd=tmp_path, out=tmp_path / ".fuzzgate" / "out",
    )  # fmt: skip
    assert run.code == 1, run.stdout + run.stderr
    outputs = [run.stdout, run.stderr, *(p.read_text() for p in run.out.iterdir())]
    assert not any("follow-up-3f9c1d7e5a" in text for text in outputs)
    assert run.report["target"]["header_names"] == ["Authorization"]
    [words, *_] = _printed(run.stdout, "replay")
    assert not any(w.startswith(("--url", "--header")) for w in words), words
    refused = fuzzgate(*words, cwd=tmp_path)
    assert refused.code == 2 and refused.stdout == "", refused.stdout
    assert "the last run sent the header(s) Authorization, whose values are not recorded" in refused.stderr
    # Given the header again, the printed command replays the finding on the recorded URL.
    assert fuzzgate(*words, "--header", f"Authorization: {secret}", cwd=tmp_path).code == 1
