"""Warm spares: servers started ahead of need, so that a restart after a crash or a hang, or a
replay on a fresh server, takes one at once instead of paying a cold start (a fresh layer, the jail,
the interpreter, the collector, the handshake: one to three seconds), as a fork server does for AFL.

A spare is started exactly as the connector starts any server, and handed out untouched: its own
fresh layer and process, initialized, no call sent. Nothing it did while it waited counts: one that
died or whose start failed is dropped unseen (the taker then starts its own, and meets the same
error itself). Each spare is held by a task of the pool's own, which opens its connection and
closes it when the taker is done with it (the SDK's task groups are entered and left by one task);
the taker does not wait for that close. At the pool's end every spare still waiting is stopped, and
the pool returns only once every server it started is reaped.

Who keeps how many (`Spares.keep`): the server fuzzing restarts keeps one spare from its first
restart on (a server that crashed once usually does again; one that never does costs no spare),
and verification one per replay it may run at once while it has tries to start (asked again at
each take, so the last replay of a finding starts no spare nobody takes). Spares are for
stdio targets only: an HTTP server fuzzgate starts holds the URL's port, which a second one could
not take (`enabled`).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field, replace

import anyio
from anyio.abc import TaskGroup

from fuzzgate.config.views import ServerSettings
from fuzzgate.model.errors import TargetError
from fuzzgate.target.connection import Connection

_MEASURED = 20
"""Server starts (and stops) remembered for `Spares.start_s` (and `Spares.stop_s`)."""


def _same_server(server: ServerSettings) -> ServerSettings:
    """What a start or stop is remembered under: the server, whatever time it was given to start
    (the fuzzing server's start is bounded by what is left of the budget, a replay's is not)."""
    return replace(server, startup_timeout_ms=0)


Connector = Callable[[ServerSettings, Mapping[str, str]], AbstractAsyncContextManager[Connection]]
"""Opens an initialized connection to a fresh server (or, for HTTP, to the one server): the seam
tests use to run the engine against an in-memory server."""


@dataclass(slots=True, eq=False)
class _Spare:
    server: ServerSettings
    extra_env: Mapping[str, str]
    ready: anyio.Event = field(default_factory=anyio.Event)
    """Set once its start ended, in a connection or in failure (`connection` stays None)."""
    released: anyio.Event = field(default_factory=anyio.Event)
    """Set when it is no longer wanted or its taker is done: its task then closes it."""
    connection: Connection | None = None
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    """Its start: cancelled when it is no longer wanted before it is up (the stop is shielded)."""

    def release(self) -> None:
        self.released.set()
        if not self.ready.is_set():
            self.scope.cancel()

    def of(self, server: ServerSettings, extra_env: Mapping[str, str]) -> bool:
        return self.server == server and self.extra_env == extra_env

    def usable(self) -> bool:
        connection = self.connection
        return connection is not None and connection.alive() and not connection.broken


@dataclass(slots=True)
class _Want:
    server: ServerSettings
    extra_env: Mapping[str, str]
    count: int | Callable[[], int]
    """How many to keep waiting: a number, or asked each time a spare is taken (`Spares.keep`)."""

    def wanted(self) -> int:
        return self.count if isinstance(self.count, int) else self.count()


class Spares:
    """The warm spares of one run, held in `task_group`; `connect` is the connector to use."""

    def __init__(self, connector: Connector, task_group: TaskGroup, *, enabled: bool = True) -> None:
        self._connector = connector
        self._group = task_group
        self.enabled = enabled
        self._waiting: list[_Spare] = []
        """Spares started or starting that no one took yet, oldest first."""
        self._wants: list[_Want] = []
        self._starts: list[tuple[ServerSettings, float]] = []
        """How long each server start through the pool took, spare or not."""
        self._stops: list[tuple[ServerSettings, float]] = []
        """How long stopping each server started here, not as a spare, took once its taker was done."""
        self.taken = 0
        """Connections handed out from a spare."""
        self._in_use: set[int] = set()
        """The ids of the connections handed out from a spare and not yet given back."""
        self.closing = False

    def keep(self, server: ServerSettings, extra_env: Mapping[str, str], count: int | Callable[[], int]) -> None:
        """Keep `count` spares of this server waiting from now on (0: stop those waiting). A callable
        `count` is asked now and again each time a spare is taken, so a taker that will need no other
        server starts no spare nobody takes."""
        if not self.enabled or self.closing:
            return
        want = next((w for w in self._wants if w.server == server and w.extra_env == extra_env), None)
        if want is None:
            want = _Want(server, extra_env, count)
            self._wants.append(want)
        want.count = count
        surplus = [s for s in self._waiting if s.of(server, extra_env)][want.wanted() :]
        for spare in surplus:
            self._waiting.remove(spare)
            spare.release()
        self._refill(want)

    def waiting(self, server: ServerSettings, extra_env: Mapping[str, str]) -> int:
        """Spares of this server started (or starting) and not taken."""
        return sum(1 for s in self._waiting if s.of(server, extra_env))

    def start_s(self, server: ServerSettings) -> float | None:
        """The mean of the last few measured starts of this server (any environment); None before one."""
        return _mean_of(self._starts, server)

    def stop_s(self, server: ServerSettings) -> float | None:
        """The mean of the last few measured stops of this server (any environment), of those
        started when no spare waited (a spare's stop runs beside its taker's next call); None
        before one."""
        return _mean_of(self._stops, server)

    def connect(self, server: ServerSettings, extra_env: Mapping[str, str]) -> AbstractAsyncContextManager[Connection]:
        """A `Connector`: a waiting spare of this server (waiting for its start to end if it has not
        yet), else a server started now."""
        return self._connection(server, extra_env)

    def warm(self, connection: Connection) -> bool:
        """Whether `connection` (in use) came from a spare."""
        return id(connection) in self._in_use

    def close(self) -> None:
        """Stop every spare still waiting, and start no more."""
        self.closing = True
        self._wants.clear()
        for spare in self._waiting:
            spare.release()
        self._waiting.clear()

    @asynccontextmanager
    async def _connection(self, server: ServerSettings, extra_env: Mapping[str, str]) -> AsyncIterator[Connection]:
        spare = await self._take(server, extra_env)
        if spare is None:
            began = time.monotonic()
            async with self._connector(server, extra_env) as started:
                self._measured(server, time.monotonic() - began)
                try:
                    yield started
                finally:
                    stopping = time.monotonic()
            self._stops.append((_same_server(server), time.monotonic() - stopping))
            del self._stops[:-_MEASURED]
            return
        warm = spare.connection
        assert warm is not None
        self.taken += 1
        self._in_use.add(id(warm))
        try:
            yield warm
        finally:
            self._in_use.discard(id(warm))
            spare.release()

    async def _take(self, server: ServerSettings, extra_env: Mapping[str, str]) -> _Spare | None:
        while (spare := next((s for s in self._waiting if s.of(server, extra_env)), None)) is not None:
            self._waiting.remove(spare)
            self._refill_for(server, extra_env)
            try:
                await spare.ready.wait()
            except BaseException:
                spare.release()
                raise
            if spare.usable():
                return spare
            # Died while it waited, or never started: nothing it did counts; the next one, or a start now.
            spare.release()
        return None

    def _measured(self, server: ServerSettings, seconds: float) -> None:
        self._starts.append((_same_server(server), seconds))
        del self._starts[:-_MEASURED]

    def _refill_for(self, server: ServerSettings, extra_env: Mapping[str, str]) -> None:
        want = next((w for w in self._wants if w.server == server and w.extra_env == extra_env), None)
        if want is not None:
            self._refill(want)

    def _refill(self, want: _Want) -> None:
        if self.closing:
            return
        for _ in range(want.wanted() - self.waiting(want.server, want.extra_env)):
            spare = _Spare(want.server, want.extra_env)
            self._waiting.append(spare)
            self._group.start_soon(self._hold, spare)

    async def _hold(self, spare: _Spare) -> None:
        began = time.monotonic()
        try:
            with spare.scope:
                async with self._connector(spare.server, spare.extra_env) as connection:
                    self._measured(spare.server, time.monotonic() - began)
                    spare.connection = connection
                    spare.ready.set()
                    await spare.released.wait()
        except TargetError:
            # Not the run's error: whoever would have taken it starts a server itself and meets it.
            pass
        finally:
            spare.ready.set()
            if spare in self._waiting:
                self._waiting.remove(spare)


@asynccontextmanager
async def warm_spares(connector: Connector, *, enabled: bool) -> AsyncIterator[Spares]:
    """The pool of one run: on leaving, the spares still waiting are stopped, and every server the
    pool started is reaped before it returns."""
    async with anyio.create_task_group() as group:
        spares = Spares(connector, group, enabled=enabled)
        try:
            yield spares
        finally:
            spares.close()


def _mean_of(measured: list[tuple[ServerSettings, float]], server: ServerSettings) -> float | None:
    """The mean of the last few of `measured` for this server; None when there is none."""
    key = _same_server(server)
    last = [seconds for of, seconds in measured if of == key][-5:]
    return sum(last) / len(last) if last else None
