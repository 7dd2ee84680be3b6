"""Every process a server starts dies with it: finding a server's whole process tree, and killing it.

Signalling the server's process group is not enough. A child that calls `setsid()` or `setpgid()`
leaves the group, and a double-forked daemon leaves its parent too: the SDK's own stdio client
leaves both behind. On Linux fuzzgate therefore does this:

- **Subreaper.** The CLI makes its process a child subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`,
  `become_subreaper`), so a process whose parent dies is re-parented to fuzzgate instead of to
  init: it stays visible as fuzzgate's child, and its exit status is fuzzgate's to collect.
- **Finding a tree.** `ProcessTree` reads /proc: the server, its descendants by parent id, and every
  process in its session (the server is started as a session leader, and the kernel never reuses a
  session id while a member lives, so session membership survives the server's death; parent links
  do not, which is why the tree is remembered while the server still runs).
- **Killing.** Everything found is SIGSTOPped, and /proc is read again until no new process appears
  and all are stopped (a stopped process cannot fork, and keeps its parent link), then all are
  SIGKILLed. The ones that were re-parented to fuzzgate are reaped with `waitpid` on their own pids:
  the processes anyio and `subprocess` wait for are never waited for here (their status would be
  stolen).
- **Orphans.** A process re-parented to fuzzgate no longer says which server it came from. It is
  killed when no server is running (`kill_orphans`): at once while fuzzing, where one server runs at
  a time, and after the last of the concurrent replays otherwise. A burial that comes while another
  server is starting leaves them to that start: it kills them at its own burial, or at once if it
  fails or is cancelled (`OwnedProcess.start`). The CLI kills whatever orphans are left as it ends
  (`kill_orphans(last=True)`). Fuzzgate's own children (servers and the generation worker) are
  registered in `CUSTODY` and never taken for orphans.

Elsewhere (macOS, the BSDs) there is neither /proc nor a subreaper: only the server's process group
is signalled (by `ServerProcess.stop`), and a process that left it survives.

Not used: a PID namespace or a cgroup (`cgroup.kill`) per server would also contain a process that
double-forks and drops every trace of its origin, but both need privileges that a GitHub Docker
action or an unprivileged CI user does not have.

Why hand-written rather than psutil: psutil would read the same /proc files, but none of the parts
that matter are in it (the subreaper, freezing before killing, reaping only orphans, sessions of
dead leaders), and fuzzgate would carry a compiled dependency for a few dozen lines of /proc parsing.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field

import anyio

_PR_SET_CHILD_SUBREAPER = 36
_FREEZE_ROUNDS = 50
_SETTLE_S = 0.005
_KILL_DEADLINE_S = 2.0
"""How long killed processes are given to die and be reaped; a process in uninterruptible sleep
(a hung NFS mount) may outlast it, and fuzzgate does not wait for it beyond that."""
_STOPPED_OR_DEAD = frozenset("tTZX")
"""`/proc/PID/stat` states: stopped by a signal, stopped by tracing, zombie, dead."""
_HAS_PROC = sys.platform.startswith("linux")


@dataclass(frozen=True, slots=True)
class ProcessInfo:
    """One line of /proc/PID/stat, the fields that matter here."""

    pid: int
    ppid: int
    sid: int
    state: str
    start: int
    """Start time in clock ticks since boot: with the pid, names one process even if the pid is reused."""


@dataclass(frozen=True, slots=True)
class ProcessTable:
    """A snapshot of every process visible in /proc (empty where there is no /proc)."""

    processes: dict[int, ProcessInfo] = field(default_factory=dict)

    @classmethod
    def read(cls) -> ProcessTable:
        if not _HAS_PROC:
            return cls()
        processes = {}
        for name in os.listdir("/proc"):
            if name.isdigit() and (info := _read_stat(int(name))) is not None:
                processes[info.pid] = info
        return cls(processes)

    def same(self, pid: int, start: int) -> bool:
        """Whether `pid` is still the process that started at `start`."""
        info = self.processes.get(pid)
        return info is not None and info.start == start

    def descendants(self, roots: set[int]) -> set[int]:
        """`roots` that exist, and every process below them."""
        children: dict[int, list[int]] = {}
        for info in self.processes.values():
            children.setdefault(info.ppid, []).append(info.pid)
        found = {pid for pid in roots if pid in self.processes}
        todo = list(found)
        while todo:
            for child in children.get(todo.pop(), ()):
                if child not in found:
                    found.add(child)
                    todo.append(child)
        return found


def _read_stat(pid: int) -> ProcessInfo | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            raw = handle.read()
    except OSError:
        return None  # it exited since /proc was listed
    # The command name is in parentheses and may itself contain spaces and parentheses.
    fields = raw[raw.rfind(b")") + 2 :].split()
    try:
        return ProcessInfo(
            pid=pid,
            state=fields[0].decode(),
            ppid=int(fields[1]),
            sid=int(fields[3]),
            start=int(fields[19]),
        )
    except (IndexError, ValueError):
        return None


class Custody:
    """This process's own children (servers, the generation worker), which are never orphans and
    never reaped here, and whether orphans may be killed right now. Thread-safe: the generation
    worker is started from a thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._own: dict[int, bool] = {}
        self._starting = 0
        self._starts = 0
        self.subreaper = False

    @contextmanager
    def starting(self) -> Iterator[None]:
        """Wrap starting an own child, up to `adopt`: until then it would look like an orphan."""
        with self._lock:
            self._starting += 1
            self._starts += 1
        try:
            yield
        finally:
            with self._lock:
                self._starting -= 1

    def adopt(self, pid: int, *, server: bool) -> None:
        with self._lock:
            self._own[pid] = server

    def release(self, pid: int) -> None:
        """Once `pid` has been waited for by its owner, and is no longer this process's child."""
        with self._lock:
            self._own.pop(pid, None)

    def owns(self, pid: int) -> bool:
        with self._lock:
            return pid in self._own

    def quiet(self, *, last: bool = False) -> int | None:
        """A token if orphans may be killed now (a subreaper, no server running, no child being
        started; at the `last`, a subreaper is enough), else None. The same token after reading
        /proc means nothing was started since."""
        with self._lock:
            busy = not last and (self._starting or any(self._own.values()))
            return None if busy or not self.subreaper else self._starts

    def _forget(self) -> None:
        """In a forked child: the parent's children are not its own, and it is no subreaper."""
        self._lock = threading.Lock()
        self._own = {}
        self._starting = 0
        self.subreaper = False


CUSTODY = Custody()
os.register_at_fork(after_in_child=CUSTODY._forget)


def become_subreaper() -> bool:
    """Make this process the child subreaper of everything it starts (Linux 3.4+); once, at the
    start of the process that owns servers. Returns whether it is one."""
    if CUSTODY.subreaper or not _HAS_PROC:
        return CUSTODY.subreaper
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        CUSTODY.subreaper = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        CUSTODY.subreaper = False
    return CUSTODY.subreaper


class ProcessTree:
    """The processes one server started. `remember` while it runs, `kill` when it is stopped."""

    def __init__(self, leader: int) -> None:
        self.leader = leader
        self._members: dict[int, int] = {}

    def remember(self) -> None:
        """Record the tree as it is now: parent links are lost when a parent dies."""
        self._find(ProcessTable.read())

    async def kill(self) -> None:
        """Stop, kill and reap every process of the tree, the server included."""
        await _kill(self._find)

    def _find(self, table: ProcessTable) -> set[int]:
        roots = {pid for pid, start in self._members.items() if table.same(pid, start)}
        # The leader is a session leader: while it runs it is in this set too.
        roots |= {info.pid for info in table.processes.values() if info.sid == self.leader}
        found = table.descendants(roots)
        self._members.update((pid, table.processes[pid].start) for pid in found)
        return found


async def kill_orphans(*, last: bool = False) -> None:
    """Kill and reap every process re-parented to this one, if no server is running (see above).
    `last`: once the process is done with servers (the CLI's end), whatever custody still says: a
    server whose reaping outlasted its burial's wait stays in custody, and would otherwise hold
    back the orphans of every later burial until they outlive fuzzgate."""
    token = CUSTODY.quiet(last=last)
    if token is None:
        return
    table = ProcessTable.read()
    if CUSTODY.quiet(last=last) != token:
        return
    me = os.getpid()
    orphans = {pid: info.start for pid, info in table.processes.items() if info.ppid == me and not CUSTODY.owns(pid)}
    if not orphans:
        return

    def find(table: ProcessTable) -> set[int]:
        # Only the orphans seen above and what hangs below them: a child started since is not one.
        return table.descendants({pid for pid, start in orphans.items() if table.same(pid, start)})

    await _kill(find)


async def _kill(find: Callable[[ProcessTable], set[int]]) -> None:
    """SIGSTOP what `find` returns until the set stops growing, SIGKILL it all, reap this process's
    orphans among it. Shielded and bounded: a half-done freeze would leave processes stopped forever."""
    if not _HAS_PROC:
        return
    with anyio.CancelScope(shield=True):
        me = os.getpid()
        frozen: dict[int, int] = {}
        for _ in range(_FREEZE_ROUNDS):
            table = ProcessTable.read()
            found = find(table) - {me}
            fresh = found - frozen.keys()
            for pid in fresh:
                _signal(pid, signal.SIGSTOP)
                frozen[pid] = table.processes[pid].start
            if not fresh and all(table.processes[pid].state in _STOPPED_OR_DEAD for pid in found):
                break
            await anyio.sleep(_SETTLE_S)
        for pid in frozen:
            _signal(pid, signal.SIGKILL)
        deadline = anyio.current_time() + _KILL_DEADLINE_S
        while True:
            table = ProcessTable.read()
            found = (find(table) | {pid for pid, start in frozen.items() if table.same(pid, start)}) - {me}
            alive = [pid for pid in found if table.processes[pid].state not in "ZX"]
            for pid in alive:
                _signal(pid, signal.SIGKILL)
            ours = [pid for pid in found if table.processes[pid].ppid == me and not CUSTODY.owns(pid)]
            unreaped = [pid for pid in ours if not _reap(pid)]
            if (not alive and not unreaped) or anyio.current_time() > deadline:
                return
            await anyio.sleep(_SETTLE_S)


def _signal(pid: int, sig: signal.Signals) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def _reap(pid: int) -> bool:
    """Collect the exit status of an orphan that is this process's child; True once it is gone."""
    try:
        reaped, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return reaped == pid
