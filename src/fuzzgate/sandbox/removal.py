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
    try:
        shutil.rmtree(path, ignore_errors=True)
    except RecursionError:
        # Python 3.11's rmtree recurses once per level: a server can nest deeper than that.
        _remove_deep(path)
    if os.path.lexists(path):
        shutil.rmtree(path)


def _remove_deep(top: Path) -> None:
    """Remove `top`'s tree one level at a time, holding one directory open: deeper than Python's
    recursion and than PATH_MAX (each step is relative to its parent's descriptor, and the way back
    up is that directory's `..`, which cannot be a symlink). Written by hand because the standard
    library's removals recurse per level on 3.11."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    names: list[str] = []
    try:
        while True:
            child = None
            with os.scandir(fd) as it:
                for entry in it:
                    if entry.is_dir(follow_symlinks=False):
                        child = entry.name
                        break
                    os.unlink(entry.name, dir_fd=fd)
            if child is not None:
                down = os.open(child, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                os.close(fd)
                fd = down
                names.append(child)
                continue
            if not names:
                break
            up = os.open("..", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = up
            os.rmdir(names.pop(), dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(top)


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
