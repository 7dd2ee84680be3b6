"""`ServerProcess` against servers whose children try to outlive them, in this process (which is not
a subreaper, so it sees what fuzzgate sees where there is none: orphans are lost to init)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from fuzzgate.config.model import Config, TargetConfig, TargetKind
from fuzzgate.config.views import ServerSettings
from fuzzgate.model.outcome import CallOutcome, OutcomeStatus
from fuzzgate.sandbox.process_tree import ProcessTable
from fuzzgate.target.call import call_tool
from fuzzgate.target.connection import open_connection

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

LEAKY = Path(__file__).resolve().parents[1] / "servers" / "leaky.py"


@pytest.fixture
def pid_dir(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    # The pid is in the file's name (`<kind>-<pid>.pid`), which exists only once its text is whole.
    for path in tmp_path.glob("*.pid"):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(int(path.stem.rpartition("-")[2]), signal.SIGKILL)


def _config(pid_dir: Path, *flags: str) -> Config:
    args = (str(LEAKY), f"--marker=fuzzgate-leaky-{uuid.uuid4().hex}", f"--pid-prefix={pid_dir}/", *flags)
    return Config(
        target=TargetConfig(kind=TargetKind.STDIO, command=sys.executable, args=args), startup_timeout_ms=30_000
    )


def _call(config: Config, tool: str, timeout_s: float) -> CallOutcome:
    async def body() -> CallOutcome:
        async with open_connection(ServerSettings.of(config)) as connection:
            return await call_tool(connection, tool, {}, timeout_s)

    return anyio.run(body)


def _alive(pid: int) -> bool:
    info = ProcessTable.read().processes.get(pid)
    return info is not None and info.state not in "ZX"


def test_stopping_a_server_kills_its_child_that_left_the_session(pid_dir: Path) -> None:
    outcome = _call(_config(pid_dir), "start_session_leader", 10)
    assert outcome.status is OutcomeStatus.OK
    [pid_file] = pid_dir.glob("session-*.pid")
    assert not _alive(int(pid_file.read_text()))


def test_a_crash_is_seen_at_once_though_an_escaped_child_holds_the_pipes(pid_dir: Path) -> None:
    # Started before serving, the helper holds the server's stdout and stderr pipes; when the server
    # dies it is re-parented to init, out of fuzzgate's reach here, and keeps holding them.
    timeout_s = 30.0
    outcome = _call(_config(pid_dir, "--helper-at-start"), "crash_leaving_child", timeout_s)
    assert outcome.status is OutcomeStatus.CLOSED and outcome.exit_code == 1
    assert "crashing on purpose" in outcome.stderr
    # Not the timeout: a call waiting for a reply that no process would ever send.
    assert outcome.duration_s < timeout_s / 2
