"""`at_base`: the target as started from the base revision."""

from __future__ import annotations

from pathlib import Path

from fuzzgate.config.model import TargetConfig, TargetKind
from fuzzgate.config.rebase import at_base


def test_paths_in_the_repository_move_to_the_base_and_the_others_stay(tmp_path: Path) -> None:
    head, base = tmp_path / "head", tmp_path / "base"
    target = TargetConfig(
        kind=TargetKind.STDIO,
        command=str(head / ".venv/bin/server"),
        args=("serve.py", f"--root={head}/data", str(head / "conf.yml"), "/usr/share/x", "--verbose"),
        cwd=head / "srv",
        env={"PYTHONPATH": f"{head}/src:/opt/lib", "TOKEN": "secret"},
        coverage_source=(str(head / "src"), "mypkg"),
    )
    moved = at_base(target, (head, Path("/var/data")), head, base)
    assert moved.command == str(base / ".venv/bin/server")
    assert moved.args == ("serve.py", f"--root={base}/data", str(base / "conf.yml"), "/usr/share/x", "--verbose")
    assert moved.cwd == base / "srv"
    assert moved.scope == (base, Path("/var/data"))
    assert moved.env == {"PYTHONPATH": f"{base}/src:/opt/lib", "TOKEN": "secret"}
    assert moved.coverage_source == (str(base / "src"), "mypkg")


def test_a_base_inside_the_repository_is_not_moved_again(tmp_path: Path) -> None:
    head = tmp_path / "ws"
    base = head / "base"
    args = (str(base / "x.py"), str(head / "y.py"))
    target = TargetConfig(kind=TargetKind.STDIO, command="python", args=args, cwd=head)
    moved = at_base(target, (head,), head, base)
    assert moved.args == (str(base / "x.py"), str(base / "y.py"))
    assert moved.cwd == base
