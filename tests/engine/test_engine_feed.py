"""The engine's feed, through the real engine against an in-memory server: an id a listing returns
reaches the tool that takes it, a created object goes through create → read → update → delete →
delete again → read after delete, and with one call in flight two runs send the same requests."""

from __future__ import annotations

import itertools
import uuid
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from fuzzgate.config.model import Config, TargetConfig, TargetKind
from fuzzgate.engine.events import CallFinished, Event
from fuzzgate.engine.execute import Engine
from fuzzgate.engine.settings import EngineSettings
from fuzzgate.plan.budget import TimeBox
from fuzzgate.target.memory import memory_connector

SEEDED = "5eed0000-0000-4000-8000-00000000beef"
ItemId = Annotated[str, Field(max_length=64)]


class Item(BaseModel):
    id: str
    name: str


def make_server() -> MCPServer:
    """Items with ids the server makes (the same ones on every server: uuid5 of a counter)."""
    app = MCPServer("items")
    items: dict[str, str] = {SEEDED: "seeded"}
    made = [0]

    def existing(item_id: str) -> str:
        if item_id not in items:
            raise ToolError("no such item")
        return items[item_id]

    @app.tool()
    def list_items() -> list[Item]:
        """Every item."""
        return [Item(id=k, name=v) for k, v in items.items()]

    @app.tool()
    def create_item(name: Annotated[str, Field(max_length=50)]) -> Item:
        """Make an item."""
        made[0] += 1
        item_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"item/{made[0]}"))
        items[item_id] = name
        return Item(id=item_id, name=name)

    @app.tool()
    def get_item(item_id: ItemId) -> Item:
        """An item."""
        return Item(id=item_id, name=existing(item_id))

    @app.tool()
    def rename_item(item_id: ItemId, name: Annotated[str, Field(max_length=50)]) -> Item:
        """Rename an item."""
        existing(item_id)
        items[item_id] = name
        return Item(id=item_id, name=name)

    @app.tool()
    def delete_item(item_id: ItemId) -> str:
        """Delete an item."""
        existing(item_id)
        del items[item_id]
        return "deleted"

    return app


CONFIG = Config(
    target=TargetConfig(kind=TargetKind.STDIO, command="memory"),
    budget_s=120,
    cases=12,
    replays=0,
    concurrency=1,
    slow_ms=600_000,
    allow_destructive=("delete_item",),
)


def _calls() -> list[CallFinished]:
    events: list[Event] = []
    engine = Engine(
        EngineSettings.of(CONFIG),
        5,
        events.append,
        timebox=TimeBox(CONFIG.budget_s),
        connector=memory_connector(make_server),
    )
    anyio.run(engine.run)
    return [e for e in events if isinstance(e, CallFinished) and e.surface.value == "tool"]


def _requests(calls: list[CallFinished]) -> list[tuple[str, Any, str]]:
    return [(c.tool, c.arguments, c.origin) for c in calls]


def test_listed_ids_sequences_and_the_same_requests_twice() -> None:
    calls = _calls()
    tools = [c.tool for c in calls]
    # The listing goes first, and the id it returned reaches get_item.
    assert tools[0] == "list_items"
    assert any(c.tool == "get_item" and c.arguments == {"item_id": SEEDED} for c in calls)

    # A created item's sequence: each step the next call after the one before.
    created = next(c for c in calls if c.tool == "create_item" and c.outcome.status.value == "ok")
    first = str(uuid.uuid5(uuid.NAMESPACE_URL, "item/1"))
    assert first in created.outcome.text
    at = calls.index(created)
    sequence = [(c.tool, c.origin.split(":")[1:3], c.outcome.status.value) for c in calls[at + 1 : at + 6]]
    assert sequence == [
        ("get_item", ["read", "first"], "ok"),
        ("rename_item", ["update", "first"], "ok"),
        ("delete_item", ["delete", "first"], "ok"),
        ("delete_item", ["delete", "again"], "tool_error"),
        ("get_item", ["read", "after-delete"], "tool_error"),
    ]
    assert all(c.arguments["item_id"] == first for c in calls[at + 1 : at + 6])

    # No identical request twice to a tool while nothing changed the state: list_items (read-only)
    # never gets the same arguments twice in a row (corpus mutants add and remove extra properties).
    assert all(
        not (a.tool == b.tool == "list_items" and a.arguments == b.arguments) for a, b in itertools.pairwise(calls)
    )

    # With one call in flight, the same seed, config and server give the same requests.
    assert _requests(_calls()) == _requests(calls)
