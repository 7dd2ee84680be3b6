"""Warm spares (`fuzzgate.engine.spare`): a spare is started as any server is, handed out untouched,
replaced when taken, dropped unseen when it died or failed to start, and every server the pool
started is closed before the pool returns. Then the engine's replays on spares, in memory."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any, cast

import anyio
import pytest

from fuzzgate.config.model import Config, TargetConfig, TargetKind
from fuzzgate.config.views import ServerSettings
from fuzzgate.engine.execute import Engine
from fuzzgate.engine.settings import EngineSettings
from fuzzgate.engine.spare import Spares, warm_spares
from fuzzgate.model.errors import TargetError
from fuzzgate.plan.budget import TimeBox
from fuzzgate.target.connection import Connection
from fuzzgate.target.memory import memory_connector
from tests.engine.test_engine_memory import make_server

SERVER = ServerSettings.of(Config(target=TargetConfig(kind=TargetKind.STDIO, command="server")))
OTHER = replace(SERVER, target=TargetConfig(kind=TargetKind.STDIO, command="other-server"))
ENV = {"CANARY": "1"}


@dataclass(eq=False)
class FakeConnection:
    """What the pool reads of a connection: whether its server is alive and its side unbroken."""

    number: int
    server: ServerSettings
    dead: bool = False
    broken: bool = False

    def alive(self) -> bool:
        return not self.dead


@dataclass
class FakeServers:
    """A connector that records every start and close; `hold` keeps starts from ending."""

    fail: bool = False
    hold: anyio.Event | None = None
    opened: list[FakeConnection] = field(default_factory=list)
    closed: list[FakeConnection] = field(default_factory=list)
    cancelled_starts: int = 0

    def __call__(self, server: ServerSettings, extra_env: Mapping[str, str]) -> AbstractAsyncContextManager[Connection]:
        return self._open(server)

    @asynccontextmanager
    async def _open(self, server: ServerSettings) -> AsyncIterator[Connection]:
        if self.fail:
            raise TargetError("could not start the stdio server `server`: exit status 1")
        if self.hold is not None:
            try:
                await self.hold.wait()
            except anyio.get_cancelled_exc_class():
                self.cancelled_starts += 1
                raise
        connection = FakeConnection(len(self.opened) + 1, server)
        self.opened.append(connection)
        try:
            yield cast(Connection, connection)
        finally:
            self.closed.append(connection)


async def _settle() -> None:
    for _ in range(20):
        await anyio.lowlevel.checkpoint()


def _run(test: Any, servers: FakeServers, *, enabled: bool = True) -> None:
    async def main() -> None:
        async with warm_spares(servers, enabled=enabled) as spares:
            await test(spares)

    anyio.run(main)


def test_a_kept_spare_is_handed_out_untouched_and_replaced_at_once() -> None:
    servers = FakeServers()

    async def test(spares: Spares) -> None:
        spares.keep(SERVER, ENV, 1)
        await _settle()
        assert len(servers.opened) == 1 and spares.waiting(SERVER, ENV) == 1
        async with spares.connect(SERVER, ENV) as connection:
            assert connection is servers.opened[0]
            assert spares.warm(connection) and spares.taken == 1
            await _settle()
            # Taken: the next one is started while this one is in use.
            assert len(servers.opened) == 2 and spares.waiting(SERVER, ENV) == 1
        await _settle()
        assert servers.closed == [servers.opened[0]]
        assert not spares.warm(connection)

    _run(test, servers)
    assert servers.closed == servers.opened


def test_a_spare_that_died_while_it_waited_is_never_handed_out() -> None:
    servers = FakeServers()

    async def test(spares: Spares) -> None:
        spares.keep(SERVER, ENV, 1)
        await _settle()
        servers.opened[0].dead = True
        async with spares.connect(SERVER, ENV) as connection:
            # A spare started in its place (or a start now): never the dead one.
            assert connection is not servers.opened[0]
            assert cast(FakeConnection, connection).alive()
        assert servers.opened[0] in servers.closed

    _run(test, servers)
    assert sorted(c.number for c in servers.closed) == [c.number for c in servers.opened]


def test_a_spare_whose_side_broke_is_never_handed_out() -> None:
    servers = FakeServers()

    async def test(spares: Spares) -> None:
        spares.keep(SERVER, ENV, 1)
        await _settle()
        servers.opened[0].broken = True
        spares.keep(SERVER, ENV, 0)
        async with spares.connect(SERVER, ENV) as connection:
            assert connection is not servers.opened[0]
            assert not spares.warm(connection)

    _run(test, servers)
    assert len(servers.closed) == len(servers.opened) == 2


def test_a_spare_that_could_not_start_is_dropped_and_the_taker_meets_the_error_itself() -> None:
    servers = FakeServers(fail=True)
    raised: list[TargetError] = []

    async def test(spares: Spares) -> None:
        spares.keep(SERVER, ENV, 1)
        await _settle()
        assert spares.waiting(SERVER, ENV) == 0
        try:
            async with spares.connect(SERVER, ENV):
                pytest.fail("no server could start")
        except TargetError as exc:
            raised.append(exc)

    _run(test, servers)
    assert len(raised) == 1 and "could not start" in raised[0].message


def test_the_pool_stops_spares_still_starting_and_closes_every_server_before_it_returns() -> None:
    servers = FakeServers(hold=anyio.Event())

    async def test(spares: Spares) -> None:
        spares.keep(SERVER, ENV, 2)
        await _settle()
        assert servers.opened == [] and spares.waiting(SERVER, ENV) == 2

    _run(test, servers)
    assert servers.cancelled_starts == 2 and servers.opened == []

    servers = FakeServers()

    async def started(spares: Spares) -> None:
        spares.keep(SERVER, ENV, 2)
        spares.keep(OTHER, ENV, 1)
        await _settle()
        assert len(servers.opened) == 3

    _run(started, servers)
    assert len(servers.closed) == 3


def test_fewer_wanted_stops_the_surplus() -> None:
    servers = FakeServers()

    async def test(spares: Spares) -> None:
        spares.keep(SERVER, ENV, 2)
        await _settle()
        spares.keep(SERVER, ENV, 0)
        await _settle()
        assert spares.waiting(SERVER, ENV) == 0 and len(servers.closed) == 2
        async with spares.connect(SERVER, ENV):
            pass
        # Nothing is wanted any more: the start made for the taker is not replaced.
        await _settle()
        assert len(servers.opened) == 3

    _run(test, servers)


def test_a_spare_is_taken_only_for_the_same_server_and_environment() -> None:
    servers = FakeServers()

    async def test(spares: Spares) -> None:
        spares.keep(SERVER, ENV, 1)
        await _settle()
        async with spares.connect(OTHER, ENV) as connection:
            assert cast(FakeConnection, connection).server == OTHER and not spares.warm(connection)
        async with spares.connect(SERVER, {}) as connection:
            assert not spares.warm(connection)
        assert spares.waiting(SERVER, ENV) == 1 and spares.taken == 0

    _run(test, servers)


def test_a_disabled_pool_starts_no_spare_and_only_passes_starts_through() -> None:
    servers = FakeServers()

    async def test(spares: Spares) -> None:
        spares.keep(SERVER, ENV, 2)
        await _settle()
        assert servers.opened == []
        async with spares.connect(SERVER, ENV) as connection:
            assert not spares.warm(connection)
        assert spares.start_s(SERVER) is not None

    _run(test, servers, enabled=False)
    assert len(servers.opened) == len(servers.closed) == 1


def test_the_engine_replays_findings_on_warm_spares_and_closes_every_server() -> None:
    opened: list[int] = []
    closed: list[int] = []
    connect = memory_connector(make_server)

    @asynccontextmanager
    async def counting(server: ServerSettings, extra_env: Mapping[str, str]) -> AsyncIterator[Connection]:
        opened.append(1)
        try:
            async with connect(server, extra_env) as connection:
                yield connection
        finally:
            closed.append(1)

    config = Config(target=TargetConfig(kind=TargetKind.STDIO, command="memory"), budget_s=20, cases=40, replays=3)
    engine = Engine(EngineSettings.of(config), 7, lambda event: None, timebox=TimeBox(20), connector=counting)
    result = anyio.run(engine.run)
    assert result.findings
    for finding in result.findings:
        assert (finding.replays, finding.reproduced, finding.unconfirmed) == (3, 3, False)
    assert engine.spares is not None and engine.spares.taken >= 1
    assert len(opened) == len(closed)


def test_a_count_asked_at_each_take_starts_no_spare_the_taker_will_not_need() -> None:
    servers = FakeServers()
    wanted = [1]

    async def test(spares: Spares) -> None:
        spares.keep(SERVER, ENV, lambda: wanted[0])
        await _settle()
        assert len(servers.opened) == 1
        wanted[0] = 0  # the taker is the last: nothing will follow it
        async with spares.connect(SERVER, ENV) as connection:
            await _settle()
            assert connection is servers.opened[0] and len(servers.opened) == 1
        wanted[0] = 1
        spares.keep(SERVER, ENV, lambda: wanted[0])
        await _settle()
        assert len(servers.opened) == 2 and spares.waiting(SERVER, ENV) == 1

    _run(test, servers)
    assert servers.closed == servers.opened


@pytest.mark.parametrize("replays", [1, 2])
def test_every_server_verification_starts_is_used(replays: int) -> None:
    """A spare is started for a replay or a shrinking try still to come, never for one that is not:
    fuzzing's server and one per replay (this server never crashes), none more (before, the last
    replay of each burst left one started and stopped unused: with one replay, a start per finding)."""
    started: list[int] = []
    connect = memory_connector(make_server)

    @asynccontextmanager
    async def counting(server: ServerSettings, extra_env: Mapping[str, str]) -> AsyncIterator[Connection]:
        started.append(1)
        async with connect(server, extra_env) as connection:
            yield connection

    config = Config(
        target=TargetConfig(kind=TargetKind.STDIO, command="memory"),
        budget_s=20, cases=40, replays=replays, shrink_tries=0,
    )  # fmt: skip
    engine = Engine(EngineSettings.of(config), 7, lambda event: None, timebox=TimeBox(20), connector=counting)
    result = anyio.run(engine.run)
    assert result.findings and all(f.replays == replays for f in result.findings)
    assert engine.spares is not None and engine.spares.taken >= 1
    assert len(started) == 1 + len(result.findings) * replays


def test_stops_are_measured_for_the_same_server_whatever_its_start_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    # The keeper starts the fuzzing server with what is left of the budget as its start timeout, a
    # replay with the configured one: both are the same server, and its stops are what a replay
    # without a spare costs (`deadline.stop_allowance`). A fake clock the closing connector moves.
    now = [100.0]
    monkeypatch.setattr("fuzzgate.engine.spare.time.monotonic", lambda: now[0])

    @asynccontextmanager
    async def stopping_slowly(server: ServerSettings, extra_env: Mapping[str, str]) -> AsyncIterator[Connection]:
        now[0] += 0.7  # the start
        try:
            yield cast(Connection, FakeConnection(1, server))
        finally:
            now[0] += 0.25  # the stop

    keeper_settings = replace(SERVER, startup_timeout_ms=1234)

    async def main() -> None:
        async with warm_spares(stopping_slowly, enabled=False) as spares:
            assert spares.stop_s(SERVER) is None
            async with spares.connect(keeper_settings, ENV):
                now[0] += 3.0  # in use: not part of the stop
            assert spares.stop_s(SERVER) == pytest.approx(0.25)
            assert spares.start_s(SERVER) == pytest.approx(0.7)
            assert spares.stop_s(OTHER) is None

    anyio.run(main)
