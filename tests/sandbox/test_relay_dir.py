"""Where the relay's sockets go (`sandbox.relay`): in the workspace, or, when its path is too long
for a Unix socket's, in the temp dir as a directory with an owner, which the next one made there
sweeps once its owner is gone (a run killed with SIGKILL could not remove it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from fuzzgate.sandbox.relay import RelayDir

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="owners are read from /proc")


@pytest.fixture
def short_tmp(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A temp dir with a path short enough for sockets, as the process's temp dir."""
    base = Path(tempfile.mkdtemp(prefix="rl", dir="/tmp"))
    monkeypatch.setattr(tempfile, "tempdir", str(base))
    yield base
    shutil.rmtree(base, ignore_errors=True)


def _owner_line(pid: int, start: str) -> str:
    namespace = os.stat("/proc/self/ns/pid").st_ino
    return f"{os.uname().nodename}:{namespace} {pid}:{start}\n"


def test_a_short_workspace_holds_the_relay_dir(tmp_path: Path) -> None:
    workspace = Path(tempfile.mkdtemp(prefix="ws", dir="/tmp"))
    try:
        relay = RelayDir(workspace)
        assert relay.path.parent == workspace and relay.path.name.startswith("relay-")
        assert relay.socket.parent == relay.path and relay.ready.parent == relay.path
        relay.close()
        assert not relay.path.exists()
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


def test_a_relay_dir_outside_the_workspace_is_swept_once_its_owner_is_gone(tmp_path: Path, short_tmp: Path) -> None:
    workspace = tmp_path / ("w" * 70)
    workspace.mkdir()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    with open(f"/proc/{os.getpid()}/stat", encoding="ascii") as handle:
        start = handle.read().rsplit(")", 1)[-1].split()[19]
    stale, live = short_tmp / "fuzzgate-relay-stale", short_tmp / "fuzzgate-relay-live"
    for directory, owner in ((stale, _owner_line(gone.pid, "1")), (live, _owner_line(os.getpid(), start))):
        directory.mkdir()
        (directory / "owner").write_text(owner)

    relay = RelayDir(workspace)
    assert relay.path.parent == short_tmp and relay.path.name.startswith("fuzzgate-relay-")
    assert len(str(relay.socket)) < 100
    assert (relay.path / "owner").read_text() == _owner_line(os.getpid(), start)
    assert not stale.exists(), "the relay dir of a run that is gone is swept"
    assert live.exists(), "a live run's relay dir stays"
    relay.close()
    assert not relay.path.exists()
