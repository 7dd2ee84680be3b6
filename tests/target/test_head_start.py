"""The run's first server started ahead (`target.head_start`): started before the SDK is imported,
taken over by the first `open_connection` that asks for exactly that start, killed otherwise. Real
servers over real stdio, and the command serving an HTTP target over real streamable HTTP."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from fuzzgate.check.secrets import canary_environment
from fuzzgate.config.model import Config, SandboxMode, TargetConfig, TargetKind
from fuzzgate.config.views import ServerSettings
from fuzzgate.model.errors import TargetError
from fuzzgate.target.connection import open_connection
from fuzzgate.target.discover import discover
from fuzzgate.target.head_start import begin

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

FAST = Path(__file__).resolve().parents[2] / "examples" / "servers" / "fast_server.py"
SEED = 7


def _settings(*args: str) -> ServerSettings:
    target = TargetConfig(kind=TargetKind.STDIO, command=sys.executable, args=(str(FAST), *args))
    return ServerSettings.of(Config(target=target, startup_timeout_ms=30_000))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _http_settings(port: int, sandbox: SandboxMode) -> ServerSettings:
    target = TargetConfig(
        kind=TargetKind.HTTP,
        url=f"http://127.0.0.1:{port}/mcp",
        command=sys.executable,
        args=(str(FAST), "--transport", "http", "--port", str(port)),
        sandbox=sandbox,
    )
    return ServerSettings.of(Config(target=target, startup_timeout_ms=30_000))


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_the_first_server_starts_before_the_sdk_is_imported(tmp_path: Path) -> None:
    script = f"""
import json, sys
from fuzzgate.check.secrets import canary_environment
from fuzzgate.config.model import Config, SandboxMode, TargetConfig, TargetKind
from fuzzgate.config.views import ServerSettings
from fuzzgate.model.errors import TargetError
from fuzzgate.target.head_start import begin
target = TargetConfig(kind=TargetKind.STDIO, command=sys.executable, args=({str(FAST)!r},))
settings = ServerSettings.of(Config(target=target))
head = begin(settings, {SEED})
early = head.take(settings, canary_environment({SEED}))
heavy = sorted(m for m in ("mcp", "mcp_types", "hypothesis", "fuzzgate.target.connection") if m in sys.modules)
print(json.dumps({{"started": early is not None and early.process.pid > 0, "heavy": heavy}}))
early.process.discard()
early.prepared.close()
head.close()
"""
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"started": True, "heavy": []}


def _first_connection(settings: ServerSettings) -> tuple[int | None, int | None, list[str]]:
    """Begin a head start for `settings`, open the first connection as a run does: the early
    process's pid (None: none was started), the serving process's pid, the tools it lists."""
    head = begin(settings, SEED)
    assert head is not None
    containment = head.take_containment()
    canaries = canary_environment(SEED)
    early = head.take(settings, canaries)
    assert head.take(settings, canaries) is None  # once
    early_pid = early.process.pid if early is not None else None

    async def body() -> tuple[int | None, list[str]]:
        async with open_connection(settings, extra_env=canaries, containment=containment, early=early) as connection:
            inventory = await discover(connection, 10)
            assert connection.server is not None
            return connection.server.pid, [tool.name for tool in inventory.tools]

    try:
        return early_pid, *anyio.run(body)
    finally:
        head.close()
        if containment is not None:
            containment.close()


@pytest.mark.parametrize("kind", ["stdio", "http in the sandbox", "http unjailed"])
def test_the_first_connection_takes_the_early_server_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """A stdio server, or the command serving an HTTP target (on its own loopback in the sandbox)."""
    monkeypatch.chdir(tmp_path)
    if kind == "stdio":
        settings = _settings()
    else:
        settings = _http_settings(_free_port(), SandboxMode.REQUIRED if "sandbox" in kind else SandboxMode.OFF)
    early_pid, server_pid, tools = _first_connection(settings)
    assert early_pid is not None and server_pid == early_pid
    assert tools == ["ping_fast"]
    assert _gone(early_pid)


def test_a_start_other_than_the_one_made_ahead_gets_a_server_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = _settings()
    head = begin(settings, SEED)
    assert head is not None
    early = head._start
    assert early is not None
    # Other canaries: not the start that was made, which is killed rather than handed over.
    assert head.take(settings, canary_environment(SEED + 1)) is None
    assert _gone(early.process.pid)
    head.close()


def test_closing_an_untaken_head_start_kills_its_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    head = begin(_settings(), SEED)
    assert head is not None and head._start is not None
    pid = head._start.process.pid
    assert not _gone(pid)
    head.close()
    head.close()  # idempotent
    assert _gone(pid)


def test_a_target_fuzzgate_does_not_start_gets_no_head_start() -> None:
    http = TargetConfig(kind=TargetKind.HTTP, url="http://127.0.0.1:9/mcp")
    assert begin(ServerSettings.of(Config(target=http)), SEED) is None


def test_in_the_sandbox_a_port_held_on_the_host_does_not_stop_the_head_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    port = _free_port()
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", port))
        holder.listen()
        early_pid, served_pid, tools = _first_connection(_http_settings(port, SandboxMode.REQUIRED))
    assert early_pid is not None and served_pid == early_pid and tools == ["ping_fast"]


def test_unjailed_a_port_held_on_the_host_gets_no_head_start_and_the_start_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    port = _free_port()
    settings = _http_settings(port, SandboxMode.OFF)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", port))
        holder.listen()
        head = begin(settings, SEED)
        assert head is not None and head.take(settings, canary_environment(SEED)) is None
        head.close()
        with pytest.raises(TargetError, match="already listening"):
            _first_connection(settings)
