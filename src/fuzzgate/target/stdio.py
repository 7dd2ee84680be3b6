"""A stdio MCP server process that fuzzgate owns, and the framing between its pipes and the SDK.

Why not `mcp.stdio_client`: a fuzzer must survive hostile servers. The SDK's transport hands every
non-JSON line to a logger, drops replies with a wrong id silently, re-joins its buffer for every
chunk of a large reply, and keeps stderr for itself. Here the process lives in its own session
(so one `killpg` reaches its children), stderr is kept line by line with a running index so an
oracle can see what the server logged while one call was pending, and every line on stdout is
checked before the SDK's `ClientSession` sees it. Starting, logging and killing the process is
`owned_process.OwnedProcess`, shared with the process that serves an HTTP target.

What the server writes is kept raw for the oracles, with one exception that must be redacted here
because only here is the whole text at hand: a wire anomaly's excerpt is cut from the redacted line.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import AsyncIterator, Hashable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
from anyio.streams.buffered import BufferedByteReceiveStream
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from fuzzgate.check.secrets import Redactor
from fuzzgate.model.outcome import AnomalyKind, WireAnomaly
from fuzzgate.sandbox.owned_process import (
    STDERR_KEEP_LINES,
    STDERR_LINE_BYTES,
    STREAM_ENDS,
    LaunchSpec,
    LineLog,
    OwnedProcess,
    child_environment,
)
from fuzzgate.target.client_side import ENCODING_ERRORS, ClientSide

__all__ = [
    "EXCERPT_CHARS",
    "MAX_LINE_BYTES",
    "STDERR_KEEP_LINES",
    "STDERR_LINE_BYTES",
    "LineLog",
    "RawWaiter",
    "SentIds",
    "ServerProcess",
    "StdioSpec",
    "WireLog",
    "child_environment",
    "id_key",
    "stdio_transport",
]

MAX_LINE_BYTES = 128 * 1024 * 1024
"""A reply longer than this is a protocol error, not something to buffer."""

EXCERPT_CHARS = 300

StdioSpec = LaunchSpec
"""The stdio server's command line: a `LaunchSpec`, the name stdio callers know it by."""


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


def id_key(value: Any) -> Hashable:
    """What a JSON-RPC id is equal to, for matching a reply to a raw request: numbers by value (a
    server that parses ids as doubles answers 2**63 as 9223372036854776000, which JSON allows), a
    string only to the same string, never a number to a string."""
    if isinstance(value, bool) or value is None:
        return ("other", value)
    if isinstance(value, int | float):
        try:
            return ("number", float(value))
        except OverflowError:
            return ("number", value)
    if isinstance(value, str):
        return ("string", value)
    return ("other", json.dumps(value, sort_keys=True))


SENT_IDS_KEPT = 4096
"""How many of the session's request ids are remembered (`SentIds`)."""


@dataclass(slots=True)
class SentIds:
    """The ids (`id_key`) of the last `SENT_IDS_KEPT` requests this session wrote. A reply to one of
    them that is no longer pending answers fuzzgate's own earlier request late or a second time
    (the Python SDK 1.x answers a request fuzzgate cancelled after its timeout with "Request
    cancelled", and may have answered it already): never an answer to whatever is in flight now."""

    _order: deque[Hashable] = field(default_factory=deque)
    _keys: set[Hashable] = field(default_factory=set)

    def add(self, key: Hashable) -> None:
        if key in self._keys:
            return
        self._order.append(key)
        self._keys.add(key)
        if len(self._order) > SENT_IDS_KEPT:
            self._keys.discard(self._order.popleft())

    def __contains__(self, key: object) -> bool:
        return key in self._keys


@dataclass(slots=True, eq=False)
class RawWaiter:
    """A message fuzzgate wrote itself (`ServerProcess.write_raw`), waiting for its reply (or for a
    reply it should never get).

    `key` is its id's `id_key`, None when it has none (a notification). A reply without an id goes
    to the one waiter there is, if there is one."""

    key: Hashable | None
    done: anyio.Event = field(default_factory=anyio.Event)
    reply: Any = None
    """The reply as parsed JSON; None until one came (or when the server's stdout ended)."""
    replied: bool = False


def _excerpt(data: bytes, redact: Redactor) -> str:
    return redact.cut(data.decode("utf-8", "replace"), EXCERPT_CHARS, "…")


def _encode(message: types.JSONRPCMessage) -> bytes:
    try:
        text = message.model_dump_json(by_alias=True, exclude_unset=True)
    except ValueError:
        # Pydantic refuses lone surrogates; JSON itself allows them escaped, and fuzzing wants them.
        text = json.dumps(message.model_dump(mode="json", by_alias=True, exclude_unset=True), ensure_ascii=True)
    return text.encode("utf-8", "surrogatepass") + b"\n"


class ServerProcess(OwnedProcess):
    """One running stdio server: its pipes, its stderr log, its wire log, and its death."""

    def __init__(self, spec: LaunchSpec, redact: Redactor | None = None) -> None:
        super().__init__(spec, redact)
        self.wire = WireLog()
        self.pending: set[str | int] = set()
        self.stdout_closed = False
        """The server's stdout ended: the SDK fails pending requests with "connection closed"."""
        self.stdin_closed = False
        """Writing to the server's stdin failed (it closed its end): nothing more reaches it."""
        self.side = ClientSide()
        """fuzzgate's side of the connection (`Connection.side`): a pump that dies of its own
        failure records it here, so the calls it strands are not read as the server's doing."""
        self.first_reply_mark: int | None = None
        """`wire.mark()` when the first valid message came: the anomalies before it are the
        server's start-up output (a banner), which no call was pending for."""
        self._raw: list[RawWaiter] = []
        self._raw_expired: set[Hashable] = set()
        """Ids of raw requests given up on: a late reply to one is nobody's anomaly."""
        self.sent = SentIds()
        """The ids of the requests written (the SDK's and raw ones), for telling a late or second
        reply from one with an id nothing was sent with."""
        self._stdin_lock = anyio.Lock()

    def drained(self) -> bool:
        return self.stderr_closed.is_set() and self.stdout_closed

    async def pump_stdout(self, sink: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
        try:
            await self._pump_stdout(sink)
        except Exception as exc:
            self.side.fail(exc)
            raise
        finally:
            self.stdout_closed = True
            for waiter in self._raw:
                waiter.done.set()

    async def _pump_stdout(self, sink: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
        assert self._process and self._process.stdout
        buffered = BufferedByteReceiveStream(self._process.stdout)
        async with sink:
            with suppress(*STREAM_ENDS):
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
        if (self._raw or self._raw_expired) and self._route_raw(data):
            # Judged by whoever sent the raw message (valid JSON-RPC or not): the SDK never sees it.
            self._first_reply()
            return None
        try:
            message = types.jsonrpc_message_adapter.validate_python(data, by_name=False)
        except ValidationError:
            self.wire.add(WireAnomaly(AnomalyKind.INVALID_MESSAGE, _excerpt(raw, self.redact)))
            return None
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and message.id is not None:
            if message.id not in self.pending:
                if id_key(message.id) not in self.sent:
                    self.wire.add(WireAnomaly(AnomalyKind.WRONG_ID, _excerpt(raw, self.redact)))
                # A late or second reply to a request of this session: nobody waits for it, and
                # it says nothing of the request in flight. Dropped, as the spec asks of the
                # sender of a cancellation.
                return None
            self.pending.discard(message.id)
        self._first_reply()
        return message

    def _first_reply(self) -> None:
        if self.first_reply_mark is None:
            self.first_reply_mark = self.wire.mark()

    def _route_raw(self, data: Any) -> bool:
        """Hand a reply to the raw message it answers; whether it was one. A reply is matched by
        its id; one without an id (or with a null one, the JSON-RPC reply to a request it could not
        read) goes to the raw message when exactly one is waiting. An id the SDK is waiting for is
        the SDK's."""
        if not isinstance(data, dict) or "method" in data:
            return False
        reply_id = data.get("id")
        if reply_id is None:
            if len(self._raw) != 1:
                return False
            waiter = self._raw[0]
        else:
            if not isinstance(reply_id, dict | list) and reply_id in self.pending:
                return False
            key = id_key(reply_id)
            found = next((w for w in self._raw if w.key is not None and w.key == key), None)
            if found is None:
                return key in self._raw_expired
            waiter = found
        if not waiter.replied:
            waiter.reply, waiter.replied = data, True
            waiter.done.set()
        return True

    def expect_raw(self, message_id: Any, *, has_id: bool) -> RawWaiter:
        """Register a raw message about to be written, with the id it has (`has_id`), if any."""
        waiter = RawWaiter(id_key(message_id) if has_id else None)
        if waiter.key is not None:
            self.sent.add(waiter.key)
        if self.stdout_closed:
            waiter.done.set()
        self._raw.append(waiter)
        return waiter

    def forget_raw(self, waiter: RawWaiter) -> None:
        """Stop waiting: a reply that comes later is dropped quietly (it was asked for)."""
        with suppress(ValueError):
            self._raw.remove(waiter)
        if waiter.key is not None and not waiter.replied:
            self._raw_expired.add(waiter.key)

    async def write_raw(self, data: bytes) -> None:
        """Write bytes fuzzgate built itself onto the server's stdin, between the SDK's messages."""
        assert self._process and self._process.stdin
        async with self._stdin_lock:
            await self._process.stdin.send(data)

    async def pump_stdin(self, source: MemoryObjectReceiveStream[SessionMessage]) -> None:
        assert self._process and self._process.stdin
        stdin = self._process.stdin
        async with source:
            try:
                async for session_message in source:
                    message = session_message.message
                    if isinstance(message, types.JSONRPCRequest):
                        self.pending.add(message.id)
                        self.sent.add(id_key(message.id))
                    try:
                        data = _encode(message)
                    except ENCODING_ERRORS as exc:
                        self.side.fail(exc, encoding=True)
                        raise
                    async with self._stdin_lock:
                        await stdin.send(data)
            except anyio.ClosedResourceError:
                return
            except (anyio.BrokenResourceError, OSError):
                self.stdin_closed = True
                return
            except Exception as exc:
                self.side.fail(exc)
                raise


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
            tg.start_soon(server.watch_memory)
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
