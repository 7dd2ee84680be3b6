"""A bug that needs earlier calls, through the real engine against an in-memory server: fuzzing
records the calls since the server started as the repro's prefix, verification confirms the
sequence on fresh servers (alone first, which cannot reproduce it) and shrinks it to the calls the
bug needs. The memory connector starts no process and lays out no workspace, so no probes are sent."""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import MCPServer
from pydantic import Field

from fuzzgate.check import Oracles
from fuzzgate.check.secrets import SecretScanner
from fuzzgate.config.model import Config, TargetConfig, TargetKind
from fuzzgate.engine.events import CallFinished, Event
from fuzzgate.engine.execute import Engine
from fuzzgate.engine.replay import replay_once
from fuzzgate.engine.result import EngineResult
from fuzzgate.engine.settings import EngineSettings, VerifySettings
from fuzzgate.model.findings import Finding, Kind
from fuzzgate.plan.budget import TimeBox
from fuzzgate.target.memory import memory_connector

servers_made = itertools.count()


def make_server() -> MCPServer:
    """Handles numbered 1, 2, ... per server; using a closed handle raises (an unhandled exception).
    `count` and `label` have nothing to do with the bug: the first round of cases calls every tool
    in this order, so the first failing `use` comes after calls that shrinking must drop."""
    next(servers_made)
    app = MCPServer("handles")
    created: list[int] = []
    closed: set[int] = set()

    @app.tool()
    def create() -> int:
        """Open a new handle."""
        created.append(len(created) + 1)
        return created[-1]

    @app.tool()
    def count() -> int:
        """How many handles were opened."""
        return len(created)

    @app.tool()
    def close(handle: Annotated[int, Field(ge=1, le=2)]) -> str:
        """Close an open handle."""
        if handle not in created or handle in closed:
            return "no such open handle"
        closed.add(handle)
        return "closed"

    @app.tool()
    def label(text: str) -> str:
        """Echo a label."""
        return text[:20]

    @app.tool()
    def use(handle: Annotated[int, Field(ge=1, le=2)]) -> str:
        """Use a handle (a closed one is used anyway: the bug)."""
        if handle in closed:
            raise RuntimeError("handle was freed")
        return "used" if handle in created else "no such handle"

    return app


def _config(**overrides: Any) -> Config:
    # The SDK logs the tool's exception with a rich traceback, which takes a second on a loaded
    # machine: slow calls are not what this test is about.
    base = Config(
        target=TargetConfig(kind=TargetKind.STDIO, command="memory"), budget_s=60, cases=8, replays=3, slow_ms=600_000
    )
    return replace(base, **overrides)


def _run(config: Config) -> tuple[EngineResult, list[Event]]:
    events: list[Event] = []
    engine = Engine(
        EngineSettings.of(config),
        11,
        events.append,
        timebox=TimeBox(config.budget_s),
        connector=memory_connector(make_server),
    )
    return anyio.run(engine.run), events


def _replay(config: Config, finding: Finding) -> bool:
    oracles = Oracles(slow_s=config.slow_ms / 1000, scanner=SecretScanner([], {}))

    async def main() -> bool:
        same, _ = await replay_once(VerifySettings.of(config), oracles, finding, {}, memory_connector(make_server))
        return same

    return anyio.run(main)


def test_a_use_after_close_is_confirmed_as_a_sequence_and_shrunk() -> None:
    config = _config()
    result, events = _run(config)
    calls = [e for e in events if isinstance(e, CallFinished)]
    assert not any(e.origin.startswith("probe:") for e in calls)
    (finding,) = result.findings
    assert (finding.kind, finding.name) == (Kind.INTERNAL_ERROR, "use")
    assert (finding.replays, finding.flaky, finding.unconfirmed) == (3, False, False)
    assert finding.reproduced == 3
    # Fuzzing met the bug after calls it does not need: the repro it recorded was longer.
    first = next(i for i, e in enumerate(calls) if e.tool == "use" and e.observations)
    assert {"count", "label"} <= {e.tool for e in calls[:first]}
    # The fewest calls that free the handle `use` then uses: it is created (handles are numbered
    # in order, so as many creates as its number), then closed. Nothing else survives shrinking.
    handle = finding.repro.arguments["handle"]
    prefix = [(step.tool, step.arguments) for step in finding.repro.prefix]
    assert prefix == [("create", {})] * handle + [("close", {"handle": handle})]
    assert finding.repro.workspace is None
    # The shrunk sequence reproduces on a fresh server; the failing call alone does not.
    assert _replay(config, finding)
    assert not _replay(config, replace(finding, repro=replace(finding.repro, prefix=())))


def test_without_replays_the_whole_sequence_is_kept() -> None:
    result, events = _run(_config(replays=0))
    (finding,) = result.findings
    calls = [e for e in events if isinstance(e, CallFinished)]
    first = next(i for i, e in enumerate(calls) if e.tool == "use" and e.observations)
    # The prefix is every call the fuzzing server received before the first failing one.
    assert [step.tool for step in finding.repro.prefix] == [e.tool for e in calls[:first]]
    assert len(finding.repro.prefix) >= 2
