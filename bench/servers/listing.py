"""bench-listing: a catalogue MCP server (MCPServer) whose item store aborts on one legacy record. The
record's id is an opaque token that only `list_items` hands out: no schema, description or example
names it, and no generator guesses six hex digits. Bug LIS-1.

    python listing.py           # stdio; set BENCH_GROUND_TRUTH=FILE to record triggered bugs

The clean look-alike `describe_item` looks items up the same way, and handles the legacy record.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import _truth
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

app = MCPServer("bench-listing", version="1.0.0", instructions="A product catalogue: list items, then look one up.")
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)

ItemId = Annotated[str, Field(min_length=1, max_length=32, description="An item's id, as list_items returns it.")]


class Item(BaseModel):
    id: str
    name: str


class ItemDetail(BaseModel):
    id: str
    name: str
    price_cents: int
    stock: int


LEGACY_ID = "itm_7f3a9c"
"""Imported from the old shop: its price row is missing, which the native store asserts on."""

_ITEMS: dict[str, tuple[str, int | None, int]] = {
    "itm_20b1e4": ("hex bolt M6", 12, 4000),
    "itm_5c09d2": ("washer M6", 3, 12000),
    LEGACY_ID: ("wing nut M6 (legacy)", None, 70),
    "itm_a4e871": ("threaded rod M6 1m", 240, 85),
    "itm_e19f3b": ("lock nut M6", 9, 6100),
}


@app.tool(annotations=READ_ONLY)
def list_items() -> list[Item]:
    """Every item in the catalogue."""
    return [Item(id=i, name=name) for i, (name, _, _) in _ITEMS.items()]


@app.tool(annotations=READ_ONLY)
def get_item(item_id: ItemId) -> ItemDetail:
    """An item's price and stock."""
    if item_id not in _ITEMS:
        raise ToolError(f"no item {item_id!r}")
    name, price, stock = _ITEMS[item_id]
    if price is None:
        # LIS-1: the native price lookup asserts on the legacy record's missing row.
        _truth.triggered("LIS-1")
        sys.stderr.write("python3: _catalogue.c:88: price_of: Assertion `row != NULL' failed.\nAborted\n")
        sys.stderr.flush()
        os._exit(70)
    return ItemDetail(id=item_id, name=name, price_cents=price, stock=stock)


# ------------------------------------------------------------------------------------------ clean


@app.tool(annotations=READ_ONLY)
def describe_item(item_id: ItemId) -> ItemDetail:
    """An item's price and stock (a missing price reads as 0)."""
    if item_id not in _ITEMS:
        raise ToolError(f"no item {item_id!r}")
    name, price, stock = _ITEMS[item_id]
    return ItemDetail(id=item_id, name=name, price_cents=price or 0, stock=stock)


if __name__ == "__main__":
    app.run("stdio")
