"""The server's connection, owned by one task: `ServerKeeper` opens it, hands it to the workers, and
restarts it on request after a crash or a hang, giving up after `MAX_RESTARTS_IN_A_ROW` failed starts."""

from __future__ import annotations

from collections.abc import Mapping

import anyio
from anyio.abc import TaskStatus

from fuzzgate.config.views import ServerSettings
from fuzzgate.engine.events import EventSink, ServerRestarted
from fuzzgate.engine.verify import Connector
from fuzzgate.model.errors import TargetError
from fuzzgate.plan.selection import ToolPlan
from fuzzgate.target.connection import Connection

MAX_RESTARTS_IN_A_ROW = 3


class ServerKeeper:
    """Owns the current connection in one task, so sessions are opened and closed by the same task,
    and restarts it on request after a crash or a hang."""

    def __init__(
        self, server: ServerSettings, extra_env: Mapping[str, str], emit: EventSink, connector: Connector
    ) -> None:
        self._server = server
        self._extra_env = extra_env
        self._emit = emit
        self._connector = connector
        self._connection: Connection | None = None
        self._ready = anyio.Event()
        self._restart = anyio.Event()
        self._reason = ""
        self.failure: TargetError | None = None
        self.culprit: ToolPlan | None = None

    async def run(self, *, task_status: TaskStatus[Connection]) -> None:
        generation = 0
        failures = 0
        while True:
            try:
                async with self._connector(self._server, self._extra_env) as conn:
                    failures = 0
                    self._connection = conn
                    if generation == 0:
                        task_status.started(conn)
                    else:
                        self._emit(ServerRestarted(self._reason, generation))
                    self._ready.set()
                    await self._restart.wait()
                    self._restart = anyio.Event()
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

    async def get(self) -> Connection | None:
        await self._ready.wait()
        return self._connection

    def restart(self, connection: Connection, reason: str) -> None:
        if self._connection is connection and not self._restart.is_set():
            self._reason = reason
            # No worker may pick up the old connection while the keeper is tearing it down.
            self._connection = None
            self._ready = anyio.Event()
            self._restart.set()
