"""Corpus mutants that are not sent, through the real engine against an in-memory server: on a tool
with few inputs (and read-only: its state never changes) most mutants repeat a request the tool
already got; none of them is kept in memory,
and each one in a row halves the tool's mutation share."""

from __future__ import annotations

from typing import Annotated

import anyio
import pytest
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from pydantic import Field

from fuzzgate.config.model import Config, FeedbackMode, TargetConfig, TargetKind
from fuzzgate.engine.events import CallFinished, Event
from fuzzgate.engine.execute import Engine
from fuzzgate.engine.settings import EngineSettings
from fuzzgate.generate.cases import Case
from fuzzgate.learn import live_corpus
from fuzzgate.plan.budget import TimeBox
from fuzzgate.plan.selection import ToolPlan
from fuzzgate.target.memory import memory_connector


def make_server() -> MCPServer:
    app = MCPServer("small")

    @app.tool(annotations=ToolAnnotations(read_only_hint=True))
    def ping(n: Annotated[int | None, Field(description="Echoed back when given.")] = None) -> str:
        """Answer with `n`: a few small values reach a different behaviour."""
        if n is not None and n < 0:
            return "negative"
        return "pong" if n is None else f"pong {n % 3}"

    return app


CONFIG = Config(
    target=TargetConfig(kind=TargetKind.STDIO, command="memory", feedback=FeedbackMode.BEHAVIOUR),
    budget_s=120,
    cases=400,
    replays=0,
    concurrency=1,
    slow_ms=600_000,
)


def _run() -> tuple[Engine, list[CallFinished]]:
    events: list[Event] = []
    engine = Engine(
        EngineSettings.of(CONFIG), 11, events.append, timebox=TimeBox(CONFIG.budget_s),
        connector=memory_connector(make_server),
    )  # fmt: skip
    anyio.run(engine.run)
    return engine, [e for e in events if isinstance(e, CallFinished)]


def _mutants(monkeypatch: pytest.MonkeyPatch) -> list[Case]:
    """Wraps `LiveCorpus.mutant` to collect the mutants it hands out."""
    made: list[Case] = []
    original = live_corpus.LiveCorpus.mutant

    def mutant(self: live_corpus.LiveCorpus, plan: ToolPlan, case: Case) -> Case | None:
        found = original(self, plan, case)
        if found is not None and found is not case:
            made.append(found)
        return found

    monkeypatch.setattr(live_corpus.LiveCorpus, "mutant", mutant)
    return made


def _unsent(made: list[Case], calls: list[CallFinished]) -> int:
    return len(made) - sum(1 for c in calls if c.origin.startswith("mutate:"))


def test_unsent_mutants_are_not_held(monkeypatch: pytest.MonkeyPatch) -> None:
    made = _mutants(monkeypatch)
    engine, calls = _run()
    live = engine.live
    assert live is not None
    # The run made mutants it did not send (the point of the test), and sent some it did.
    assert _unsent(made, calls) > 0
    assert any(c.origin.startswith("mutate:") for c in calls)
    # Every mutant handed out was either sent (and its entry credited) or given back: none is held.
    assert live._parents == {}


def test_repeats_halve_the_mutation_share(monkeypatch: pytest.MonkeyPatch) -> None:
    made = _mutants(monkeypatch)
    _, calls = _run()
    halved = _unsent(made, calls)
    monkeypatch.setattr(live_corpus, "MAX_HALVINGS", 0)
    made.clear()
    _, calls = _run()
    # Without the halving the tool makes several times the mutants it does not send.
    assert _unsent(made, calls) > 3 * halved
