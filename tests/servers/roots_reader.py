"""An MCP server with one tool that asks the client for its roots (`roots/list`) and returns them.

    python roots_reader.py

`roots()` answers with the root URIs, one per line, or "no roots" when the client offers none.
"""

from __future__ import annotations

import logging
import sys
import warnings

from mcp.server.mcpserver import Context, MCPServer

# Plain text logs: MCPServer would draw each traceback through rich, a CPU-bound third of a second
# per exception (tests/servers/sdk_strict.py keeps rich, as most real servers on the SDK log).
logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
app = MCPServer("roots-reader", log_level="WARNING")


@app.tool()
async def roots(ctx: Context) -> str:
    """The client's roots."""
    with warnings.catch_warnings():
        # Deprecated by the 2026-07-28 protocol; still what a handshake-era server asks.
        warnings.simplefilter("ignore")
        listed = await ctx.session.list_roots()
    return "\n".join(str(root.uri) for root in listed.roots) or "no roots"


if __name__ == "__main__":
    app.run()
