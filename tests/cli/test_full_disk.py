"""`init` and `report` on a full disk: one line naming what and where (exit 2), never a traceback,
and the file that was there before left as it was."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from rich.console import Console

from fuzzgate.cli.main import build_parser
from fuzzgate.cli.report import report_command
from fuzzgate.model.errors import ExitCode, UsageError
from tests.model.disk_full import fill_after


def test_init_on_a_full_disk_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "fuzzgate.toml"
    path.write_text("# mine\n")
    ns = build_parser().parse_args(["init", str(path), "--force"])
    fill_after(monkeypatch, 0)
    with pytest.raises(UsageError) as raised:
        ns.handler(ns, Console(record=True))
    assert raised.value.message == f"the config file could not be written to {path} (No space left on device)"
    assert raised.value.exit_code == ExitCode.USAGE
    assert path.read_text() == "# mine\n"
    assert os.listdir(tmp_path) == ["fuzzgate.toml"]


def test_report_on_a_full_disk_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "store"
    store.mkdir()
    out = tmp_path / "site" / "report.html"
    out.parent.mkdir()
    out.write_text("old page")
    fill_after(monkeypatch, 0)
    with pytest.raises(UsageError) as raised:
        report_command(Console(record=True), str(store), out)
    assert raised.value.message == f"the page could not be written to {out} (No space left on device)"
    assert raised.value.exit_code == ExitCode.USAGE
    assert out.read_text() == "old page"
    assert os.listdir(out.parent) == ["report.html"]
