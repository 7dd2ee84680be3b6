"""An MCP server with two tools that never answer: one wedges the whole server, one only itself.

- `freeze(x)`: `time.sleep` in the event loop: no other request (a ping, a cancel) is answered
  either, the whole server is down.
- `wait(x)`: `anyio.sleep` (awaited): the call never answers, but pings are answered all along.
- `echo(text)`: clean.
"""

from __future__ import annotations

import logging
import sys
import time
from typing import Annotated

import anyio
from mcp.server.mcpserver import MCPServer
from pydantic import Field

# Plain text logs: MCPServer would draw each traceback through rich, a CPU-bound third of a second
# per exception (tests/servers/sdk_strict.py keeps rich, as most real servers on the SDK log).
logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
app = MCPServer("wedged", log_level="WARNING")
FOREVER_S = 600


@app.tool()
async def freeze(x: Annotated[int, Field(ge=0, le=10)]) -> str:
    """Compute something."""
    time.sleep(FOREVER_S)  # planted: blocks the event loop
    return str(x)


@app.tool()
async def wait(x: Annotated[int, Field(ge=0, le=10)]) -> str:
    """Wait for something."""
    await anyio.sleep(FOREVER_S)  # planted: only this call waits
    return str(x)


@app.tool()
def echo(text: Annotated[str, Field(max_length=50)]) -> str:
    """Answer the text."""
    return text


if __name__ == "__main__":
    app.run("stdio")
