"""Ctrl-C and a server that hangs: fuzzgate stops, exits 130 or finishes, and leaves no process behind."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
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


def test_ctrl_c_stops_the_server_and_writes_nothing(tmp_path: Path) -> None:
    # A copy of the server under a unique path, so its processes can be found by command line.
    script = tmp_path / "unique_clean_server.py"
    shutil.copy(SERVERS / "clean_server.py", script)
    shutil.copy(SERVERS / "_serve.py", tmp_path / "_serve.py")
    trace = tmp_path / "trace.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "fuzzgate", "run", "--command", sys.executable, f"--arg={script}",
         "--budget", "5m", "--seed", "1", "--out", str(tmp_path / "out"), "--trace", str(trace)],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (trace.exists() and trace.stat().st_size > 200):
            time.sleep(0.2)
        assert _processes_running(str(script)), "the server never started"
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert "interrupted" in stderr
    deadline = time.monotonic() + 10
    while _processes_running(str(script)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_running(str(script)) == []
    assert not (tmp_path / "out" / "report.json").exists()


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
    assert run.returncode == 1, run.stderr
    assert _processes_running(str(script)) == []
