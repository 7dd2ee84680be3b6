"""An MCP server with many tools (300 by default), each with its own small schema.

    python many_tools.py [N]

Tool `tool_<i>` takes an integer `n` and a string `label` (bounded differently per tool) and
answers at once; `tool_<i>` with n == i fails with an unhandled exception (one bug per tool, so a
run shows how far through the tool list it got).
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 300
TOOLS = [
    types.Tool(
        name=f"tool_{i}",
        description=f"Tool number {i}.",
        input_schema={
            "type": "object",
            "properties": {
                "n": {"type": "integer", "minimum": 0, "maximum": 10 + i},
                "label": {"type": "string", "maxLength": 5 + i % 17, "pattern": f"^[a-z]{{0,{3 + i % 7}}}$"},
            },
            "required": ["n"],
        },
        annotations=types.ToolAnnotations(read_only_hint=True),
    )
    for i in range(COUNT)
]
NAMES = {tool.name for tool in TOOLS}


async def on_list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name not in NAMES:
        # Refused as the specification asks: the planted bugs are the n == i ones only.
        text = types.TextContent(type="text", text=f"unknown tool {params.name}")
        return types.CallToolResult(content=[text], is_error=True)
    index = int(params.name.removeprefix("tool_"))
    n = (params.arguments or {}).get("n")
    if n == index:
        raise RuntimeError(f"tool {index} cannot take its own number")
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"ok {n}")])


server = Server("many-tools", version="1.0.0", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
