"""A clean MCP server on the real Python SDK whose tools all require arguments.

    python sdk_strict.py

| tool                       | behaviour                                                          |
| -------------------------- | ------------------------------------------------------------------ |
| `add(a, b)`                | clean: a + b                                                       |
| `label(name, colour)`      | clean: refuses a colour it does not know with a plain tool error   |
| `repeat(text, times)`      | clean: the text repeated, at most 10 times and 1000 characters      |

Nothing here is the server's bug. What a run may see is the SDK's: the lone-surrogate request its
transport drops without a reply (every mcp release), and a validation error for input the schema
forbids, which the SDK rejects before any of this code runs.
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

app = MCPServer("sdk-strict", log_level="WARNING")
COLOURS = ("red", "green", "blue")


@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@app.tool()
def label(name: Annotated[str, Field(max_length=100)], colour: str) -> str:
    """Label something with a colour (red, green or blue)."""
    if colour not in COLOURS:
        raise ToolError(f"unknown colour; use one of {', '.join(COLOURS)}")
    return f"{name} is {colour}"


@app.tool()
def repeat(text: Annotated[str, Field(max_length=100)], times: Annotated[int, Field(ge=0, le=10)]) -> str:
    """Repeat a text."""
    return (text * times)[:1000]


if __name__ == "__main__":
    app.run()
