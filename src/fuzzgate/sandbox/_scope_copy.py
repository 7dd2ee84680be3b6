"""Copying a scope dir: the jail's fallback when a scope dir cannot be overlaid, and the layer's copy
of the scope when there is no sandbox (`workspace`). Symlinks stay symlinks, dependency dirs
(`DEPENDENCY_DIRS`) become symlinks to the originals, FIFOs are recreated, sockets, devices and
what cannot be read are left out; past `MAX_SCOPE_FILES` files or `MAX_SCOPE_BYTES` it raises
`ScopeTooLarge`; `measure_scope` checks that without copying.

It imports only the standard library (and is imported by `_jail_init.py`, which the jail runs by
path with `-I -S`, before anything is mounted)."""

from __future__ import annotations

import os
import stat

MAX_SCOPE_FILES = 20_000
MAX_SCOPE_BYTES = 1 << 30
DEPENDENCY_DIRS = frozenset(
    {"node_modules", ".venv", "venv", ".tox", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
)
"""Copied as a symlink to the original: installed dependencies and caches, large and rarely the
server's to write. Writes through such a link reach the original."""


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


def _walk(src: str, dst: str | None, tally: _Tally) -> None:
    import shutil

    try:
        with os.scandir(src) as it:
            entries = list(it)
    except PermissionError:
        return
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
        if stat.S_ISDIR(mode):
            if entry.name in DEPENDENCY_DIRS:
                if target is not None:
                    os.symlink(entry.path, target)
                continue
            tally.add(0)
            if target is not None and not planted:
                os.mkdir(target)
            _walk(entry.path, target, tally)
            if target is not None:
                shutil.copystat(entry.path, target, follow_symlinks=False)
        elif stat.S_ISREG(mode):
            tally.add(info.st_size)
            if target is not None:
                try:
                    shutil.copy2(entry.path, target, follow_symlinks=False)
                except PermissionError:
                    continue
        elif stat.S_ISLNK(mode):
            tally.add(0)
            if target is not None:
                os.symlink(os.readlink(entry.path), target)
        elif stat.S_ISFIFO(mode):
            tally.add(0)
            if target is not None:
                os.mkfifo(target, stat.S_IMODE(mode))


def _real_dir(path: str | None) -> bool:
    return path is not None and os.path.isdir(path) and not os.path.islink(path)
