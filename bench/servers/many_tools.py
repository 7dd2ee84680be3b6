"""bench-many-tools: N trivial tools that answer at once, for calls/s as the tool count grows.

    python many_tools.py --tools N [--transport stdio|http] [--port P]

Tool `ping_<i>` has the same signature as the example fast server's `ping_fast`: an optional
integer, no output schema, nothing logged below WARNING.
"""

from __future__ import annotations

import argparse
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from pydantic import Field

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)


def make_tool(index: int):  # type: ignore[no-untyped-def]
    def ping(n: Annotated[int | None, Field(description="Echoed back when given.")] = None) -> str:
        return f"pong {index}" if n is None else f"pong {index} {n}"

    ping.__doc__ = f"Answer pong (tool {index})."
    return ping


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tools", type=int, default=1)
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    app = MCPServer("bench-many-tools", version="1.0.0", log_level="WARNING")
    for i in range(args.tools):
        app.add_tool(make_tool(i), name=f"ping_{i}", annotations=READ_ONLY, structured_output=False)
    if args.transport == "http":
        app.run("streamable-http", host="127.0.0.1", port=args.port)
    else:
        app.run("stdio")


if __name__ == "__main__":
    main()
