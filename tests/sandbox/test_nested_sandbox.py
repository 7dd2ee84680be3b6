"""A server that builds namespaces of its own (bubblewrap, nsjail, `unshare` inside) cannot start in
fuzzgate's sandbox: the one-line error says so and what to do, instead of "run it by hand"."""

from __future__ import annotations

import shutil
import sys
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


def _start(tmp_path: Path, sandbox: SandboxMode) -> TargetError | None:
    unshare = shutil.which("unshare")
    assert unshare is not None
    # The server runs in a PID namespace of its own with its own /proc, as sandboxing wrappers do.
    args = ("--user", "--map-root-user", "--pid", "--fork", "--mount-proc", sys.executable, str(ROOTS_READER))
    target = TargetConfig(kind=TargetKind.STDIO, command=unshare, args=args, cwd=tmp_path, sandbox=sandbox)
    return start_error(target)


def test_a_server_that_builds_its_own_namespaces_is_told_what_to_do(tmp_path: Path) -> None:
    error = _start(tmp_path, SandboxMode.AUTO)
    assert error is not None
    assert "builds a sandbox of its own (namespaces)" in error.message
    assert "\n" not in error.message
    assert error.hint is not None and error.hint.startswith('set sandbox = "off" for this server (`--sandbox off`)')
    assert "run fuzzgate itself inside that other sandbox" in error.hint
    assert error.detail is not None and "unshare: " in error.detail


def test_without_the_sandbox_the_same_server_starts(tmp_path: Path) -> None:
    assert _start(tmp_path, SandboxMode.OFF) is None
