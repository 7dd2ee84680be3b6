"""The owner of a workspace root, and the sweep of roots whose owner is gone.

A fuzzgate process killed with SIGKILL (a worker stopped hard, a CI job cancelled) cannot remove its
root. Each root holds an `owner` file (host, PID namespace, PID and the process's start time), and
every new workspace first removes the roots of owners that are gone (`sweep_stale`): workers that
come and go for weeks would otherwise fill the disk. Only roots whose owner ran on this host in this
PID namespace are judged, and only when the root and its owner file belong to this user; any other
(another user's, another container sharing the directory, an older fuzzgate that wrote no owner
file) is left alone. Nothing is followed through a symlink on the way.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from fuzzgate.sandbox.removal import remove_tree

_OWNER_FILE = "owner"


def _process_identity(pid: int) -> str | None:
    """`<pid>:<start time in clock ticks since boot>` of a live process (which tells a reused PID
    from the original), or None when there is no such process or no /proc to ask."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: fields are counted after its ")".
    fields = stat_line.rsplit(")", 1)[-1].split()
    return f"{pid}:{fields[19]}" if len(fields) > 19 else None


def _here() -> str | None:
    """This host and PID namespace, or None where there is no /proc to tell them."""
    try:
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return None
    return f"{os.uname().nodename}:{namespace}"


def write_owner(root: Path) -> None:
    here, me = _here(), _process_identity(os.getpid())
    if here is not None and me is not None:
        (root / _OWNER_FILE).write_text(f"{here} {me}\n", encoding="ascii")


def sweep_stale(base: Path) -> int:
    """Remove the workspace roots under `base` whose owner process is gone (module docstring).
    Only directories this user owns, holding an owner file this user owns, are judged: in a shared
    /var/tmp anyone can make a `fuzzgate-*` directory and write an owner file. Returns how many were
    removed; never raises."""
    here = _here()
    if here is None:
        return 0
    uid = os.geteuid()
    removed = 0
    try:
        with os.scandir(base) as it:
            roots = [entry for entry in it if entry.name.startswith("fuzzgate-")]
    except OSError:
        return 0
    for root in roots:
        try:
            info = root.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid:
            continue
        text = _read_owner(root.path, info, uid)
        owner = text.split() if text is not None else []
        if len(owner) != 2 or owner[0] != here or not owner[1].partition(":")[0].isdigit():
            continue
        pid = int(owner[1].partition(":")[0])
        if _process_identity(pid) == owner[1]:
            continue
        try:
            remove_tree(Path(root.path))
            removed += 1
        except OSError:
            continue
    return removed


def _read_owner(root: str, info: os.stat_result, uid: int) -> str | None:
    """The owner file of the directory `root` (as `info` saw it), when it is a regular file owned by
    `uid`; None otherwise. Nothing is followed through a link, and a FIFO does not block."""
    try:
        directory = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        if not os.path.samestat(os.fstat(directory), info):
            return None
        fd = os.open(_OWNER_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=directory)
        try:
            owner = os.fstat(fd)
            if not stat.S_ISREG(owner.st_mode) or owner.st_uid != uid:
                return None
            return os.read(fd, 4096).decode("ascii")
        finally:
            os.close(fd)
    except (OSError, UnicodeDecodeError):
        return None
    finally:
        os.close(directory)
