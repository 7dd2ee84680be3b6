"""Measure corpus entries on a live server: the features each one's call reaches now.

The corpus tools (`fuzzgate corpus merge|minimize|cleanse`) decide what to keep from these
measurements alone, never from what an entry says it reached when it was kept (it may come from
other code). A `Measurer` starts the server as a run does (contained, jailed where the sandbox
works, on a throwaway layer), sends each entry's prefix and then its call, and restarts the server
after a call that killed or hung it. Entries are measured one after another on the same server, as a
run replays its corpus.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from fuzzgate.check.secrets import canary_environment
from fuzzgate.config.model import FeedbackMode
from fuzzgate.engine.collector import COLLECT_TIMEOUT_S
from fuzzgate.engine.session import contained
from fuzzgate.engine.settings import EngineSettings
from fuzzgate.engine.steps import send_step
from fuzzgate.generate.dictionary import reply_values
from fuzzgate.learn.features import SignalKind, call_features
from fuzzgate.model.commands import subject_label
from fuzzgate.model.corpus import CorpusEntry
from fuzzgate.model.errors import TargetError
from fuzzgate.model.findings import Step, Surface
from fuzzgate.model.outcome import CallOutcome, OutcomeStatus
from fuzzgate.plan.budget import TimeBox
from fuzzgate.plan.selection import Admission
from fuzzgate.target.connection import Connection
from fuzzgate.target.discover import Inventory, discover
from fuzzgate.triage.sequence import bindings, rebind

_RESTART = (OutcomeStatus.CLOSED, OutcomeStatus.TIMEOUT)


class Measurer:
    """One live server (restarted as needed) and the features entries reach on it."""

    def __init__(self, settings: EngineSettings, seed: int, timebox: TimeBox, connector: Any) -> None:
        self._settings = settings
        self._seed = seed
        self._timebox = timebox
        self._connector = connector
        self._stack: AsyncExitStack | None = None
        self._connection: Connection | None = None
        self._inventory: Inventory | None = None
        self.note = ""
        self.signal = SignalKind.BEHAVIOUR
        self.answers: list[tuple[str, CallOutcome]] = []
        """Each measured entry's call (its subject) and what it answered, in order."""

    async def _connect(self) -> Connection:
        if self._connection is not None and self._connection.alive():
            return self._connection
        await self._close()
        stack = AsyncExitStack()
        try:
            connection: Connection = await stack.enter_async_context(
                self._connector(self._settings.server, canary_environment(self._seed))
            )
        except BaseException:
            await stack.aclose()
            raise
        self._stack, self._connection = stack, connection
        if self._inventory is None:
            self._inventory = await discover(connection, self._settings.target.timeout_ms / 1000)
        if self._settings.target.feedback is FeedbackMode.OFF:
            self.signal, self.note = SignalKind.OFF, "off: feedback = off"
        elif connection.coverage is not None:
            self.signal, self.note = SignalKind.COVERAGE, connection.feedback_note
            # What start-up ran is no entry's doing.
            await connection.coverage.collect(COLLECT_TIMEOUT_S)
        else:
            self.signal, self.note = SignalKind.BEHAVIOUR, connection.feedback_note
        return connection

    async def _close(self) -> None:
        stack, self._stack, self._connection = self._stack, None, None
        if stack is not None:
            await stack.aclose()

    def schema(self, surface: Surface, tool: str) -> dict[str, Any] | None:
        """The input schema the server declares for `tool` (after the first measurement)."""
        if self._inventory is None:
            return None
        for info in (*self._inventory.tools, *self._inventory.others):
            if info.surface is surface and info.name == tool:
                return info.input_schema
        return None

    def refusal(self, entry: CorpusEntry) -> str | None:
        """Why the run's selection refuses a call of the entry (include, exclude, the destructive
        guard, judged by the server's listing: `plan.selection.Admission`); None when it may be sent."""
        if self._inventory is None:
            return "the server's tools are not listed yet"
        calls = [(step.surface, step.tool) for step in entry.prefix] + [(entry.surface, entry.tool)]
        return Admission.of(self._settings.selection, self._inventory).refusal(calls)

    async def start(self) -> None:
        """Start the server (raises `TargetError` when it cannot be started)."""
        await self._connect()

    async def features(self, entry: CorpusEntry) -> frozenset[str] | None:
        """The features the entry's call reaches on the server now (after its prefix), or None when
        it could not be measured (the budget is spent, the server died and cannot be restarted) or
        must not be sent (`refusal`: nothing of it is sent)."""
        if self._timebox.remaining() <= 0:
            return None
        try:
            connection = await self._connect()
            if self.refusal(entry) is not None:
                return None
            recorded: list[Step] = []
            sent: list[Step] = []
            for step in entry.prefix:
                arguments = _rebound(step.arguments, recorded, sent)
                outcome = await self._send(connection, step.tool, arguments, step.surface)
                recorded.append(step)
                sent.append(Step(step.tool, arguments, step.schema_valid, step.surface, _produced(step.tool, outcome)))
                if outcome.status in _RESTART:
                    await self._close()
                    return None
                if connection.coverage is not None:
                    await connection.coverage.collect(COLLECT_TIMEOUT_S)
            arguments = _rebound(entry.arguments, recorded, sent)
            outcome = await self._send(connection, entry.tool, arguments, entry.surface)
            self.answers.append((subject_label(entry.surface, entry.tool), outcome))
            coverage = None
            if self.signal is SignalKind.COVERAGE and connection.coverage is not None and connection.alive():
                coverage = await connection.coverage.collect(COLLECT_TIMEOUT_S)
            if outcome.status in _RESTART or not connection.alive():
                await self._close()
        except TargetError:
            await self._close()
            return None
        if self.signal is SignalKind.OFF:
            return frozenset()
        return call_features(entry.surface, entry.tool, outcome, coverage, arguments)

    async def _send(
        self, connection: Connection, tool: str, arguments: dict[str, Any], surface: Surface
    ) -> CallOutcome:
        step = await send_step(connection, self._settings.target, tool, arguments, surface=surface)
        return step.outcome


def _produced(tool: str, outcome: CallOutcome) -> tuple[Any, ...]:
    return reply_values(tool, outcome.payload) if outcome.status is OutcomeStatus.OK else ()


def _rebound(arguments: dict[str, Any], recorded: list[Step], sent: list[Step]) -> dict[str, Any]:
    result: dict[str, Any] = rebind(arguments, bindings(recorded, sent))
    return result


@asynccontextmanager
async def measuring(settings: EngineSettings, seed: int, timebox: TimeBox) -> AsyncIterator[Measurer]:
    """A `Measurer` on a server started as a run starts it; the server and its workspace are gone
    on exit. Raises `TargetError` when the server cannot be started."""
    async with contained(settings, seed) as servers:
        measurer = Measurer(servers.settings, seed, timebox, servers.connector)
        try:
            await measurer.start()
            yield measurer
        finally:
            await measurer._close()
