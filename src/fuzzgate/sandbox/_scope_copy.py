"""Copying a scope dir: the jail's fallback when a scope dir cannot be overlaid, and the layer's copy
of the scope when there is no sandbox (`workspace`). Symlinks stay symlinks, dependency dirs
(`DEPENDENCY_DIRS`) become symlinks to the originals, FIFOs are recreated, sockets, devices and
what cannot be read are left out; past `MAX_SCOPE_FILES` files or `MAX_SCOPE_BYTES` it raises
`ScopeTooLarge`; `measure_scope` checks that without copying.

It imports only the standard library (and is imported by `_jail_init.py`, which the jail runs by
path with `-I -S`, before anything is mounted)."""

from __future__ import annotations

import errno
import os
import stat

MAX_SCOPE_FILES = 20_000
MAX_SCOPE_BYTES = 1 << 30
DEPENDENCY_DIRS = frozenset(
    {"node_modules", ".venv", "venv", ".tox", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
)
"""Copied as a symlink to the original: installed dependencies and caches, large and rarely the
server's to write. Writes through such a link reach the original."""


_LEFT_OUT = frozenset({errno.ENAMETOOLONG, errno.ENOENT})
"""Entries a copy leaves out: a path past PATH_MAX (a tree nested that deep) cannot be made, and
what another process removed while the copy walked (a scope is a live directory: a build's, a
test run's, `/tmp`) is no longer there to copy. Both ended the run with a traceback."""


class ScopeTooLarge(Exception):
    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


class _Tally:
    def __init__(self, root: str, skip: tuple[str, ...]) -> None:
        self.root = root
        self.skip = frozenset(skip)
        self.files = 0
        self.bytes = 0

    def add(self, size: int) -> None:
        self.files += 1
        self.bytes += size
        if self.files > MAX_SCOPE_FILES or self.bytes > MAX_SCOPE_BYTES:
            raise ScopeTooLarge(self.root)


def measure_scope(src: str, *, skip: tuple[str, ...] = ()) -> None:
    """Raise `ScopeTooLarge` when copying `src` would pass `MAX_SCOPE_FILES` or `MAX_SCOPE_BYTES`."""
    _walk(src, None, _Tally(src, skip))


def copy_scope(src: str, dst: str, *, skip: tuple[str, ...] = ()) -> None:
    """Copy the tree `src` into the directory `dst` (made if missing), keeping symlinks as symlinks,
    making dependency dirs (`DEPENDENCY_DIRS`) symlinks to the originals, recreating FIFOs and
    leaving out sockets, devices, what cannot be read, and the paths in `skip` (the copy itself,
    when it lies inside `src`). What `dst` already holds wins over the entry of `src` of the same
    name (the links a layer planted in an overlay's upper dir). Raises `ScopeTooLarge` past the caps."""
    import shutil

    os.makedirs(dst, exist_ok=True)
    _walk(src, dst, _Tally(src, (*skip, dst)))
    shutil.copystat(src, dst, follow_symlinks=False)


def _walk(top: str, top_dst: str | None, tally: _Tally) -> None:
    """Copy (or only count) `top`'s entries into `top_dst`, one directory at a time from a stack:
    a scope can nest deeper than Python's recursion. A directory's times are copied once everything
    in it is (its own writes would change them)."""
    import shutil

    stack: list[tuple[str, str | None, bool]] = [(top, top_dst, False)]
    while stack:
        src, dst, done = stack.pop()
        if done:
            if dst is not None:
                try:
                    shutil.copystat(src, dst, follow_symlinks=False)
                except OSError as exc:
                    if exc.errno not in _LEFT_OUT:
                        raise
            continue
        try:
            with os.scandir(src) as it:
                entries = list(it)
        except OSError:
            # Unreadable, or its path is past PATH_MAX: left out, as what cannot be read is.
            continue
        for entry in entries:
            if entry.path in tally.skip:
                continue
            target = os.path.join(dst, entry.name) if dst is not None else None
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            mode = info.st_mode
            planted = target is not None and os.path.lexists(target)
            if planted and not (stat.S_ISDIR(mode) and _real_dir(target)):
                continue
            try:
                if _copy_entry(entry, info, target, planted, tally):
                    stack += [(entry.path, target, True), (entry.path, target, False)]
            except OSError as exc:
                if exc.errno not in _LEFT_OUT:
                    raise


def _copy_entry(
    entry: os.DirEntry[str], info: os.stat_result, target: str | None, planted: bool, tally: _Tally
) -> bool:
    """Copy (or only count) one entry; whether it is a directory to walk into."""
    import shutil

    mode = info.st_mode
    if stat.S_ISDIR(mode):
        if entry.name in DEPENDENCY_DIRS:
            if target is not None:
                os.symlink(entry.path, target)
            return False
        tally.add(0)
        if target is not None and not planted:
            os.mkdir(target)
        return True
    if stat.S_ISREG(mode):
        tally.add(info.st_size)
        if target is not None:
            try:
                shutil.copy2(entry.path, target, follow_symlinks=False)
            except PermissionError:
                return False
    elif stat.S_ISLNK(mode):
        tally.add(0)
        if target is not None:
            os.symlink(os.readlink(entry.path), target)
    elif stat.S_ISFIFO(mode):
        tally.add(0)
        if target is not None:
            os.mkfifo(target, stat.S_IMODE(mode))
    return False


def _real_dir(path: str | None) -> bool:
    return path is not None and os.path.isdir(path) and not os.path.islink(path)
