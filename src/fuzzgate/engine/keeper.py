"""The server's connection: `ServerKeeper` opens it, hands it to the workers, and restarts it on
request after a crash or a hang, giving up after `MAX_RESTARTS_IN_A_ROW` failed starts. From its
first restart on it keeps a warm spare (`engine.spare`), so the next restart takes it at once.

Each connection is opened and closed by a task of its own (the SDK's task groups are entered and
left by one task). The calls still in flight on a server being restarted (sent beside a hang) are
given time to end first; with `overlap` (stdio servers, and HTTP servers in the sandbox: each has
its own process, or loopback) the next server is handed out meanwhile, so a 3 s call beside a hang
no longer holds every worker for its rest. Without it (an HTTP server fuzzgate starts without the
sandbox holds the URL's port) the old server is closed first."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import anyio
from anyio.abc import TaskStatus

from fuzzgate.config.views import ServerSettings
from fuzzgate.engine.events import EventSink, ServerRestarted
from fuzzgate.engine.spare import Connector, Spares
from fuzzgate.model.errors import TargetError
from fuzzgate.plan.selection import ToolPlan
from fuzzgate.target.connection import Connection

MAX_RESTARTS_IN_A_ROW = 3
_DRAIN_POLL_S = 0.01


@dataclass(eq=False)
class _Held:
    """One connection, held open by its own task (`ServerKeeper._hold`) until `released`, then
    closed once its calls in flight ended or `drain_s` passed."""

    connection: Connection
    released: anyio.Event = field(default_factory=anyio.Event)
    closed: anyio.Event = field(default_factory=anyio.Event)
    drain_s: float = 0.0


class ServerKeeper:
    """Hands out the current connection, each opened and closed by a task of its own (`_hold`), so
    a session is opened and closed by the same task, and restarts it on request after a crash or a
    hang."""

    def __init__(
        self,
        server: ServerSettings,
        extra_env: Mapping[str, str],
        emit: EventSink,
        connector: Connector,
        spares: Spares | None = None,
        *,
        overlap: bool = False,
    ) -> None:
        self._server = server
        self._overlap = overlap
        self._extra_env = extra_env
        self._emit = emit
        self._spares = spares
        self._connector = spares.connect if spares is not None else connector
        self._connection: Connection | None = None
        self._ready = anyio.Event()
        self._restart = anyio.Event()
        self._reason = ""
        self._drain_s = 0.0
        self.failure: TargetError | None = None
        self.culprit: ToolPlan | None = None

    async def run(self, *, task_status: TaskStatus[Connection]) -> None:
        generation = 0
        failures = 0
        async with anyio.create_task_group() as held:
            while True:
                try:
                    current: _Held = await held.start(self._hold)
                except TargetError as exc:
                    if generation == 0:
                        raise
                    failures += 1
                    if failures >= MAX_RESTARTS_IN_A_ROW:
                        self.failure = exc
                        self._connection = None
                        self._ready.set()
                        return
                    generation += 1
                    continue
                failures = 0
                conn = current.connection
                self._connection = conn
                if generation == 0:
                    task_status.started(conn)
                else:
                    warm = self._spares is not None and self._spares.warm(conn)
                    self._emit(ServerRestarted(self._reason, generation, warm))
                self._ready.set()
                await self._restart.wait()
                self._restart = anyio.Event()
                current.drain_s = self._drain_s
                current.released.set()
                if not self._overlap:
                    await current.closed.wait()
                generation += 1

    async def _hold(self, *, task_status: TaskStatus[_Held]) -> None:
        """Open one connection, hand it over, and once it is released close it, after its calls in
        flight ended or its `drain_s` passed (they are aborted when it is torn down)."""
        current: _Held | None = None
        try:
            async with self._connector(self._server, self._extra_env) as conn:
                current = _Held(conn)
                task_status.started(current)
                await current.released.wait()
                with anyio.move_on_after(current.drain_s):
                    while conn.in_flight:
                        await anyio.sleep(_DRAIN_POLL_S)
        finally:
            if current is not None:
                current.closed.set()

    def stop_spares(self) -> None:
        """Fuzzing is over: no more restarts, so no spare."""
        if self._spares is not None:
            self._spares.keep(self._server, self._extra_env, 0)

    def expect_restart(self) -> None:
        """A call is taking long enough to end in a restart: have the next server started ahead."""
        if self._spares is not None:
            self._spares.keep(self._server, self._extra_env, 1)

    async def get(self) -> Connection | None:
        """The live connection, waiting through a restart; None once the keeper gave up (`failure`).
        Waiting for a set event still lets other tasks run, and one of them may ask for a restart
        meanwhile: then this waits for the next server rather than report none."""
        while True:
            await self._ready.wait()
            if self._connection is not None or self.failure is not None:
                return self._connection

    def restart(self, connection: Connection, reason: str, drain_s: float = 0.0) -> None:
        """Stop `connection`'s server and start the next; the calls still in flight on it are given
        up to `drain_s` to end (they are aborted when it is torn down), with `overlap` while the
        next server is handed out, else before it is started."""
        if self._connection is connection and not self._restart.is_set():
            self._reason = reason
            self._drain_s = drain_s
            if self._spares is not None:
                # A server that crashed or hung once usually does again: from now on the next
                # start is made ahead (the first one while the old server is stopped).
                self._spares.keep(self._server, self._extra_env, 1)
            # No worker may pick up the old connection while the keeper is tearing it down.
            self._connection = None
            self._ready = anyio.Event()
            self._restart.set()
