"""Drawing the next case while a call is on its way (`engine.next_case.draw_ahead`), through the real
engine against an in-memory server: the draws happen while the server works on the call before, a
seed still sends the same requests (the sequence steps a reply queues going first is
tests/engine/test_engine_feed.py's)."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.server.lowlevel import Server
from mcp_types import ToolAnnotations

from fuzzgate.config.model import Config, FeedbackMode, TargetConfig, TargetKind
from fuzzgate.engine import next_case
from fuzzgate.engine.events import CallFinished, Event
from fuzzgate.engine.execute import Engine
from fuzzgate.engine.settings import EngineSettings
from fuzzgate.plan.budget import TimeBox
from fuzzgate.target.memory import memory_connector

READ_ONLY = ToolAnnotations(read_only_hint=True)
TOOLS = [
    types.Tool(
        name="look",
        description="Look a word up.",
        input_schema={"type": "object", "properties": {"word": {"type": "string"}, "times": {"type": "integer"}},
                      "required": ["word"]},
        annotations=READ_ONLY,
    ),
    types.Tool(
        name="count",
        description="Count to n.",
        input_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        annotations=READ_ONLY,
    ),
]  # fmt: skip


class _Server:
    """A low-level server (it checks no arguments, so every call reaches its handler) whose calls
    take a moment, and that tells whether it is working on one."""

    def __init__(self) -> None:
        self.busy = 0

    def make(self) -> Server[Any]:
        async def on_list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
            return types.ListToolsResult(tools=TOOLS)

        async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
            self.busy += 1
            try:
                await anyio.sleep(0.005)
            finally:
                self.busy -= 1
            return types.CallToolResult(content=[types.TextContent(type="text", text=str(params.arguments))])

        return Server("moments", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


def _run(server: _Server, cases: int | None) -> list[CallFinished]:
    config = Config(
        target=TargetConfig(kind=TargetKind.STDIO, command="memory", feedback=FeedbackMode.BEHAVIOUR),
        budget_s=6,
        cases=cases,
        replays=0,
        concurrency=1,
    )
    events: list[Event] = []
    engine = Engine(
        EngineSettings.of(config), 7, events.append, timebox=TimeBox(config.budget_s),
        connector=memory_connector(server.make),
    )  # fmt: skip
    anyio.run(engine.run)
    return [e for e in events if isinstance(e, CallFinished) and e.surface.value == "tool"]


def test_the_next_case_is_drawn_while_the_server_works_on_the_call_before(monkeypatch: pytest.MonkeyPatch) -> None:
    server = _Server()
    during: list[bool] = []
    scheduled = next_case.scheduled_case

    async def recorded(*args: Any) -> Any:
        began = server.busy > 0
        drawn = await scheduled(*args)
        during.append(began or server.busy > 0)
        return drawn

    monkeypatch.setattr(next_case, "scheduled_case", recorded)
    calls = _run(server, 40)
    assert len(calls) >= 60, len(calls)
    # Most draws overlap a call (98 of 106 measured; none when each case is drawn after the reply):
    # not the first case's, nor one drawn again after a case drawn ahead turned out a repeat.
    assert sum(during) >= 0.75 * len(during), (sum(during), len(during))


def test_a_seed_sends_the_same_requests_when_drawn_ahead() -> None:
    first = [(c.tool, c.arguments, c.origin) for c in _run(_Server(), 40)]
    again = [(c.tool, c.arguments, c.origin) for c in _run(_Server(), 40)]
    assert len(first) >= 60
    assert again == first
