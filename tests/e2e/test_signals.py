"""A cancelled CI job sends SIGTERM, a person presses Ctrl-C: fuzzgate stops its servers, writes no
report, and exits 143 or 130 (128 + the signal), with no traceback."""

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
from tests.e2e.test_interrupt import _processes_running

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_stops_the_run_with_its_exit_code(tmp_path: Path, signum: int, code: int) -> None:
    script = tmp_path / f"unique_signal_{signum}_server.py"
    shutil.copy(SERVERS / "clean_server.py", script)
    shutil.copy(SERVERS / "_serve.py", tmp_path / "_serve.py")
    trace = tmp_path / "trace.jsonl"
    workdir = tmp_path.parent / f"{tmp_path.name}-workspaces"
    workdir.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "fuzzgate", "run", "--command", sys.executable, f"--arg={script}",
         "--budget", "5m", "--seed", "1", "--out", str(tmp_path / "out"), "--trace", str(trace)],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "FUZZGATE_WORKDIR": str(workdir)},
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (trace.exists() and trace.stat().st_size > 200):
            time.sleep(0.2)
        assert _processes_running(str(script)), "the server never started"
        proc.send_signal(signum)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, stderr
    assert f"interrupted by {signal.Signals(signum).name}" in stderr
    assert "Traceback" not in stderr and "Exception ignored" not in stderr
    out = tmp_path / "out"
    assert not out.exists() or not any(out.iterdir()), "an interrupted run writes no output"
    assert list(workdir.iterdir()) == [], "an interrupted run leaves no workspace behind"
    deadline = time.monotonic() + 10
    while _processes_running(str(script)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_running(str(script)) == []


_SLOW_IMPORT = """
import sys, time, importlib.abc

class HoldCommands(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "fuzzgate.cli.main":
            open(sys.argv[1], "w").close()
            time.sleep(60)
        return None

sys.meta_path.insert(0, HoldCommands())
from fuzzgate.cli.entry import main
raise SystemExit(main(["tools", "--command", "true"]))
"""


def test_ctrl_c_while_the_commands_are_imported_is_one_line(tmp_path: Path) -> None:
    """The commands take a few tenths of a second to import; a Ctrl-C then printed Python's traceback."""
    importing = tmp_path / "importing"
    proc = subprocess.Popen(
        [sys.executable, "-c", _SLOW_IMPORT, str(importing)],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not importing.exists():
            time.sleep(0.05)
        assert importing.exists(), "the commands' import never started"
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert stderr.strip() == "fuzzgate: interrupted before the command started; nothing was written"
    assert stdout == ""
