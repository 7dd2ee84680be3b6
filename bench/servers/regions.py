"""bench-regions: a storage MCP server (MCPServer) whose one known region is quoted only in a
description ("e.g. 'eu-west-3'"), and whose price table lacks that region. The schema says only
"string"; every other value is refused as an unknown region before any code that could fail.
Bug REG-1.

    python regions.py           # stdio; set BENCH_GROUND_TRUTH=FILE to record triggered bugs

The clean look-alike `count_buckets` has the same parameter and description, and no price lookup.
"""

from __future__ import annotations

from typing import Annotated

import _truth
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

app = MCPServer("bench-regions", version="1.0.0", instructions="Object storage buckets per cloud region.")
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)

Region = Annotated[str, Field(max_length=64, description="Cloud region, e.g. 'eu-west-3'.")]

_BUCKETS = {"eu-west-3": ["invoices", "backups", "thumbnails"]}
_PRICE_CENTS_PER_GB: dict[str, int] = {}
"""Filled from the billing export, which does not list eu-west-3 yet."""


def _buckets_of(region: str) -> list[str]:
    if region not in _BUCKETS:
        raise ToolError(f"unknown region {region!r}")
    return _BUCKETS[region]


@app.tool(annotations=READ_ONLY)
def list_buckets(region: Region) -> list[str]:
    """The buckets of a region, with their monthly price."""
    buckets = _buckets_of(region)
    if region not in _PRICE_CENTS_PER_GB:
        # REG-1: the price lookup has no default (KeyError).
        _truth.triggered("REG-1")
    price = _PRICE_CENTS_PER_GB[region]
    return [f"{name}: {price} cents/GB" for name in buckets]


# ------------------------------------------------------------------------------------------ clean


@app.tool(annotations=READ_ONLY)
def count_buckets(region: Region) -> int:
    """How many buckets a region has."""
    return len(_buckets_of(region))


if __name__ == "__main__":
    app.run("stdio")
