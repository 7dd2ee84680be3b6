"""An MCP server on the real Python SDK whose tools use the network, and nothing else is wrong.

    python network_user.py

| tool               | behaviour                                                                 |
| ------------------ | ------------------------------------------------------------------------- |
| `add(a, b)`        | clean: a + b (listed first: the protocol probes go to it)                  |
| `check_updates()`  | resolves `updates.fuzzgate-example.com` (fails where names do not resolve) |
| `notify(message)`  | sends the message to a service on 127.0.0.1 (no one listens: refused)     |
| `sync_feed()`      | connects to that service, logging and retrying until it answers (never)   |

`sync_feed` waits as a database or API client does while its service is down, logging in its own
words (`connection error; retrying`), and never answers where nothing listens. The other two
network tools handle no failure: the SDK answers its generic error and logs the traceback.
Inside fuzzgate's sandbox (a loopback-only network that resolves no name) both fail on every call:
the sandbox's doing, which a run reports as one note per cause, not as findings.
"""

from __future__ import annotations

import logging
import socket
import sys
from typing import Annotated

import anyio
from mcp.server.mcpserver import MCPServer
from pydantic import Field

# Plain text logs: MCPServer would draw each traceback through rich, a CPU-bound third of a second
# per exception (tests/servers/sdk_strict.py keeps rich, as most real servers on the SDK log).
logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
app = MCPServer("network-user", log_level="WARNING")
LOGGER = logging.getLogger("network-user")
UPDATES_HOST = "updates.fuzzgate-example.com"
SERVICE = ("127.0.0.1", 9)
"""The discard port: nothing listens on it here, so a connection is refused."""


@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@app.tool()
def check_updates() -> str:
    """Say whether the update server can be reached."""
    address = socket.getaddrinfo(UPDATES_HOST, 443)[0][4][0]
    return f"update server at {address}"


@app.tool()
def notify(message: Annotated[str, Field(max_length=200)]) -> str:
    """Send a message to the notification service."""
    with socket.create_connection(SERVICE, timeout=2) as connection:
        connection.sendall(message.encode("utf-8", "replace"))
    return "sent"


@app.tool()
async def sync_feed() -> str:
    """Fetch the feed from the sync service, retrying until it answers."""
    while True:
        try:
            with socket.create_connection(SERVICE, timeout=2):
                return "synced"
        except OSError:
            LOGGER.warning("sync service connection error; retrying in 0.2s")
            await anyio.sleep(0.2)


if __name__ == "__main__":
    app.run()
