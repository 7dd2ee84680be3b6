"""An MCP server with one tool that asks the client for its roots (`roots/list`) and returns them.

    python roots_reader.py

`roots()` answers with the root URIs, one per line, or "no roots" when the client offers none.
"""

from __future__ import annotations

import warnings

from mcp.server.mcpserver import Context, MCPServer

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
