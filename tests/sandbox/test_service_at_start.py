"""A server that needs a service on the host's loopback to start (a database an earlier CI step
started) cannot reach it in fuzzgate's sandbox, whose loopback is its own: the one-line error says
so and what to do, instead of only "run it by hand"."""

from __future__ import annotations

import shutil
import socket
import sys
import tempfile
from pathlib import Path

import pytest

from fuzzgate.config.model import SandboxMode, TargetConfig, TargetKind
from fuzzgate.model.errors import TargetError
from fuzzgate.sandbox.jail import sandbox_unavailable
from tests.sandbox.starting import start_error

ROOTS_READER = Path(__file__).resolve().parents[1] / "servers" / "roots_reader.py"

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("unshare") is None or sandbox_unavailable() is not None,
    reason="needs the sandbox and util-linux unshare",
)


def _start(tmp_path: Path, sandbox: SandboxMode, port: int) -> TargetError | None:
    # Connects to the service first, as a server that opens its database pool at start does.
    first = f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=5).close()\n"
    return _start_after(tmp_path, sandbox, first)


def _start_after(tmp_path: Path, sandbox: SandboxMode, first: str) -> TargetError | None:
    """Start a server that runs the code `first` before it serves; the start's error, if any."""
    script = tmp_path / "server.py"
    script.write_text(f"import runpy\n{first}runpy.run_path({str(ROOTS_READER)!r}, run_name='__main__')\n")
    target = TargetConfig(
        kind=TargetKind.STDIO, command=sys.executable, args=(str(script),), cwd=tmp_path, sandbox=sandbox
    )
    return start_error(target)


def test_a_server_that_needs_a_host_service_to_start_is_told_what_to_do(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as service:
        port = service.getsockname()[1]
        error = _start(tmp_path, SandboxMode.REQUIRED, port)
        assert error is not None
        assert "it could not reach a service it needs" in error.message and "\n" not in error.message
        assert error.hint is not None and error.hint.startswith("a server that needs a service to start")
        assert error.detail is not None and "Connection refused" in error.detail
        # Without the sandbox it reaches the service and starts.
        assert _start(tmp_path, SandboxMode.OFF, port) is None


def test_a_server_that_must_write_outside_its_scope_to_start_is_told_what_to_do(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """basic-memory 0.24.1 with its data directory outside the scope: `OSError: [Errno 30]
    Read-only file system` before it answered `initialize`."""
    # Not under /tmp, which is the server's own in the sandbox.
    outside = Path(tempfile.mkdtemp(prefix="fuzzgate-test-data-", dir="/var/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(outside, ignore_errors=True))
    first = f"import pathlib\n(pathlib.Path({str(outside)!r}) / 'state').mkdir(exist_ok=True)\n"
    error = _start_after(tmp_path, SandboxMode.REQUIRED, first)
    assert error is not None
    assert "it could not write where it keeps its files" in error.message and "\n" not in error.message
    assert error.hint is not None and error.hint.startswith("a server that must write outside its scope")
    assert error.detail is not None and "Read-only file system" in error.detail
