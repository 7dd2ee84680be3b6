"""A server process fuzzgate starts and owns, whatever it speaks on: how it is started, what it
logged, and its death.

Two kinds of server share this: a stdio server (`target.stdio.ServerProcess`, whose stdin and
stdout are the protocol channel) and the process serving an HTTP target
(`target.http_server.ServedProcess`, whose stdout is only more logs). Either way the process lives
in a session of its own, is registered in `CUSTODY` while it runs, and dies with everything it
started on every exit path (`process_tree`).

What the server writes is kept raw for the oracles, except a line too long to keep: it loses its
end, where a known secret may have been cut in two, so that end is redacted here, the only place
that sees the whole line.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections import deque
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import anyio
import anyio.lowlevel
from anyio.abc import ByteReceiveStream, Process
from anyio.streams.buffered import BufferedByteReceiveStream

from fuzzgate.check.secrets import Redactor
from fuzzgate.model.outcome import MemoryExceeded
from fuzzgate.sandbox import resident
from fuzzgate.sandbox.process_tree import CUSTODY, ProcessTree, kill_orphans

if TYPE_CHECKING:
    from fuzzgate.sandbox.early import Early

STDERR_KEEP_LINES = 20_000
STDERR_LINE_BYTES = 1024 * 1024
"""Of a longer stderr line only this much is kept; the rest, up to its newline, is dropped."""

STREAM_ENDS = (anyio.EndOfStream, anyio.IncompleteRead, anyio.ClosedResourceError, anyio.BrokenResourceError)
_TERM_GRACE_S = 0.5
_KILL_GRACE_S = 1.0
_DRAIN_S = 0.5
"""How long the readers of a dead server's pipes may take to reach their end before reading stops."""


@dataclass(slots=True)
class LineLog:
    """An append-only log with a running index, keeping only the newest lines.

    Callers remember `mark()` before a call and read `since(mark)` after it, which is how stderr
    and wire anomalies are attributed to the call that was pending when they appeared.
    """

    keep: int = STDERR_KEEP_LINES
    _lines: deque[str] = field(default_factory=deque)
    _count: int = 0

    def append(self, line: str) -> None:
        self._lines.append(line)
        self._count += 1
        if len(self._lines) > self.keep:
            self._lines.popleft()

    def mark(self) -> int:
        return self._count

    def since(self, mark: int) -> list[str]:
        available = min(self._count - mark, len(self._lines))
        if available <= 0:
            return []
        return list(self._lines)[-available:]

    def tail(self, n: int) -> list[str]:
        return list(self._lines)[-n:]


@dataclass(frozen=True, slots=True)
class LaunchSpec:
    """How to start a server: its command line, environment and working directory."""

    command: str
    args: tuple[str, ...]
    env: dict[str, str]
    cwd: Path | None
    pass_fds: tuple[int, ...] = ()
    """File descriptors the server inherits besides its stdio (the coverage collector's pipes)."""


class OwnedProcess:
    """One running server: its stderr log and its death. Subclasses add their channels."""

    stdin: ClassVar[int] = subprocess.PIPE
    """What the server's stdin is: a pipe fuzzgate writes to (stdio), or /dev/null."""

    def __init__(self, spec: LaunchSpec, redact: Redactor | None = None) -> None:
        self.spec = spec
        self.redact = redact if redact is not None else Redactor(())
        self.stderr = LineLog()
        """What the server logged, line by line (for a served HTTP server, its stdout too)."""
        self._process: Process | None = None
        self._tree: ProcessTree | None = None
        self._burying = anyio.Lock()
        self._buried = False
        self._stopping = False
        self.killed_by_us = False
        """fuzzgate decided to stop it (a restart, the end of a run): its end is not a crash."""
        self.stderr_closed = anyio.Event()
        """Set once everything the server logged has been read (its log pipes ended)."""
        self.early: Early | None = None
        """The process `start` takes over instead of starting one: started from this `spec` before
        the event loop ran (`sandbox.early`)."""
        self.memory_limit: int | None = None
        """The most resident memory its process tree may hold (`watch_memory`); None: no limit."""
        self.over_memory: MemoryExceeded | None = None
        """Set when `watch_memory` stopped it past `memory_limit`: its end is that, not a crash."""
        self.peak_memory = 0
        """The most resident memory `watch_memory` read its process tree holding, bytes."""

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    @property
    def returncode(self) -> int | None:
        return self._process.returncode if self._process else None

    async def start(self) -> None:
        """Start the process in a session of its own, stdout and stderr piped (or take over the
        `early` one, started so already)."""
        if self.early is not None:
            from fuzzgate.sandbox.early import EarlyProcess

            self._process = EarlyProcess(self.early.take())
            self._tree = ProcessTree(self._process.pid)
            return
        try:
            with CUSTODY.starting():
                self._process = await anyio.open_process(
                    [self.spec.command, *self.spec.args],
                    stdin=self.stdin,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env=self.spec.env,
                    cwd=self.spec.cwd,
                    start_new_session=True,
                    pass_fds=self.spec.pass_fds,
                )
                CUSTODY.adopt(self._process.pid, server=True)
        except BaseException:
            # A server buried while this start ran left its orphans alive (they cannot be told from
            # the child being started). One that started would kill them at its own burial; this
            # one never will, so it does now (a spare cancelled at the run's end was the last start).
            with anyio.CancelScope(shield=True):
                await kill_orphans()
            raise
        self._tree = ProcessTree(self._process.pid)

    def drained(self) -> bool:
        """Whether every pipe fuzzgate reads has reached its end."""
        return self.stderr_closed.is_set()

    async def outlive(self) -> None:
        """When the server exits by itself, kill what it started at once: a grandchild holding its
        pipes open would otherwise keep a crashed call waiting for a reply or for the server's last
        stderr words. One that escaped (without /proc, or an orphan left until no server runs) may
        still hold them: the dead server's own output is all in the pipes by now, so once the
        readers had a moment to drain them, reading stops and the session sees the connection close."""
        process = self._process
        assert process
        await process.wait()
        if self._stopping:
            return
        await self._bury()
        with anyio.move_on_after(_DRAIN_S):
            while not self.drained():
                await anyio.sleep(0.01)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                with suppress(Exception):
                    await stream.aclose()

    async def watch_memory(self) -> None:
        """Read the resident memory of the server's process tree every `resident.POLL_S` while it
        runs; past `memory_limit`, freeze and kill the tree as a death of its own would
        (`_bury`), recording how much it held in `over_memory`. Not fuzzgate stopping it: the call
        pending sees the connection close, and the oracles read `over_memory` (`out_of_memory`)."""
        limit, process = self.memory_limit, self._process
        if limit is None or process is None or not resident.AVAILABLE:
            return
        tree = resident.Resident(process.pid)
        while process.returncode is None and not self._stopping:
            held = tree.read()
            self.peak_memory = max(self.peak_memory, held)
            if held > limit:
                if self._stopping or process.returncode is not None:
                    return
                self.over_memory = MemoryExceeded(held, limit)
                await self._bury()
                return
            await anyio.sleep(resident.POLL_S)

    async def pump_stderr(self) -> None:
        assert self._process and self._process.stderr
        try:
            await self.read_lines(self._process.stderr)
        finally:
            self.stderr_closed.set()

    async def read_lines(self, stream: ByteReceiveStream) -> None:
        """Append `stream`'s lines to the log until it ends."""
        buffered = BufferedByteReceiveStream(stream)
        with suppress(*STREAM_ENDS):
            while True:
                try:
                    raw = await buffered.receive_until(b"\n", STDERR_LINE_BYTES)
                except anyio.DelimiterNotFound:
                    self.stderr.append(await self._over_long_line(buffered))
                    continue
                self.stderr.append(raw.decode("utf-8", "replace").rstrip("\r"))
        # A last line without a newline is still the server's last word, perhaps cut off by its death.
        rest = buffered.buffer
        if rest:
            self.stderr.append(self.redact.open_end(bytes(rest).decode("utf-8", "replace").rstrip("\r\n")))

    async def _over_long_line(self, buffered: BufferedByteReceiveStream) -> str:
        """The first `STDERR_LINE_BYTES` of a longer stderr line, the rest dropped up to its newline
        (or the end of the stream). Its kept end is redacted as a possibly cut secret."""
        kept = await buffered.receive_exactly(STDERR_LINE_BYTES)
        dropped = 0
        try:
            while True:
                try:
                    dropped += len(await buffered.receive_until(b"\n", STDERR_LINE_BYTES))
                    break
                except anyio.DelimiterNotFound:
                    dropped += len(await buffered.receive_exactly(STDERR_LINE_BYTES))
        except anyio.IncompleteRead:
            # The stream ended inside the dropped part: none of it may become a line of its own.
            if rest := len(buffered.buffer):
                dropped += len(await buffered.receive(rest))
        line = self.redact.open_end(kept.decode("utf-8", "replace"), cut=True)
        return f"{line} [… {dropped} more bytes of this line dropped]"

    async def stop(self, *, deliberate: bool = True) -> None:
        """Close stdin (if fuzzgate holds it), then SIGTERM and SIGKILL the whole process group,
        kill every process the server started wherever it went (`process_tree`), reap it, and close
        its pipes. Not `deliberate`: the connection broke first, so whatever ended the server was
        not fuzzgate's doing.

        Shielded and bounded: it runs on every exit path, Ctrl-C and cancellation included.
        """
        process, tree = self._process, self._tree
        if process is None or tree is None or self._stopping:
            # Once is enough: a second group kill after the reap could hit a reused process id.
            return
        self._stopping = True
        # From here on, the server ending is fuzzgate's doing, not a crash.
        self.killed_by_us = deliberate
        with anyio.CancelScope(shield=True):
            # Parent links are lost when the server exits, as it does when stdin closes.
            tree.remember()
            stages: list[tuple[signal.Signals | None, float]] = [
                (signal.SIGTERM, _KILL_GRACE_S),
                (signal.SIGKILL, 5.0),
            ]
            if process.stdin is not None:
                # A stdio server ends by itself when its input does: give it the chance first.
                with suppress(Exception):
                    await process.stdin.aclose()
                stages.insert(0, (None, _TERM_GRACE_S))
            for sig, grace in stages:
                if sig is not None:
                    if process.returncode is None:
                        tree.remember()
                    _signal_group(process.pid, sig)
                with anyio.move_on_after(grace):
                    while process.returncode is None:
                        await anyio.sleep(0.01)
                if process.returncode is not None:
                    break
            # The leader is gone; children it left in its group go too.
            _signal_group(process.pid, signal.SIGKILL)
            await self._bury()
            await self._close_pipes(process)

    async def _bury(self) -> None:
        """Kill the server's whole tree, then, once the server is reaped, orphans if no other
        server runs. Once, whether the server died by itself (`outlive`) or was stopped."""
        assert self._process and self._tree
        process = self._process
        with anyio.CancelScope(shield=True):
            async with self._burying:
                if self._buried:
                    return
                await self._tree.kill()
                with anyio.move_on_after(_KILL_GRACE_S):
                    await process.wait()
                if process.returncode is not None:
                    # anyio's child watcher has collected it: no longer a child that could be mistaken for an orphan.
                    CUSTODY.release(process.pid)
                await kill_orphans()
                self._buried = True

    @staticmethod
    async def _close_pipes(process: Process) -> None:
        """Close the pipes now, while the event loop runs. Left to garbage collection, an asyncio
        subprocess transport whose pipes are still open (a grandchild held them, or they were never
        read to the end) is closed after the loop is, and prints `Exception ignored ...
        RuntimeError: Event loop is closed` at exit."""
        if process.returncode is None:
            # Not even SIGKILL ended it (uninterruptible sleep): waiting in `aclose` could hang.
            # Ending the streams at least ends the tasks that read them.
            for stream in (process.stdout, process.stderr):
                if stream is not None:
                    with suppress(Exception):
                        await stream.aclose()
            return
        with suppress(Exception), anyio.move_on_after(1):
            await process.aclose()
        # Closing a pipe takes two turns of the loop to reach the subprocess transport, which then
        # closes itself (asyncio's SubprocessStreamProtocol): let them run before anyone leaves.
        for _ in range(3):
            await anyio.lowlevel.checkpoint()


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def child_environment(extra: dict[str, str]) -> dict[str, str]:
    """The server's environment: the SDK's safe defaults, settings that make tracebacks parseable,
    then the user's `env` on top."""
    inherited = {
        k: v for k in ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL") if (v := os.environ.get(k))
    }
    # Wide, uncoloured console output: rich-formatted tracebacks then keep one frame per line.
    defaults = {"COLUMNS": "400", "NO_COLOR": "1", "PYTHONUNBUFFERED": "1", "PYTHONIOENCODING": "utf-8"}
    # A virtualenv's interpreter finds its packages without this; `python` on PATH needs it.
    if venv := os.environ.get("VIRTUAL_ENV"):
        defaults["VIRTUAL_ENV"] = venv
    return {**inherited, **defaults, **extra}
