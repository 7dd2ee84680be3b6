"""Removing a tree a server worked in, whatever it did to it (read-only or unreadable directories,
read-only files, FIFOs), never following a symlink, not even one swapped in for a directory while
it is being removed."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path


def remove_tree(path: Path) -> None:
    """Remove `path` and everything in it, whatever a server did to it: read-only or unreadable
    dirs, read-only files, FIFOs. Symlinks are removed, never followed."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        path.unlink()
        return
    _make_searchable(str(path))
    shutil.rmtree(path, ignore_errors=True)
    if os.path.lexists(path):
        shutil.rmtree(path)


_O_PATH = getattr(os, "O_PATH", 0)
_DIR_FLAGS = (_O_PATH or os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW
"""How `_make_searchable` opens a directory: never through a symlink (O_NOFOLLOW with O_DIRECTORY
fails on one), and with O_PATH where there is one, which needs no read permission."""


def _make_searchable(top: str) -> None:
    """Give every directory under `top` rwx for its owner, so it can be listed and emptied.

    Each directory is opened relative to its parent's descriptor, never following a link, and
    changed through that descriptor: a directory swapped for a symlink meanwhile (another user's
    race in a shared /var/tmp) is skipped, never chmod'ed through the link."""
    try:
        first = os.open(top, _DIR_FLAGS)
    except OSError:
        return
    stack = [first]
    while stack:
        fd = stack.pop()
        try:
            names = _searchable_children(fd)
        except OSError:
            continue
        finally:
            os.close(fd)
        for parent, name in names:
            try:
                stack.append(os.open(name, _DIR_FLAGS, dir_fd=parent))
            except OSError:
                continue
        for parent in {parent for parent, _name in names}:
            os.close(parent)


def _searchable_children(fd: int) -> list[tuple[int, str]]:
    """Make the directory open at `fd` rwx for its owner; its subdirectories, each as (a descriptor
    of this directory, which the caller closes, name)."""
    if _O_PATH:
        # An O_PATH descriptor cannot be fchmod'ed or listed; its /proc link is the same directory.
        os.chmod(f"/proc/self/fd/{fd}", 0o700)
        listing = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_DIRECTORY)
    else:
        os.fchmod(fd, 0o700)
        listing = os.dup(fd)
    try:
        with os.scandir(listing) as it:
            names = [entry.name for entry in it if entry.is_dir(follow_symlinks=False)]
    except OSError:
        os.close(listing)
        raise
    if not names:
        os.close(listing)
        return []
    return [(listing, name) for name in names]
