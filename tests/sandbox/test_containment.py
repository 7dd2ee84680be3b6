"""The containment line a report shows: how the server was contained, and what it then does not see."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fuzzgate.config.model import SandboxMode, TargetConfig, TargetKind
from fuzzgate.sandbox import jail
from fuzzgate.sandbox.containment import contain


def _summary(cwd: Path, scope: tuple[Path, ...]) -> str:
    target = TargetConfig(kind=TargetKind.STDIO, command=sys.executable, cwd=cwd, scope=scope, sandbox=SandboxMode.OFF)
    containment = contain(target, 1)
    assert containment is not None
    try:
        return containment.summary
    finally:
        containment.close()


def test_a_working_directory_outside_a_configured_scope_is_said(tmp_path: Path) -> None:
    data, work = tmp_path / "data", tmp_path / "work"
    data.mkdir()
    work.mkdir()
    outside = _summary(work, (data,))
    assert outside.startswith('not sandboxed (sandbox = "off")')
    assert f"its working directory {work} is outside the scope: it runs there as is" in outside
    assert "outside the scope: it runs there" not in _summary(work, (work,))


def _contained_line(tmp_path: Path, sandbox: SandboxMode, kind: TargetKind = TargetKind.STDIO) -> str:
    target = TargetConfig(
        kind=kind, command=sys.executable, cwd=tmp_path, sandbox=sandbox, url="http://127.0.0.1:1/mcp"
    )
    containment = contain(target, 1)
    assert containment is not None
    try:
        return containment.summary
    finally:
        containment.close()


def test_without_the_sandbox_the_line_says_the_network_is_not_contained(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    off = _contained_line(tmp_path, SandboxMode.OFF)
    assert "the network is not contained" in off
    # Where no sandbox can run (here: no unshare on PATH), the same words.
    monkeypatch.setenv("PATH", str(tmp_path))
    fallen_back = _contained_line(tmp_path, SandboxMode.AUTO)
    assert fallen_back.startswith("not sandboxed (unshare not found on PATH"), fallen_back
    assert "the network is not contained" in fallen_back


@pytest.mark.skipif(jail.sandbox_unavailable() is not None, reason="the sandbox does not work here")
def test_the_sandboxed_line_says_what_the_server_cannot_reach(tmp_path: Path) -> None:
    line = _contained_line(tmp_path, SandboxMode.AUTO)
    assert line.startswith("sandboxed: ") and "network its own loopback only" in line
    assert "no host devices or Unix sockets (a minimal /dev, an empty /run)" in line
    # An HTTP server fuzzgate starts keeps a loopback of its own too, reached through the relay.
    http = _contained_line(tmp_path, SandboxMode.AUTO, TargetKind.HTTP)
    assert "network its own loopback only (fuzzgate reaches it through a Unix socket relay)" in http
    assert "SSRF listener on its loopback" in http


@pytest.mark.parametrize("sandbox", [SandboxMode.OFF, SandboxMode.AUTO])
def test_a_working_directory_that_does_not_exist_is_a_start_error_naming_the_setting(
    tmp_path: Path, sandbox: SandboxMode
) -> None:
    # It ended `run` and `tools` with a traceback (FileNotFoundError copying the scope) without the
    # sandbox, and with a three-line overlay failure in it.
    from fuzzgate.model.errors import TargetError

    (tmp_path / "a-file").write_text("")
    for cwd, what in ((tmp_path / "missing", "does not exist"), (tmp_path / "a-file", "is not a directory")):
        target = TargetConfig(kind=TargetKind.STDIO, command=sys.executable, cwd=cwd, sandbox=sandbox)
        with pytest.raises(TargetError, match=rf"its working directory \(\[target\] cwd\) {what}$"):
            contain(target, 1)
