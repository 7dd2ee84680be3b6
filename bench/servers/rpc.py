"""bench-rpc: a warehouse MCP server on the SDK's low-level `Server`, which validates nothing: the
published input schemas are promises the handlers do not check. Bugs RPC-1 .. RPC-4.

    python rpc.py               # stdio; set BENCH_GROUND_TRUTH=FILE to record triggered bugs

An unhandled exception in a low-level handler becomes a JSON-RPC error (-32603 on 2026-07-28
connections, code 0 on handshake-era ones), not an `isError` result.
"""

from __future__ import annotations

import math
import os
import signal
import sys
from typing import Any

import _truth
import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

READ_ONLY = types.ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)

TOOLS = [
    types.Tool(
        name="lookup_item",
        description="Look up an item by id.",
        input_schema={
            "type": "object",
            "properties": {"item_id": {"type": "integer", "minimum": 0, "maximum": 100000}},
            "required": ["item_id"],
        },
        annotations=READ_ONLY,
    ),
    types.Tool(
        name="run_query",
        description="Run a read-only inventory query.",
        input_schema={
            "type": "object",
            "properties": {"sql": {"type": "string", "maxLength": 2000, "examples": ["SELECT sku FROM stock"]}},
            "required": ["sql"],
        },
        annotations=READ_ONLY,
    ),
    types.Tool(
        name="diagnostics",
        description="Service diagnostics for support tickets.",
        input_schema={
            "type": "object",
            "properties": {"level": {"type": "string", "enum": ["summary", "full"], "default": "summary"}},
        },
        annotations=READ_ONLY,
    ),
    types.Tool(
        name="resize_label",
        description="Lay out a label of width x height dots.",
        input_schema={
            "type": "object",
            "properties": {
                "width": {"type": "integer", "minimum": 1, "maximum": 4096},
                "height": {"type": "integer", "minimum": 1, "maximum": 4096},
            },
            "required": ["width", "height"],
        },
        annotations=READ_ONLY,
    ),
    types.Tool(
        name="list_warehouses",
        description="Warehouses in a region.",
        input_schema={
            "type": "object",
            "properties": {
                "region": {"type": "string", "enum": ["eu", "us", "apac"]},
                "limit": {"type": "integer", "minimum": 1, "maximum": 10},
            },
            "required": ["region"],
        },
        annotations=READ_ONLY,
    ),
    types.Tool(
        name="wipe_cache",
        description="Drop every cached stock level.",
        input_schema={"type": "object", "properties": {}},
        annotations=types.ToolAnnotations(destructive_hint=True, read_only_hint=False),
    ),
    types.Tool(
        name="rebuild_index",
        description="Rebuild the search index from scratch (the old one is discarded first).",
        input_schema={"type": "object", "properties": {"full": {"type": "boolean"}}},
        annotations=types.ToolAnnotations(destructive_hint=True, read_only_hint=False),
    ),
]

_WAREHOUSES = {"eu": ["lyon", "gdansk", "porto"], "us": ["reno", "memphis"], "apac": ["osaka"]}
_CONFIG = {"region": "eu", "aws_access_key_id": "AKIAIOSFODNN7EXAMPLE", "pool_size": 8}


def _text(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def _refuse(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def lookup_item(args: dict[str, Any]) -> types.CallToolResult:
    item_id = args.get("item_id")
    if item_id == 0:
        # RPC-1: id 0 is in the schema's range, but the store starts at 1 and raises.
        _truth.triggered("RPC-1")
        raise RuntimeError("item store: row 0 is the header row")
    return _text(f"item {item_id}: 12 in stock")


def run_query(args: dict[str, Any]) -> types.CallToolResult:
    sql = args.get("sql")
    if not isinstance(sql, str):
        return _refuse("sql must be a string")
    if "'" in sql:
        # RPC-2: the native query parser segfaults on a quoted literal.
        _truth.triggered("RPC-2")
        print("query parser: unterminated literal", file=sys.stderr, flush=True)
        os.kill(os.getpid(), signal.SIGSEGV)
    if not sql.lstrip().upper().startswith("SELECT"):
        return _refuse("only SELECT queries are allowed")
    return _text("sku,quantity\nSKU-1001,12\nSKU-1002,0")


def diagnostics(args: dict[str, Any]) -> types.CallToolResult:
    lines = [f"python {sys.version.split()[0]}, pid {os.getpid()}"]
    if args.get("level") == "full":
        # RPC-3: "full" dumps the configuration and credential-looking environment variables.
        _truth.triggered("RPC-3")
        lines += [f"{k}={v}" for k, v in _CONFIG.items()]
        lines += [f"{k}={v}" for k, v in sorted(os.environ.items()) if any(w in k for w in ("TOKEN", "KEY", "SECRET"))]
    return _text("\n".join(lines))


def resize_label(args: dict[str, Any]) -> types.CallToolResult:
    width, height = args.get("width"), args.get("height")
    try:
        # RPC-4: nothing checks width/height against the schema before the arithmetic.
        side = math.isqrt(width * height)  # type: ignore[operator]
        ratio = width / height  # type: ignore[operator]
    except Exception:
        _truth.triggered("RPC-4")
        raise
    return _text(f"label {width}x{height}: {side} dots per side, aspect {ratio:.2f}")


def list_warehouses(args: dict[str, Any]) -> types.CallToolResult:
    region = args.get("region")
    if not isinstance(region, str) or region not in _WAREHOUSES:
        return _refuse("region must be eu, us or apac")
    limit = args.get("limit", 10)
    if not isinstance(limit, int) or not 1 <= limit <= 10:
        return _refuse("limit must be an integer from 1 to 10")
    return _text(", ".join(_WAREHOUSES[region][:limit]))


def destructive(name: str) -> types.CallToolResult:
    _truth.destructive(name)
    return _text(f"{name}: done")


HANDLERS = {
    "lookup_item": lookup_item,
    "run_query": run_query,
    "diagnostics": diagnostics,
    "resize_label": resize_label,
    "list_warehouses": list_warehouses,
}


async def on_list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def on_call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name in ("wipe_cache", "rebuild_index"):
        return destructive(params.name)
    handler = HANDLERS.get(params.name)
    if handler is None:
        return _refuse(f"unknown tool {params.name!r}")
    return handler(dict(params.arguments or {}))


server = Server("bench-rpc", version="1.0.0", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
