"""A run given its server by flags alone (no config file) prints commands that work as printed:
each finding's replay starts the same server and fails again, and the printed `baseline accept`
records the findings where the run keeps its baseline. Before, every one of them stopped at "no
configuration found"."""

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
    run = fuzzgate(
        "run", *target, "--seed", "0", "--budget", "60s", "--cases", "3", "--baseline", "known",
        cwd=tmp_path, out=tmp_path / "reports",
    )  # fmt: skip
    assert run.code == 1, run.stdout + run.stderr
    assert {f["name"] for f in run.report["findings"]} == {"lookup", "divide"}

    replays = _printed(run.stdout, "replay")
    assert len(replays) == 2, run.stdout
    for words in replays:
        assert f"--arg={SERVERS / 'caught.py'}" in words and "--baseline=known" in words, words
        again = fuzzgate(*words, cwd=tmp_path)
        assert again.code == 1, again.stdout + again.stderr
        assert "fails: internal_error" in again.stdout, again.stdout

    summary = (tmp_path / "reports" / "summary.md").read_text()
    [accept] = _printed(summary, "baseline accept")
    assert f"--out={tmp_path / 'reports'}" in accept, accept
    accepted = fuzzgate(*accept, cwd=tmp_path)
    assert accepted.code == 0, accepted.stdout + accepted.stderr
    assert "recorded 2 finding(s) in known" in accepted.stdout
    # The same run again now finds nothing new: the printed command recorded them where it looks.
    rerun = fuzzgate(
        "run", *target, "--seed", "0", "--budget", "60s", "--cases", "3", "--baseline", "known",
        cwd=tmp_path, out=tmp_path / "reports",
    )  # fmt: skip
    assert rerun.code == 0, rerun.stdout + rerun.stderr
    assert {f["baseline_state"] for f in rerun.report["findings"]} == {"known"}


def test_a_header_s_value_is_in_no_printed_command_and_the_marker_is_refused(
    tmp_path: Path, http_server: tuple[str, Path]
) -> None:
    url, _markers = http_server
    secret = "Bearer follow-up-3f9c1d7e5a"
    run = fuzzgate(
        "run", "--url", url, "--header", f"Authorization: {secret}", "--seed", "0", "--budget", "20s",
        "--include", "split_bill", cwd=tmp_path,
    )  # fmt: skip
    assert run.code == 1, run.stdout + run.stderr
    outputs = [run.stdout, run.stderr, *(p.read_text() for p in run.out.iterdir())]
    assert not any(secret in text or "follow-up-3f9c1d7e5a" in text for text in outputs)
    [words, *_] = _printed(run.stdout, "replay")
    assert f"--url={url}" in words and "--header=Authorization: [REDACTED]" in words, words
    refused = fuzzgate(*words, cwd=tmp_path)
    assert refused.code == 2 and refused.stdout == "", refused.stdout
    assert refused.stderr.startswith("fuzzgate: configuration error: --header: holds [REDACTED]"), refused.stderr
    # With the value put back, the printed command replays the finding.
    words[words.index("--header=Authorization: [REDACTED]")] = f"--header=Authorization: {secret}"
    assert fuzzgate(*words, cwd=tmp_path).code == 1
