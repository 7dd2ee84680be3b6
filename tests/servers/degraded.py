"""An MCP server with two buggy tools that can be started degraded.

| tool            | bug                                                   |
| --------------- | ----------------------------------------------------- |
| `explode(n)`    | raises an unhandled RuntimeError for every n          |
| `shatter(text)` | raises an unhandled ValueError for every text         |

With `DEGRADED_CONFIG` unset (the config it needs missing), every tool answers the same
`isError` reply, "not configured: set DEGRADED_CONFIG", as a server missing its environment does.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

# Plain text logs: MCPServer would draw each traceback through rich, a CPU-bound third of a second
# per exception (tests/servers/sdk_strict.py keeps rich, as most real servers on the SDK log).
logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
app = MCPServer("degraded", log_level="WARNING")
CONFIGURED = bool(os.environ.get("DEGRADED_CONFIG"))


def _configured() -> None:
    if not CONFIGURED:
        raise ToolError("not configured: set DEGRADED_CONFIG")


@app.tool()
def explode(n: Annotated[int, Field(ge=0, le=100)]) -> str:
    """Count to n."""
    _configured()
    raise RuntimeError(f"counter overflow at {n}")


@app.tool()
def shatter(text: Annotated[str, Field(max_length=20)]) -> str:
    """Split a text."""
    _configured()
    raise ValueError(f"cannot split {text!r}")


if __name__ == "__main__":
    app.run("stdio")
