"""bench-inventory: an inventory MCP server (MCPServer) whose item store is a C extension with a
use-after-free: reading or deleting an item that was deleted trips an assertion that aborts the
process. Only a sequence reaches it (create, delete, then get or delete the same id); ids are small
integers from 1, in creation order, so a fuzzer can hit them. Bugs INV-1, INV-2.

    python inventory.py --root DIR  # stdio; set BENCH_GROUND_TRUTH=FILE to record triggered bugs

Items live in memory for the process's life; `export_items` writes them to DIR/items.json.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from typing import Annotated

import _scope
import _truth
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

ROOT = _scope.root_from_argv(__doc__)
MAX_ITEMS = 100

app = MCPServer("bench-inventory", version="1.0.0", instructions="Track items by number.")
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False)

ItemId = Annotated[int, Field(ge=1, le=MAX_ITEMS, description="An item's number (1, 2, ... in creation order).")]


class Item(BaseModel):
    id: int
    name: str


_ITEMS: dict[int, Item] = {}
_FREED: set[int] = set()
"""Ids whose slot the extension freed but still indexes: the dangling entries."""
_next_id = 1


def _abort_on_freed_slot(bug: str, function: str) -> None:
    """What the extension does on a freed slot: an assertion on stderr, then the process is gone."""
    _truth.triggered(bug)
    traceback.print_stack(file=sys.stderr)
    sys.stderr.write(f"python3: _inventory.c:212: {function}: Assertion `slot->live' failed.\nAborted\n")
    sys.stderr.flush()
    os._exit(70)


@app.tool(annotations=WRITES)
def create_item(name: Annotated[str, Field(min_length=1, max_length=100, examples=["bolt M6"])]) -> Item:
    """Add an item; its id is the next number."""
    global _next_id
    if _next_id > MAX_ITEMS:
        raise ToolError(f"the inventory holds at most {MAX_ITEMS} items")
    item = Item(id=_next_id, name=name)
    _ITEMS[_next_id] = item
    _next_id += 1
    return item


@app.tool(annotations=READ_ONLY)
def get_item(id: ItemId) -> Item:
    """An item by id."""
    if id in _FREED:
        # INV-1: use after delete.
        _abort_on_freed_slot("INV-1", "inventory_get")
    if id not in _ITEMS:
        raise ToolError(f"no item {id}")
    return _ITEMS[id]


@app.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False))
def delete_item(id: ItemId) -> str:
    """Remove an item."""
    if id in _FREED:
        # INV-2: delete after delete (a double free).
        _abort_on_freed_slot("INV-2", "inventory_delete")
    if id not in _ITEMS:
        raise ToolError(f"no item {id}")
    del _ITEMS[id]
    _FREED.add(id)
    return f"item {id} deleted"


# ------------------------------------------------------------------------------------------ clean


@app.tool(annotations=READ_ONLY)
def list_items() -> list[Item]:
    """Every item, by id."""
    return [_ITEMS[i] for i in sorted(_ITEMS)]


@app.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True))
def export_items() -> str:
    """Write every item to items.json in the inventory folder."""
    (ROOT / "items.json").write_text(json.dumps([i.model_dump() for i in list_items()], indent=2), encoding="utf-8")
    return f"exported {len(_ITEMS)} items to items.json"


if __name__ == "__main__":
    app.run("stdio")
