"""`write_all`: a set of files is written whole or not at all."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from fuzzgate.model.files import write_all, write_failed
from tests.model.disk_full import fill_after


def _contents(directory: Path) -> dict[str, bytes]:
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def test_every_file_is_written_readable(tmp_path: Path) -> None:
    write_all({tmp_path / "a.json": "{}", tmp_path / "sub" / "b.xml": b"<b/>"})
    assert _contents(tmp_path) == {"a.json": b"{}", "sub/b.xml": b"<b/>"}
    assert (tmp_path / "sub" / "b.xml").stat().st_mode & 0o644 == 0o644


@pytest.mark.parametrize("room", [0, 1, 2])
def test_a_full_disk_leaves_the_old_set_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, room: int) -> None:
    write_all({tmp_path / "a": "old a", tmp_path / "b": "old b", tmp_path / "c": "old c"})
    before = _contents(tmp_path)
    fill_after(monkeypatch, room)
    with pytest.raises(OSError) as raised:
        write_all({tmp_path / "a": "new a", tmp_path / "b": "new b", tmp_path / "c": "new c"})
    assert raised.value.errno == errno.ENOSPC
    assert _contents(tmp_path) == before
    assert sorted(os.listdir(tmp_path)) == ["a", "b", "c"]


def test_a_full_disk_removes_the_directories_it_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fill_after(monkeypatch, 1)
    with pytest.raises(OSError):
        write_all({tmp_path / "out" / "t" / "report.json": "{}", tmp_path / "out" / "index.json": "{}"})
    assert os.listdir(tmp_path) == []


def test_the_error_is_one_line_naming_what_and_where(tmp_path: Path) -> None:
    error = write_failed("the outputs", tmp_path, OSError(errno.ENOSPC, "No space left on device"), hint="h")
    assert error.message == f"the outputs could not be written to {tmp_path} (No space left on device)"
    assert error.exit_code == 2
