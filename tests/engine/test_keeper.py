"""The server keeper (`fuzzgate.engine.keeper`): a worker asking for the connection while another
worker's call asks for a restart gets the next server, never "none"; once the keeper gives up
(starts failing in a row) it hands out none, with the failure; the calls still in flight on a
server being restarted end on it, while the next server is handed out (`overlap`) or before it
is started."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import cast

import anyio
import anyio.lowlevel

from fuzzgate.config.views import ServerSettings
from fuzzgate.engine.keeper import ServerKeeper
from fuzzgate.model.errors import TargetError
from fuzzgate.target.connection import Connection
from tests.engine.test_spare import SERVER


@dataclass(eq=False)
class _Conn:
    """What the keeper reads of a connection: the calls in flight it lets end before a restart."""

    number: int
    in_flight: int = 0


@dataclass
class _Servers:
    fail: bool = False
    opened: list[_Conn] = field(default_factory=list)
    closed: list[int] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    """`open N` and `close N`, in the order they happened."""

    def __call__(self, server: ServerSettings, extra_env: Mapping[str, str]) -> AbstractAsyncContextManager[Connection]:
        return self._open()

    @asynccontextmanager
    async def _open(self) -> AsyncIterator[Connection]:
        if self.fail:
            raise TargetError("could not start the stdio server `server`: exit status 1")
        conn = _Conn(len(self.opened))
        self.opened.append(conn)
        self.log.append(f"open {conn.number}")
        try:
            yield cast(Connection, conn)
        finally:
            self.closed.append(conn.number)
            self.log.append(f"close {conn.number}")


def test_a_restart_asked_for_while_a_worker_waits_for_the_connection_hands_it_the_next_server() -> None:
    servers = _Servers()
    keeper = ServerKeeper(SERVER, {}, lambda event: None, servers)
    got: list[Connection | None] = []

    async def take() -> None:
        got.append(await keeper.get())

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            first = await tg.start(keeper.run)
            tg.start_soon(take)
            # `take` runs up to the checkpoint in `get`'s wait for the (set) ready event...
            await anyio.lowlevel.checkpoint()
            # ...and another worker's call crashes the server before it resumes.
            keeper.restart(first, "echo case 3: closed")
            with anyio.fail_after(5):
                while not got:
                    await anyio.sleep(0.01)
            tg.cancel_scope.cancel()

    anyio.run(main)
    assert [c.number for c in servers.opened] == [0, 1]
    assert got == [servers.opened[1]]


def test_a_keeper_whose_restarts_all_fail_hands_out_none_with_the_failure() -> None:
    servers = _Servers()
    keeper = ServerKeeper(SERVER, {}, lambda event: None, servers)

    async def main() -> Connection | None:
        async with anyio.create_task_group() as tg:
            first = await tg.start(keeper.run)
            servers.fail = True
            keeper.restart(first, "echo case 3: closed")
            with anyio.fail_after(5):
                return await keeper.get()

    assert anyio.run(main) is None
    assert keeper.failure is not None
    assert "exit status 1" in keeper.failure.message


def _restart_beside_a_call(overlap: bool) -> tuple[list[str], list[str]]:
    """A hang's restart while a call sent beside it is still in flight on the old server; what the
    test saw, and the servers opened and closed, each in order."""
    servers = _Servers()
    keeper = ServerKeeper(SERVER, {}, lambda event: None, servers, overlap=overlap)
    events: list[str] = []

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            first = await tg.start(keeper.run)
            cast(_Conn, first).in_flight = 1
            keeper.restart(first, "wait case 3: timeout", drain_s=30)
            with anyio.fail_after(5):
                if overlap:
                    nxt = await keeper.get()
                    events.append(f"got {cast(_Conn, nxt).number} with {servers.closed} closed")
                else:
                    await anyio.sleep(0.2)
                    events.append(f"opened {len(servers.opened)} with {servers.closed} closed")
                # The call beside the hang ends.
                cast(_Conn, first).in_flight = 0
                while 0 not in servers.closed:
                    await anyio.sleep(0.01)
                nxt = await keeper.get()
                events.append(f"got {cast(_Conn, nxt).number}")
            tg.cancel_scope.cancel()

    anyio.run(main)
    return events, servers.log[:3]


def test_a_restart_hands_out_the_next_server_while_the_old_one_ends_its_calls() -> None:
    events, log = _restart_beside_a_call(overlap=True)
    assert events == ["got 1 with [] closed", "got 1"]
    assert log == ["open 0", "open 1", "close 0"]


def test_without_overlap_the_next_server_starts_once_the_old_one_ended_its_calls() -> None:
    # Once the old server is closed the next one opens: in the keeper's task, whenever it runs next
    # (the test only reads the order, never how soon).
    events, log = _restart_beside_a_call(overlap=False)
    assert events == ["opened 1 with [] closed", "got 1"]
    assert log == ["open 0", "close 0", "open 1"]
