"""The process serving an HTTP target whose command fuzzgate starts: readiness, its logs as a
call's stderr, a crash's status, and its end on every path."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import anyio
import pytest

from fuzzgate.config.model import Config, TargetConfig, TargetKind
from fuzzgate.config.views import ServerSettings
from fuzzgate.model.errors import TargetError
from fuzzgate.model.outcome import OutcomeStatus
from fuzzgate.sandbox.process_tree import ProcessTable
from fuzzgate.sandbox.relay import address_of
from fuzzgate.target import call as call_module
from fuzzgate.target.call import call_tool
from fuzzgate.target.connection import launch_spec, open_connection
from fuzzgate.target.http_server import where

SERVER = Path(__file__).resolve().parents[1] / "servers" / "http_crash.py"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _config(port: int, *args: str, startup_timeout_ms: int = 30_000) -> Config:
    target = TargetConfig(
        kind=TargetKind.HTTP,
        url=f"http://127.0.0.1:{port}/mcp",
        command=sys.executable,
        args=args or (str(SERVER), f"--port={port}"),
        env={"FUZZGATE_TEST": "1"},
    )
    return Config(target=target, startup_timeout_ms=startup_timeout_ms)


def _alive(pid: int | None) -> bool:
    info = ProcessTable.read().processes.get(pid or -1)
    return info is not None and info.state not in "ZX"


def test_one_launch_spec_for_both_kinds() -> None:
    http = _config(8000)
    stdio = Config(
        target=TargetConfig(kind=TargetKind.STDIO, command=sys.executable, args=http.target.args, env=http.target.env)
    )
    spec = launch_spec(ServerSettings.of(http), {"CANARY": "x"})
    assert (spec.command, spec.args, spec.cwd) == (sys.executable, http.target.args, None)
    assert spec.env["FUZZGATE_TEST"] == "1" and spec.env["CANARY"] == "x" and spec.env["PYTHONUNBUFFERED"] == "1"
    assert launch_spec(ServerSettings.of(stdio), {"CANARY": "x"}) == spec


def test_addresses() -> None:
    assert address_of("http://127.0.0.1:8123/mcp") == ("127.0.0.1", 8123)
    assert address_of("https://mcp.example.com/mcp") == ("mcp.example.com", 443)
    assert address_of("http://[::1]/mcp") == ("::1", 80)
    assert where(("::1", 80)) == "[::1]:80"


def test_the_served_process_logs_crashes_and_dies_with_the_connection() -> None:
    port = _free_port()

    async def body() -> None:
        async with open_connection(ServerSettings.of(_config(port))) as connection:
            served = connection.served
            assert served is not None and served.ready and connection.alive()
            pid = served.pid
            assert _alive(pid)
            ok = await call_tool(connection, "echo", {"text": "hi"}, 5)
            assert ok.status is OutcomeStatus.OK and ok.text == "hi"
            # Its stdout is drained into the log too, never read as MCP.
            assert any(line.startswith("http_crash: serving on") for line in served.stderr.tail(100))
            crash = await call_tool(connection, "store_record", {"name": "n", "copies": 64}, 5)
            assert crash.status is OutcomeStatus.CLOSED and crash.exit_code == 3
            assert "RuntimeError: record buffer overflow" in crash.stderr
            assert not connection.alive() and not served.killed_by_us
        assert not _alive(pid)
        # The port is free again for the next server (which, as servers do, reuses the address
        # its predecessor's closed connections still hold in TIME_WAIT).
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", port))

    anyio.run(body)


def test_a_command_that_never_listens_times_out_with_its_stderr() -> None:
    port = _free_port()
    code = "import sys, time; print('warming up', file=sys.stderr, flush=True); time.sleep(60)"
    config = _config(port, "-c", code, startup_timeout_ms=1500)

    async def body() -> None:
        async with open_connection(ServerSettings.of(config)):
            raise AssertionError("nothing listens: the connection cannot open")

    with pytest.raises(TargetError) as caught:
        anyio.run(body)
    error = caught.value
    assert f"nothing accepted connections on 127.0.0.1:{port} within 1.5s" in error.message
    assert error.detail is not None and "warming up" in error.detail
    assert _running(code) == []


def _running(code: str) -> list[int]:
    """Live processes whose command line holds `code`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if code.encode() in cmdline and _alive(int(entry.name)):
                found.append(int(entry.name))
    return found


def test_a_request_the_http_client_cannot_encode_is_not_sent_and_the_session_goes_on(tmp_path: Path) -> None:
    # The SDK's HTTP client cannot encode a lone surrogate as UTF-8; sent, such a request would break
    # the session (below). It is refused before sending: unsendable, not a call, and the session
    # goes on without a restart.
    port = _free_port()
    log = tmp_path / "calls.log"
    config = _config(port, str(SERVER), f"--port={port}", f"--call-log={log}")

    async def body() -> None:
        async with open_connection(ServerSettings.of(config)) as connection:
            unsendable = await call_tool(connection, "echo", {"text": "\ud800"}, 5)
            assert unsendable.status is OutcomeStatus.UNSENDABLE, unsendable
            assert not connection.broken
            after = await call_tool(connection, "echo", {"text": "a"}, 5)
            assert after.status is OutcomeStatus.OK, after
            assert len(log.read_text().splitlines()) == 1

    anyio.run(body)


def test_a_request_the_http_client_cannot_encode_breaks_fuzzgates_side_not_the_servers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Should a request the check before sending lets through fail to encode, the SDK's HTTP client
    # fails in a task of its transport: that kills the session, and every later request then fails
    # with -32000 "Connection closed" at once, without reaching the server. That is fuzzgate's own
    # side failing: the request is unsendable (not a call), the session is broken and later requests
    # are not sent on it; the server received neither. (The check is switched off to reach it.)
    monkeypatch.setattr(call_module, "_unsendable_over_http", lambda connection, arguments: False)
    port = _free_port()
    log = tmp_path / "calls.log"
    config = _config(port, str(SERVER), f"--port={port}", f"--call-log={log}")

    def received() -> int:
        return len(log.read_text().splitlines()) if log.exists() else 0

    async def body() -> None:
        async with open_connection(ServerSettings.of(config)) as connection:
            ok = await call_tool(connection, "echo", {"text": "hi"}, 5)
            assert ok.status is OutcomeStatus.OK and received() == 1
            assert not connection.broken
            unsendable = await call_tool(connection, "echo", {"text": "\ud800"}, 5)
            assert unsendable.status is OutcomeStatus.UNSENDABLE, unsendable
            assert unsendable.error is not None and "UnicodeEncodeError" in unsendable.error
            assert connection.broken and connection.alive()
            after = await call_tool(connection, "echo", {"text": "a"}, 5)
            assert after.status is OutcomeStatus.CLIENT_FAILED, after
            assert received() == 1

    anyio.run(body)
