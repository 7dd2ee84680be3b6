"""A stdio MCP server process that fuzzgate owns, and the framing between its pipes and the SDK.

Why not `mcp.stdio_client`: a fuzzer must survive hostile servers. The SDK's transport hands every
non-JSON line to a logger, drops replies with a wrong id silently, re-joins its buffer for every
chunk of a large reply, and keeps stderr for itself. Here the process lives in its own session
(so one `killpg` reaches its children), stderr is kept line by line with a running index so an
oracle can see what the server logged while one call was pending, and every line on stdout is
checked before the SDK's `ClientSession` sees it.

What the server writes is kept raw for the oracles, with two exceptions that must be redacted here
because only here is the whole text at hand: a wire anomaly's excerpt is cut from the redacted line,
and a stderr line too long to keep loses its end, where a known secret may have been cut in two.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.lowlevel
import mcp_types as types
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from fuzzgate.check.secrets import Redactor
from fuzzgate.outcome import AnomalyKind, WireAnomaly
from fuzzgate.target.process_tree import CUSTODY, ProcessTree, kill_orphans

MAX_LINE_BYTES = 128 * 1024 * 1024
"""A reply longer than this is a protocol error, not something to buffer."""

STDERR_KEEP_LINES = 20_000
STDERR_LINE_BYTES = 1024 * 1024
"""Of a longer stderr line only this much is kept; the rest, up to its newline, is dropped."""
EXCERPT_CHARS = 300

_STREAM_ENDS = (anyio.EndOfStream, anyio.IncompleteRead, anyio.ClosedResourceError, anyio.BrokenResourceError)
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


@dataclass(slots=True)
class WireLog:
    """Protocol anomalies seen on stdout, indexed like `LineLog`."""

    _items: list[WireAnomaly] = field(default_factory=list)

    def add(self, anomaly: WireAnomaly) -> None:
        self._items.append(anomaly)

    def mark(self) -> int:
        return len(self._items)

    def since(self, mark: int) -> tuple[WireAnomaly, ...]:
        return tuple(self._items[mark:])


def _excerpt(data: bytes, redact: Redactor) -> str:
    return redact.cut(data.decode("utf-8", "replace"), EXCERPT_CHARS, "…")


def _encode(message: types.JSONRPCMessage) -> bytes:
    try:
        text = message.model_dump_json(by_alias=True, exclude_unset=True)
    except ValueError:
        # Pydantic refuses lone surrogates; JSON itself allows them escaped, and fuzzing wants them.
        text = json.dumps(message.model_dump(mode="json", by_alias=True, exclude_unset=True), ensure_ascii=True)
    return text.encode("utf-8", "surrogatepass") + b"\n"


@dataclass(frozen=True, slots=True)
class StdioSpec:
    command: str
    args: tuple[str, ...]
    env: dict[str, str]
    cwd: Path | None


class ServerProcess:
    """One running server: its pipes, its stderr log, its wire log, and its death."""

    def __init__(self, spec: StdioSpec, redact: Redactor | None = None) -> None:
        self.spec = spec
        self.redact = redact if redact is not None else Redactor(())
        self.stderr = LineLog()
        self.wire = WireLog()
        self.pending: set[str | int] = set()
        self._process: Process | None = None
        self._tree: ProcessTree | None = None
        self._burying = anyio.Lock()
        self._buried = False
        self.killed_by_us = False
        self.stderr_closed = anyio.Event()
        self.stdout_closed = False
        """The server's stdout ended: the SDK fails pending requests with "connection closed"."""

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    @property
    def returncode(self) -> int | None:
        return self._process.returncode if self._process else None

    async def start(self) -> None:
        with CUSTODY.starting():
            self._process = await anyio.open_process(
                [self.spec.command, *self.spec.args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self.spec.env,
                cwd=self.spec.cwd,
                start_new_session=True,
            )
            CUSTODY.adopt(self._process.pid, server=True)
        self._tree = ProcessTree(self._process.pid)

    async def outlive(self) -> None:
        """When the server exits by itself, kill what it started at once: a grandchild holding its
        pipes open would otherwise keep a crashed call waiting for a reply or for the server's last
        stderr words. One that escaped (without /proc, or an orphan left until no server runs) may
        still hold them: the dead server's own output is all in the pipes by now, so once the
        readers had a moment to drain them, reading stops and the session sees the connection close."""
        process = self._process
        assert process
        await process.wait()
        if self.killed_by_us:
            return
        await self._bury()
        with anyio.move_on_after(_DRAIN_S):
            while not (self.stderr_closed.is_set() and self.stdout_closed):
                await anyio.sleep(0.01)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                with suppress(Exception):
                    await stream.aclose()

    async def pump_stderr(self) -> None:
        assert self._process and self._process.stderr
        buffered = BufferedByteReceiveStream(self._process.stderr)
        try:
            with suppress(*_STREAM_ENDS):
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
        finally:
            self.stderr_closed.set()

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
        line = self.redact.open_end(kept.decode("utf-8", "replace"))
        return f"{line} [… {dropped} more bytes of this line dropped]"

    async def pump_stdout(self, sink: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
        try:
            await self._pump_stdout(sink)
        finally:
            self.stdout_closed = True

    async def _pump_stdout(self, sink: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
        assert self._process and self._process.stdout
        buffered = BufferedByteReceiveStream(self._process.stdout)
        async with sink:
            with suppress(
                anyio.EndOfStream, anyio.IncompleteRead, anyio.ClosedResourceError, anyio.BrokenResourceError
            ):
                while True:
                    try:
                        raw = await buffered.receive_until(b"\n", MAX_LINE_BYTES)
                    except anyio.DelimiterNotFound:
                        self.wire.add(WireAnomaly(AnomalyKind.OVERSIZED, f"a line over {MAX_LINE_BYTES} bytes"))
                        return
                    message = self._check_line(raw.rstrip(b"\r"))
                    if message is not None:
                        await sink.send(SessionMessage(message))

    def _check_line(self, raw: bytes) -> types.JSONRPCMessage | None:
        if not raw.strip():
            return None
        try:
            data = json.loads(raw)
        except ValueError:
            self.wire.add(WireAnomaly(AnomalyKind.NON_JSON, _excerpt(raw, self.redact)))
            return None
        try:
            message = types.jsonrpc_message_adapter.validate_python(data, by_name=False)
        except ValidationError:
            self.wire.add(WireAnomaly(AnomalyKind.INVALID_MESSAGE, _excerpt(raw, self.redact)))
            return None
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and message.id is not None:
            if message.id not in self.pending:
                self.wire.add(WireAnomaly(AnomalyKind.WRONG_ID, _excerpt(raw, self.redact)))
                return None
            self.pending.discard(message.id)
        return message

    async def pump_stdin(self, source: MemoryObjectReceiveStream[SessionMessage]) -> None:
        assert self._process and self._process.stdin
        stdin = self._process.stdin
        async with source:
            try:
                async for session_message in source:
                    message = session_message.message
                    if isinstance(message, types.JSONRPCRequest):
                        self.pending.add(message.id)
                    await stdin.send(_encode(message))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                return

    async def stop(self) -> None:
        """Close stdin, then SIGTERM and SIGKILL the whole process group, kill every process the
        server started wherever it went (`process_tree`), reap it, and close its pipes.

        Shielded and bounded: it runs on every exit path, Ctrl-C and cancellation included.
        """
        process, tree = self._process, self._tree
        if process is None or tree is None or self.killed_by_us:
            # Once is enough: a second group kill after the reap could hit a reused process id.
            return
        # From here on, the server ending is fuzzgate's doing, not a crash.
        self.killed_by_us = True
        with anyio.CancelScope(shield=True):
            # Parent links are lost when the server exits, as it does when stdin closes.
            tree.remember()
            if process.stdin is not None:
                with suppress(Exception):
                    await process.stdin.aclose()
            for sig, grace in ((None, _TERM_GRACE_S), (signal.SIGTERM, _KILL_GRACE_S), (signal.SIGKILL, 5.0)):
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


@asynccontextmanager
async def stdio_transport(
    server: ServerProcess,
) -> AsyncIterator[
    tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]
]:
    """Start `server` and yield the stream pair `mcp.Client` expects; stop it on exit."""
    await server.start()
    to_session, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](64)
    to_server, from_session = anyio.create_memory_object_stream[SessionMessage](64)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.pump_stderr)
            tg.start_soon(server.pump_stdout, to_session)
            tg.start_soon(server.pump_stdin, from_session)
            tg.start_soon(server.outlive)
            try:
                yield from_server, to_server
            finally:
                await server.stop()
                tg.cancel_scope.cancel()
    finally:
        # The pumps close their ends too, unless they were cancelled before they started.
        for stream in (from_server, to_server, to_session, from_session):
            stream.close()
        await server.stop()


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
