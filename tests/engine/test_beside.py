"""Calls beside a slow one, through the real engine against an in-memory server: in a time-boxed run
a call still pending past the slow threshold no longer holds the others up (a helper sends the next
cases beside it, and those are let end before the hang's restart); with `--cases` the calls go one
at a time whatever they take."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import ToolAnnotations

from fuzzgate.config.model import Config, FeedbackMode, TargetConfig, TargetKind
from fuzzgate.engine import calls
from fuzzgate.engine.events import CallFinished, Event
from fuzzgate.engine.execute import Engine
from fuzzgate.engine.settings import EngineSettings
from fuzzgate.model.outcome import OutcomeStatus
from fuzzgate.plan.budget import TimeBox
from fuzzgate.target.memory import memory_connector

READ_ONLY = ToolAnnotations(read_only_hint=True)


def make_server() -> MCPServer:
    app = MCPServer("waits")

    @app.tool(annotations=READ_ONLY)
    async def wait_for(block: bool = False) -> str:
        """Wait for the lock, or poll it."""
        if block:
            await anyio.sleep_forever()
        return "free"

    @app.tool(annotations=READ_ONLY)
    def echo(text: str, times: int = 1) -> str:
        """Repeat a text."""
        return text * max(0, min(times, 3))

    return app


def _config(cases: int | None) -> Config:
    return Config(
        target=TargetConfig(kind=TargetKind.STDIO, command="memory", feedback=FeedbackMode.BEHAVIOUR, timeout_ms=1500),
        budget_s=8,
        cases=cases,
        replays=0,
        concurrency=1,
        slow_ms=300,
    )


def _run(cases: int | None) -> list[CallFinished]:
    config = _config(cases)
    events: list[Event] = []
    engine = Engine(
        EngineSettings.of(config), 5, events.append, timebox=TimeBox(config.budget_s),
        connector=memory_connector(make_server),
    )  # fmt: skip
    anyio.run(engine.run)
    return [e for e in events if isinstance(e, CallFinished)]


@dataclass(frozen=True)
class _Span:
    start: float
    end: float


def _span(call: CallFinished) -> _Span:
    return _Span(call.elapsed_s - call.outcome.duration_s, call.elapsed_s)


_STAMP_LAG_S = 0.15
"""How late a call's start may be read: a call is judged (and its event stamped) while the next one
is on its way, so the call sent just before a hang reads as begun up to one loop turn after the
hang did; on a loaded machine more than its own short duration. No call is sent beside a hang
before the slow threshold (0.3 s) anyway."""


def _beside(finished: list[CallFinished]) -> list[CallFinished]:
    """The calls that began while a hang was pending."""
    hangs = [_span(c) for c in finished if c.outcome.status is OutcomeStatus.TIMEOUT]
    return [
        c for c in finished
        if c.outcome.status is not OutcomeStatus.TIMEOUT
        and any(h.start + _STAMP_LAG_S < _span(c).start < h.end for h in hangs)
    ]  # fmt: skip


def test_a_hang_does_not_hold_up_the_calls_of_a_time_boxed_run() -> None:
    finished = _run(None)
    hangs = [c for c in finished if c.outcome.status is OutcomeStatus.TIMEOUT]
    assert hangs, "the hang was never reached"
    beside = _beside(finished)
    # Calls went out while the hang was pending, each counted concurrent (confirmed alone).
    assert len(beside) >= 5, [(c.tool, c.arguments) for c in finished]
    assert all(c.outcome.concurrent == 2 for c in beside)
    # Every hang fuzzing went on after had calls beside it; one begun too near fuzzing's deadline for
    # a helper to start (past the slow threshold) may have none, and nothing follows it.
    last_start = max(_span(c).start for c in finished if c.outcome.status is not OutcomeStatus.TIMEOUT)
    settled = [c for c in hangs if c.elapsed_s < last_start]
    assert len(settled) >= 2, [_span(c) for c in hangs]
    assert all(c.outcome.concurrent == 2 for c in settled)
    # The hang's restart let them end: none was cut short.
    assert not [c for c in finished if c.outcome.status is OutcomeStatus.ABORTED]


def test_with_cases_the_calls_go_one_at_a_time() -> None:
    finished = _run(12)
    assert [c for c in finished if c.outcome.status is OutcomeStatus.TIMEOUT], "the hang was never reached"
    assert not _beside(finished)
    assert all(c.outcome.concurrent == 1 for c in finished)


class _Session:
    def __init__(self, answer: Any) -> None:
        self.answer = answer

    async def send_ping(self) -> None:
        if isinstance(self.answer, BaseException):
            raise self.answer
        await anyio.sleep(self.answer)


@dataclass
class _Client:
    session: _Session


@dataclass
class _Connection:
    client: _Client
    broken: bool = False

    def alive(self) -> bool:
        return True

    def loss_mark(self) -> int:
        return 0

    def lost_since(self, _mark: int) -> bool:
        return False


@pytest.mark.parametrize(
    ("answer", "answers"),
    [
        (0.0, True),
        # An error reply is an answer: servers on the 2026 protocol do not know ping.
        (MCPError(-32601, "Method not found"), True),
        # A server busy with the slow call: its helper's calls would only queue behind it.
        (5.0, False),
        (anyio.ClosedResourceError(), False),
    ],
)
def test_a_helper_starts_only_beside_a_server_that_answers(answer: Any, answers: bool) -> None:
    connection = _Connection(_Client(_Session(answer)))
    assert anyio.run(calls._answers, connection) is answers  # type: ignore[arg-type]
