"""An MCP server whose tool schemas are hostile to a generator: a catastrophic regex `pattern`, a
huge `enum`, a schema whose recursion never bottoms out, plus one ordinary tool.

    python hostile_schemas.py

Every tool answers at once. A fuzzer must skip the three hostile tools with a reason (within a
bounded time each) and still fuzz `plain`.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

TOOLS = [
    types.Tool(
        name="catastrophic_pattern",
        description="A pattern with exponential backtracking on non-matching input.",
        input_schema={
            "type": "object",
            "properties": {"code": {"type": "string", "pattern": "^(a|a)+$", "minLength": 30}},
            "required": ["code"],
        },
    ),
    types.Tool(
        name="huge_enum",
        description="A choice among 200,000 values.",
        input_schema={
            "type": "object",
            "properties": {"choice": {"enum": [f"value-{i:06d}" for i in range(200_000)]}},
            "required": ["choice"],
        },
    ),
    types.Tool(
        name="endless_recursion",
        description="A node that always requires a child node.",
        input_schema={
            "type": "object",
            "$defs": {
                "node": {
                    "type": "object",
                    "properties": {"child": {"$ref": "#/$defs/node"}, "name": {"type": "string"}},
                    "required": ["child"],
                }
            },
            "properties": {"root": {"$ref": "#/$defs/node"}},
            "required": ["root"],
        },
    ),
    types.Tool(
        name="plain",
        description="An ordinary tool.",
        input_schema={"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]},
    ),
]


async def on_list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text="ok")])


server = Server("hostile-schemas", version="1.0.0", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
