"""bench-briefing: a prompt MCP server on the SDK's low-level `Server`, which checks no prompt
arguments: `draft_briefing` declares `topic` required and capitalises its first letter without
looking, so an empty or missing topic raises. Bug PRM-1.

    python briefing.py          # stdio; set BENCH_GROUND_TRUTH=FILE to record triggered bugs

An unhandled exception in a low-level handler becomes a JSON-RPC error (-32603 on 2026-07-28
connections, code 0 on handshake-era ones) and a traceback on stderr. The clean look-alike prompt
`draft_summary` takes the same argument through the same code and refuses an empty or missing
topic with -32602.
"""

from __future__ import annotations

from typing import Any

import _truth
import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

PROMPTS = [
    types.Prompt(
        name="draft_briefing",
        description="A briefing on a topic for a given audience.",
        arguments=[
            types.PromptArgument(name="topic", description="What the briefing is about.", required=True),
            types.PromptArgument(name="audience", description="Who reads it, e.g. 'executives'.", required=False),
        ],
    ),
    types.Prompt(
        name="draft_summary",
        description="A one-paragraph summary of a topic.",
        arguments=[types.PromptArgument(name="topic", description="What to summarise.", required=True)],
    ),
]
TOOLS = [
    types.Tool(
        name="list_topics",
        description="Topics with material for a briefing.",
        input_schema={"type": "object", "properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 10}}},
        annotations=types.ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True),
    )
]
_TOPICS = ["quarterly results", "hiring plan", "data retention", "incident review"]


def _headline(arguments: dict[str, str] | None, check: bool) -> str:
    topic = (arguments or {}).get("topic", "")
    if not topic:
        if check:
            raise MCPError(code=types.INVALID_PARAMS, message="topic is required and must not be empty")
        # PRM-1: the first letter of an empty topic (IndexError).
        _truth.triggered("PRM-1")
    return topic[0].upper() + topic[1:]


def _message(text: str) -> types.PromptMessage:
    return types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))


async def on_list_prompts(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListPromptsResult:
    return types.ListPromptsResult(prompts=PROMPTS)


async def on_get_prompt(ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams) -> types.GetPromptResult:
    if params.name == "draft_briefing":
        audience = (params.arguments or {}).get("audience") or "the team"
        text = f"Write a briefing titled '{_headline(params.arguments, check=False)}' for {audience}."
    elif params.name == "draft_summary":
        text = f"Summarise '{_headline(params.arguments, check=True)}' in one paragraph."
    else:
        raise MCPError(code=types.INVALID_PARAMS, message=f"unknown prompt {params.name!r}")
    return types.GetPromptResult(messages=[_message(text)])


async def on_list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def on_call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name != "list_topics":
        raise MCPError(code=types.INVALID_PARAMS, message=f"unknown tool {params.name!r}")
    limit = (params.arguments or {}).get("limit", 10)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 10:
        return types.CallToolResult(content=[types.TextContent(type="text", text="limit must be 1..10")], is_error=True)
    return types.CallToolResult(content=[types.TextContent(type="text", text="\n".join(_TOPICS[:limit]))])


server = Server(
    "bench-briefing",
    version="1.0.0",
    on_list_prompts=on_list_prompts,
    on_get_prompt=on_get_prompt,
    on_list_tools=on_list_tools,
    on_call_tool=on_call_tool,
)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
