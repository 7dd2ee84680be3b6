"""`sandbox.resident`: the resident memory of a process and of everything below it, read from /proc."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from fuzzgate.sandbox import resident
from fuzzgate.sandbox.resident import Resident, below, resident_bytes
from tests.validators import missing

pytestmark = pytest.mark.skipif(not resident.AVAILABLE, reason="/proc is Linux's")

MIB = 1 << 20
HOLD = 96
"""MiB the grandchild writes and holds: far above what a shell or an idle interpreter holds."""

GRANDCHILD = f"import sys, time; b = b'x' * ({HOLD} << 20); print('ready', flush=True); time.sleep(60)"


def test_a_process_tree_is_counted_whole() -> None:
    """A shell that starts an interpreter holding 96 MiB: the shell alone holds little, its tree the 96."""
    shell = subprocess.Popen(
        ["/bin/sh", "-c", f'"{sys.executable}" -c "{GRANDCHILD}"; :'], stdout=subprocess.PIPE, text=True
    )
    try:
        assert shell.stdout is not None and shell.stdout.readline() == "ready\n"
        members = below(shell.pid)
        assert members[0] == shell.pid and len(members) == 2
        grandchild = members[1]
        assert resident_bytes(shell.pid) < HOLD * MIB // 4
        assert resident_bytes(grandchild) >= HOLD * MIB
        assert Resident(shell.pid).read() >= resident_bytes(shell.pid) + HOLD * MIB
    finally:
        _kill_tree(shell)


def test_a_process_that_is_gone_holds_nothing() -> None:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(done.stdout)
    assert resident_bytes(pid) == 0
    assert below(pid) == [pid]
    assert Resident(pid).read() == 0


def test_children_started_later_are_counted_from_the_next_refresh() -> None:
    """The members are looked up again every `REFRESH_POLLS` reads, so a child started since counts."""
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import subprocess, sys, time; input(); subprocess.Popen([sys.executable, '-c', {GRANDCHILD!r}]); "
            "time.sleep(60)",
        ],
        stdin=subprocess.PIPE,
        text=True,
    )
    try:
        tree = Resident(parent.pid)
        before = tree.read()
        assert parent.stdin is not None
        parent.stdin.write("\n")
        parent.stdin.flush()
        held = before
        deadline = time.monotonic() + 30
        while held < before + HOLD * MIB and time.monotonic() < deadline:
            time.sleep(resident.POLL_S)
            held = tree.read()
        assert held >= before + HOLD * MIB
    finally:
        _kill_tree(parent)


def test_a_node_process_is_counted_as_a_python_one_is() -> None:
    """What V8 reserves and never touches is not resident; a buffer it filled is."""
    node = shutil.which("node")
    if node is None:
        missing("node is not installed", "install Node.js 20 or later")
    script = f"const b = Buffer.alloc({HOLD} << 20, 1); console.log('ready'); setTimeout(() => b, 60000);"
    process = subprocess.Popen([node, "-e", script], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None and process.stdout.readline() == "ready\n"
        held = Resident(process.pid).read()
        assert HOLD * MIB <= held < 4 * HOLD * MIB
    finally:
        process.kill()
        process.wait()


def _kill_tree(process: subprocess.Popen[str]) -> None:
    """Kill `process` and what it started, children first: found before any dies, since a child
    whose parent died is no longer below it."""
    for pid in reversed(below(process.pid)):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    process.wait()
