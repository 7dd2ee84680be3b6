"""An MCP server whose `reload_settings` answers, then takes the server down a few milliseconds
later (as desktop-commander's `kill_process` does when it is given the server's own process id, and
as a Node server does when a promise a tool started rejects after its reply): the death lands on
whatever request the client sends next.

    python after_reply.py [--clean]

`--clean`: `reload_settings` answers and the server stays up.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from pydantic import Field

CLEAN = "--clean" in sys.argv[1:]
app = MCPServer("after-reply", log_level="WARNING")


@app.tool()
def echo(text: Annotated[str, Field(max_length=40)]) -> str:
    """Echo the text back."""
    return text


@app.tool()
def add(a: Annotated[int, Field(ge=-1000, le=1000)], b: Annotated[int, Field(ge=-1000, le=1000)]) -> int:
    """Add two numbers."""
    return a + b


@app.tool()
def reload_settings(section: Annotated[str, Field(max_length=20)] = "all") -> str:
    """Read the settings again."""
    if not CLEAN:
        # The reply goes out first; the signal comes from a thread shortly after.
        threading.Timer(0.02, os.kill, (os.getpid(), signal.SIGTERM)).start()
    return f"reloaded {section}"


if __name__ == "__main__":
    app.run("stdio")
