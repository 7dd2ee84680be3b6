"""The containment line a report shows: how the server was contained, and what it then does not see."""

from __future__ import annotations

import sys
from pathlib import Path

from fuzzgate.config.model import Config, SandboxMode, TargetConfig, TargetKind
from fuzzgate.target.containment import contain


def _summary(cwd: Path, scope: tuple[Path, ...]) -> str:
    target = TargetConfig(kind=TargetKind.STDIO, command=sys.executable, cwd=cwd, scope=scope, sandbox=SandboxMode.OFF)
    containment = contain(Config(target=target), 1)
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
