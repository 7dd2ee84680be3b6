"""The real CLI started from anywhere in a repository uses the same config, baseline and outputs:
the parent walk finds the config at the root, `out` and `baseline` are beside it, and the server's
relative command line (`args = ["buggy_server.py"]`) runs from the config's directory."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import SERVERS, CliRun

pytestmark = pytest.mark.e2e

# One buggy tool, a fixed number of cases and one replay keep the three runs short.
RUN = ("run", "--include", "split_bill", "--cases", "5", "--budget", "60s", "--seed", "21", "--replays", "1")


def _fuzzgate(*args: str, cwd: Path) -> CliRun:
    """The CLI with no --out or --config, so the config file decides both."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "FUZZGATE_", "WALLFACER_"))}
    proc = subprocess.run(
        [sys.executable, "-m", "fuzzgate", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    return CliRun(proc.returncode, proc.stdout, proc.stderr, cwd / "unused")


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    for name in ("buggy_server.py", "_serve.py", ".env.example"):
        shutil.copy(SERVERS / name, root / name)
    shutil.copytree(SERVERS / "notes", root / "notes")
    (root / "fuzzgate.toml").write_text(
        f'[target]\ncommand = {json.dumps(sys.executable)}\nargs = ["buggy_server.py"]\n', encoding="utf-8"
    )
    for sub in ("src/deep", "docs"):
        (root / sub).mkdir(parents=True)
    return root


def test_run_accept_and_rerun_from_different_directories_share_out_and_baseline(repository: Path) -> None:
    out = repository / ".fuzzgate" / "out"
    first = _fuzzgate(*RUN, cwd=repository / "src" / "deep")
    assert first.code == 1, first.stdout + first.stderr
    report = json.loads((out / "report.json").read_text())
    assert {(f["kind"], f["name"]) for f in report["findings"]} == {("internal_error", "split_bill")}
    assert not (repository / "src" / "deep" / ".fuzzgate").exists()

    accept = _fuzzgate("baseline", "accept", cwd=repository / "docs")
    assert accept.code == 0, accept.stdout + accept.stderr
    entries = sorted(p.stem for p in (repository / ".fuzzgate" / "baseline").glob("*.json"))
    assert entries == [f["fingerprint"] for f in report["findings"]]
    assert not (repository / "docs" / ".fuzzgate").exists()

    again = _fuzzgate(*RUN, cwd=repository)
    assert again.code == 0, again.stdout + again.stderr
    rerun = json.loads((out / "report.json").read_text())
    assert [f["baseline_state"] for f in rerun["findings"]] == ["known"]
