"""bench-batch: a tagging MCP server (MCPServer) whose native batch buffer holds 50 entries, while
the schema puts no bound on the array: more than fifty items overflow it and the process dies
(SIGSEGV). Bug ARR-1.

    python batch.py             # stdio; set BENCH_GROUND_TRUTH=FILE to record triggered bugs

The clean look-alike `count_tags` takes the same array through the same code with a buffer that
grows.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Annotated

import _truth
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from pydantic import Field

app = MCPServer("bench-batch", version="1.0.0", instructions="Tag items in batches.")
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
BUFFER_SLOTS = 50

Items = Annotated[list[Annotated[str, Field(max_length=100)]], Field(description="Item names, one per entry.")]


def _tags(items: list[str], fixed_buffer: bool) -> dict[str, int]:
    if fixed_buffer and len(items) > BUFFER_SLOTS:
        # ARR-1: the 51st entry is written past the end of the native buffer.
        _truth.triggered("ARR-1")
        sys.stderr.write(f"tagger: writing slot {BUFFER_SLOTS} of {BUFFER_SLOTS}\n")
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGSEGV)
    counts: dict[str, int] = {}
    for item in items:
        tag = item.strip().split(" ")[0].lower() or "untagged"
        counts[tag] = counts.get(tag, 0) + 1
    return counts


@app.tool(annotations=READ_ONLY)
def tag_items(items: Items) -> dict[str, int]:
    """Tag every item by its first word; returns how many items got each tag."""
    return _tags(items, fixed_buffer=True)


# ------------------------------------------------------------------------------------------ clean


@app.tool(annotations=READ_ONLY)
def count_tags(items: Items) -> int:
    """How many distinct tags the items would get."""
    return len(_tags(items, fixed_buffer=False))


if __name__ == "__main__":
    app.run("stdio")
