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


def _nest(top: Path, depth: int) -> None:
    """`depth` directories inside each other under `top`, each with a file, made relative to the
    one above (the whole path is longer than PATH_MAX)."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        down = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = down
        os.close(os.open("f", os.O_WRONLY | os.O_CREAT, 0o400, dir_fd=fd))
    os.close(fd)


def test_a_tree_deeper_than_pythons_recursion_and_path_max_is_removed(tmp_path: Path) -> None:
    # A server nested 3,000 directories in its layer: Python 3.11's rmtree raised RecursionError,
    # the run ended with exit 4 and no report, and every later run's sweep of stale layers did too.
    root = tmp_path / "fuzzgate-deep"
    root.mkdir()
    _nest(root, 3000)
    remove_tree(root)
    assert not root.exists()


def test_a_scope_nested_past_path_max_is_copied_as_far_as_paths_go(tmp_path: Path) -> None:
    # Without the sandbox each server start copies the scope; a tree 3,000 directories deep ended the
    # run with a traceback (RecursionError, then "File name too long").
    from fuzzgate.sandbox._scope_copy import copy_scope

    scope, copy = tmp_path / "scope", tmp_path / "copy"
    scope.mkdir()
    (scope / "top.txt").write_text("kept\n")
    _nest(scope, 3000)
    try:
        copy_scope(str(scope), str(copy))
        assert (copy / "top.txt").read_text() == "kept\n"
        assert (copy / "d" / "d" / "f").exists()
    finally:
        # Not left to pytest's own clean-up, which recurses per level too.
        remove_tree(scope)
        remove_tree(copy)


def test_what_vanishes_while_the_scope_is_copied_is_left_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scope is a live directory: another process removed a file (and a directory) between the
    copy's listing and its copying, and `fuzzgate tools` in `/tmp` ended with a traceback, exit 4."""
    import shutil

    from fuzzgate.sandbox import _scope_copy

    scope = tmp_path / "scope"
    (scope / "gone_dir").mkdir(parents=True)
    (scope / "gone_dir" / "inner.txt").write_text("x")
    (scope / "gone.txt").write_text("x")
    (scope / "kept.txt").write_text("kept")
    real_copy2, real_copystat = shutil.copy2, shutil.copystat

    def copy2(src: str, dst: str, **kwargs: Any) -> Any:
        if src.endswith("gone.txt"):
            os.unlink(src)  # removed after it was listed
        return real_copy2(src, dst, **kwargs)

    def copystat(src: str, dst: str, **kwargs: Any) -> Any:
        if src.endswith("gone_dir"):
            shutil.rmtree(src)  # removed once its entries were copied
        return real_copystat(src, dst, **kwargs)

    monkeypatch.setattr(shutil, "copy2", copy2)
    monkeypatch.setattr(shutil, "copystat", copystat)
    copy = tmp_path / "copy"
    _scope_copy.copy_scope(str(scope), str(copy))
    assert (copy / "kept.txt").read_text() == "kept"
    assert not (copy / "gone.txt").exists()
