"""How much memory a server holds: the resident memory of its process and everything below it.

A server that grows without bound on one input takes the memory of the machine it runs on, and
with it the CI runner fuzzgate shares that machine with (the kernel's OOM killer may pick fuzzgate
itself). libFuzzer's answer is a thread that reads its own RSS every second and ends the run past
`-rss_limit_mb` (2048 by default); fuzzgate's is `OwnedProcess.watch_memory`, which reads this
every `POLL_S` while a server runs and stops the server past `[fuzzgate] memory_limit`, and the call
pending then is an `out_of_memory` finding.

What is counted: the resident set (`/proc/PID/statm`, its second field) of the server's process and
of every process below it (a launcher such as `npx` or `uv run` and the server it starts; in the
sandbox, the jail's own small init too). Pages two of them share are counted twice, which errs
towards the limit by a few MiB of shared libraries. Below it is found through each thread's
`/proc/PID/task/TID/children` (a kernel with `CONFIG_PROC_CHILDREN`, as every common distribution
has), else from the whole process table, read again every `REFRESH_POLLS` polls only.

Hand-written rather than psutil, for the reason `process_tree` gives: a few /proc files, read the
same way the rest of the package reads them, and no compiled dependency. Linux only: elsewhere there
is no /proc and no limit is enforced (the docs say so).
"""

from __future__ import annotations

import os
import sys

from fuzzgate.sandbox.process_tree import ProcessTable

POLL_S = 0.05
"""How often a running server's memory is read: a process filling pages as fast as the kernel
gives them (a few GiB a second) gets a few hundred MiB past the limit at most before it is stopped."""
REFRESH_POLLS = 10
"""Which processes are below the server is looked up again every this many polls (0.5 s): a child
started since is counted from then on."""

AVAILABLE = sys.platform.startswith("linux")
_PAGE = os.sysconf("SC_PAGE_SIZE") if AVAILABLE else 4096


class Resident:
    """The resident memory of the process `pid` and of every process below it, read anew on each
    `read`; the processes below are looked up again every `REFRESH_POLLS` reads."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._members: tuple[int, ...] = (pid,)
        self._reads = 0

    def read(self) -> int:
        """Bytes resident in the process tree now (0 once every process of it is gone)."""
        if self._reads % REFRESH_POLLS == 0:
            self._members = tuple(below(self.pid))
        self._reads += 1
        return sum(resident_bytes(pid) for pid in self._members)


def resident_bytes(pid: int) -> int:
    """The resident set of one process in bytes; 0 if it is gone (or a zombie: nothing resident)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as handle:
            fields = handle.read().split()
        return int(fields[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


def below(pid: int) -> list[int]:
    """`pid` and every process below it, parents before children; [pid] alone if /proc has none of it."""
    found = [pid]
    todo = [pid]
    while todo:
        children = _children(todo.pop())
        if children is None:
            return sorted(ProcessTable.read().descendants({pid}) | {pid})
        for child in children:
            if child not in found:
                found.append(child)
                todo.append(child)
    return found


def _children(pid: int) -> list[int] | None:
    """The children of `pid`, from its threads' `children` files; [] if it is gone; None when the
    kernel has no such files (then the caller reads the whole process table)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    children: list[int] = []
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as handle:
                children.extend(int(word) for word in handle.read().split())
        except FileNotFoundError:
            if not os.path.exists(f"/proc/{pid}/task/{tid}"):
                continue  # the thread ended since the listing
            return None
        except (OSError, ValueError):
            continue
    return children
