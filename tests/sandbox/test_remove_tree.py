"""`remove_tree` against a directory swapped for a symlink while it walks (another user's race in a
shared /var/tmp): it never changes what the link points at."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fuzzgate.sandbox.removal import remove_tree


def test_a_directory_swapped_for_a_link_mid_walk_is_not_chmodded_through_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, victim = tmp_path / "fuzzgate-stale", tmp_path / "victim"
    (root / "d" / "deeper").mkdir(parents=True)
    (root / "d").chmod(0o500)
    victim.mkdir()
    victim.chmod(0o500)
    real_scandir = os.scandir
    swapped: list[bool] = []

    def scandir_then_swap(path: Any) -> Iterator[os.DirEntry[str]]:
        entries = list(real_scandir(path))
        if not swapped:
            # The race: right after `d` was listed as a directory, it becomes a link to the victim.
            swapped.append(True)
            os.rename(root / "d", root / "moved")
            os.symlink(victim, root / "d")
        return _Listing(entries)

    monkeypatch.setattr(os, "scandir", scandir_then_swap)
    remove_tree(root)
    monkeypatch.undo()
    assert swapped
    assert stat.S_IMODE(victim.stat().st_mode) == 0o500
    assert not root.exists()


class _Listing:
    """What `os.scandir` returns: iterable, and a context manager."""

    def __init__(self, entries: list[os.DirEntry[str]]) -> None:
        self._entries = entries

    def __iter__(self) -> Iterator[os.DirEntry[str]]:
        return iter(self._entries)

    def __enter__(self) -> _Listing:
        return self

    def __exit__(self, *_exc: object) -> None:
        return None
