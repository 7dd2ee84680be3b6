"""The engine in-process, against in-memory MCP servers (the connector seam): scheduler, keeper,
oracles, verification and the time box, with no process started."""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

from fuzzgate.config.model import Config, TargetConfig, TargetKind
from fuzzgate.engine.events import CallFinished, Event
from fuzzgate.engine.execute import Engine
from fuzzgate.engine.result import EngineResult
from fuzzgate.engine.settings import EngineSettings
from fuzzgate.model.findings import Kind
from fuzzgate.plan.budget import TimeBox
from fuzzgate.target.memory import memory_connector

LEAKED = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
servers_made = itertools.count()


class Stock(BaseModel):
    quantity: int


def make_server() -> MCPServer:
    next(servers_made)
    app = MCPServer("memory-example")

    @app.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @app.tool()
    def divide(a: int, b: int) -> float:
        """Divide a by b (b = 0 raises: an unhandled exception)."""
        return a / b

    @app.tool()
    async def nap(seconds: float = 0.0) -> str:
        """Sleep a moment (so that calls overlap)."""
        await anyio.sleep(0.02)
        return "rested"

    @app.tool()
    def whoami(verbose: bool = False) -> str:
        """Leaks a token when verbose."""
        return f"user=alice token={LEAKED}" if verbose else "user=alice"

    return app


STOCK = types.Tool(
    name="stock",
    description="Stock level; reports a string quantity for long SKUs (output schema drift).",
    input_schema={"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]},
    output_schema=Stock.model_json_schema(),
)


def make_lowlevel_server() -> Server[Any]:
    """MCPServer validates its own output; a low-level server sends whatever its handler returns."""

    async def on_list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[STOCK])

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        sku = (params.arguments or {}).get("sku")
        quantity: int | str = "unknown" if isinstance(sku, str) and len(sku) > 2 else 3
        return types.CallToolResult(content=[], structured_content={"quantity": quantity})

    return Server("memory-lowlevel", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


def _config(**overrides: Any) -> Config:
    base = Config(target=TargetConfig(kind=TargetKind.STDIO, command="memory"), budget_s=20, cases=60, replays=2)
    return replace(base, **overrides)


def _run(config: Config, factory: Any = make_server) -> tuple[EngineResult, list[Event]]:
    events: list[Event] = []
    engine = Engine(
        EngineSettings.of(config),
        7,
        events.append,
        timebox=TimeBox(config.budget_s),
        connector=memory_connector(factory),
    )
    return anyio.run(engine.run), events


def test_finds_each_planted_bug_and_confirms_it_on_fresh_servers() -> None:
    before = next(servers_made)
    result, events = _run(_config())
    kinds = {(f.name, f.kind) for f in result.findings}
    assert ("divide", Kind.INTERNAL_ERROR) in kinds
    assert ("whoami", Kind.SECRET_LEAK) in kinds
    assert all(name != "add" for name, _ in kinds)
    for finding in result.findings:
        assert (finding.replays, finding.reproduced, finding.flaky, finding.unconfirmed) == (2, 2, False, False)
    # One server for fuzzing (nothing crashed it), a fresh one per replay; replays of a repro that a
    # smaller one replaced later were sent too, so at least as many as the final tallies.
    replays = sum(f.replays for f in result.findings)
    assert next(servers_made) - before - 1 >= 1 + replays
    # `--cases 60` bounds each tool's generated cases; corpus mutants, seeds and shrinks come on top.
    calls = [e for e in events if isinstance(e, CallFinished)]
    assert result.calls == len(calls)
    # (A generated case identical to a request a mutant already sent the unchanged server is skipped.)
    generated = [e for e in calls if not e.origin.startswith(("mutate:", "shrink:", "corpus"))]
    assert 4 * 50 <= len(generated) <= 4 * 60
    assert max(e.case_index for e in generated) == 59


def test_output_schema_drift_is_checked_without_the_sdk() -> None:
    result, _ = _run(_config(), make_lowlevel_server)
    (drift,) = [f for f in result.findings if f.kind is Kind.SCHEMA_VIOLATION]
    assert drift.name == "stock" and "quantity" in drift.message and drift.reproduced == drift.replays == 2


def test_concurrency_counts_the_calls_really_in_flight() -> None:
    # Four workers, one tool, one case: only one call is ever in flight, so nothing is ambiguous.
    _, events = _run(_config(concurrency=4, cases=1, include=("divide",)))
    outcomes = [e.outcome for e in events if isinstance(e, CallFinished)]
    assert [o.concurrent for o in outcomes] == [1]
    # Two workers on a tool that takes a moment: calls overlap, and say so.
    _, events = _run(_config(concurrency=2, cases=10, replays=0, include=("nap",)))
    peaks = {e.outcome.concurrent for e in events if isinstance(e, CallFinished)}
    assert 2 in peaks and peaks <= {1, 2}


def test_a_tiny_budget_stops_fuzzing_and_reports_what_it_cut() -> None:
    result, _ = _run(_config(budget_s=0.5, cases=None, replays=3))
    assert set(result.timing) == {"startup", "discovery", "fuzzing", "verification"}
    assert result.timing["startup"] <= result.timing["discovery"] <= result.timing["fuzzing"]
    assert result.timing["fuzzing"] <= result.timing["verification"]
    for finding in result.findings:
        if finding.replays < 3:
            assert finding.unconfirmed or result.notes


@pytest.mark.parametrize("replays", [0, 1])
def test_replays_zero_keeps_findings_unreplayed(replays: int) -> None:
    result, _ = _run(_config(replays=replays, include=("divide",)))
    (finding,) = result.findings
    assert finding.replays == replays and not finding.unconfirmed


def make_late_server() -> MCPServer:
    app = MCPServer("memory-late")

    @app.tool()
    async def settle(amount: int = 0) -> str:
        """Answers only after the run's fuzzing deadline, with an unhandled exception."""
        await anyio.sleep(1.5)
        raise RuntimeError("settlement failed")

    return app


def test_a_call_in_flight_at_the_deadline_is_observed_not_dropped() -> None:
    # A 1 s budget: the first call is sent at once and answers (with a bug) well after the fuzzing
    # deadline. It was sent, so it is observed: reported, unconfirmed (no replay fits), never a PASS.
    result, events = _run(_config(budget_s=1, cases=None, replays=1), make_late_server)
    calls = [e for e in events if isinstance(e, CallFinished)]
    assert calls and calls[0].tool == "settle"
    (finding,) = result.findings
    assert finding.kind is Kind.INTERNAL_ERROR and finding.unconfirmed


def make_slow_server() -> MCPServer:
    app = MCPServer("memory-slow")

    @app.tool()
    async def wait(amount: int = 0) -> str:
        """Never answers: a hang."""
        await anyio.sleep(60)
        return "done"

    return app


def test_a_hang_in_flight_at_the_deadline_is_observed_to_its_end() -> None:
    # A 1 s budget and a 6 s call timeout: the first call is in flight at the deadline and hangs.
    # Observing the hang takes the timeout and the ping after it, longer than half the margin
    # (5 s): the grace covers what observing a hang takes, so the hang is reported, never cut off.
    config = _config(budget_s=1, cases=None, replays=1, target=replace(_config().target, timeout_ms=6000))
    result, _ = _run(config, make_slow_server)
    (finding,) = result.findings
    assert finding.kind is Kind.HANG and finding.name == "wait" and finding.unconfirmed
    assert result.cut_off == () and not any("cut off" in note for note in result.notes)


def make_busy_server() -> MCPServer:
    app = MCPServer("memory-busy")

    @app.tool()
    def fail(text: str = "") -> str:
        """Raises at once: an unhandled exception."""
        raise RuntimeError("always")

    @app.tool()
    async def slow(amount: int = 0) -> str:
        """Takes most of a run, under the run's slow threshold: the call in flight at fuzzing's deadline."""
        await anyio.sleep(3.0)
        return "done"

    return app


def test_verification_keeps_its_time_when_the_calls_in_flight_at_the_deadline_take_theirs() -> None:
    # An HTTP target replays after fuzzing, on the one address: its replays wait for the calls in
    # flight at the deadline. A 3 s budget: `slow`, sent after `fail`'s first call, is the call in
    # flight then, and ends past verification's planned end; `fail`'s finding went unconfirmed.
    # The grace now moves verification's end into the margin.
    http = TargetConfig(kind=TargetKind.HTTP, url="http://memory/mcp", timeout_ms=5000)
    config = _config(target=http, budget_s=3, cases=None, replays=2, slow_ms=4000)
    result, _ = _run(config, make_busy_server)
    (finding,) = [f for f in result.findings if f.name == "fail"]
    assert (finding.replays, finding.reproduced) == (2, 2), finding
    assert result.cut_off == ()


def make_progress_server() -> MCPServer:
    app = MCPServer("memory-progress")

    @app.tool()
    async def crawl(ctx: Context, pages: int = 0) -> str:
        """Reports progress forever: each report restarts the call's timeout (up to six timeouts)."""
        step = 0
        while True:
            step += 1
            await ctx.report_progress(step)
            await anyio.sleep(0.2)

    return app


def test_a_call_in_flight_that_outlasts_the_grace_is_named_as_cut_off() -> None:
    # Progress keeps the call going for up to six 1 s timeouts; the grace after the deadline is
    # what observing a call takes (its timeout and the slack after it), so it is cut off, and the
    # run says which call and that what it caused is not reported.
    config = _config(budget_s=1, cases=None, replays=1, target=replace(_config().target, timeout_ms=1000))
    result, _ = _run(config, make_progress_server)
    assert result.cut_off == ("crawl case 0",)
    assert any("cut off" in note and "crawl case 0" in note for note in result.notes), result.notes


def test_settled_fingerprints_are_counted_but_never_replayed() -> None:
    config = _config(cases=20, include=("divide", "whoami"))
    started = next(servers_made)
    first, _ = _run(config)
    servers_first = next(servers_made) - started - 1
    fingerprints = {f.name: f.fingerprint for f in first.findings}
    settled = frozenset({fingerprints["divide"]})
    events: list[Event] = []
    engine = Engine(
        EngineSettings.of(config), 7, events.append, timebox=TimeBox(config.budget_s),
        connector=memory_connector(make_server), settled=settled,
    )  # fmt: skip
    before = next(servers_made)
    result = anyio.run(engine.run)
    found = {f.name: f for f in result.findings}
    # Met again and counted, not replayed; the other bug is verified as before.
    assert found["divide"].fingerprint in settled and found["divide"].count > 0
    assert (found["divide"].replays, found["divide"].reproduced) == (0, 0)
    assert (found["whoami"].replays, found["whoami"].reproduced) == (2, 2)
    # Fewer fresh servers: divide's two replays (and those of any smaller repro) were not started.
    assert next(servers_made) - before - 1 <= servers_first - 2
