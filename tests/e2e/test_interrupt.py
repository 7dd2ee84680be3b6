"""A run that ends by its budget while servers hang and crash leaves no process behind (Ctrl-C and
SIGTERM: test_signals.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import SERVERS

pytestmark = pytest.mark.e2e


def _processes_running(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline:
            found.append(int(entry.name))
    return found


def test_budget_end_reaps_every_server(tmp_path: Path) -> None:
    script = tmp_path / "unique_buggy_server.py"
    for name in ("buggy_server.py", "_serve.py", ".env.example"):
        shutil.copy(SERVERS / name, tmp_path / (script.name if name == "buggy_server.py" else name))
    shutil.copytree(SERVERS / "notes", tmp_path / "notes")
    run = subprocess.run(
        [sys.executable, "-m", "fuzzgate", "run", "--command", sys.executable, f"--arg={script}",
         "--include", "sync_repository", "--include", "format_label", "--budget", "20s", "--timeout", "1s",
         "--seed", "2", "--replays", "1", "--out", str(tmp_path / "out")],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={**os.environ, "FUZZGATE_EXAMPLE_MARKER_DIR": str(tmp_path)},
    )  # fmt: skip
    # Ended by the budget: the exit code is the one its findings make, whichever it met.
    assert run.returncode in (0, 1), run.stderr
    assert _processes_running(str(script)) == []
