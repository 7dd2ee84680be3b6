"""fuzzgate-fast-example: one tool that answers at once, for measuring fuzzgate's own call rate.

    python fast_server.py [--transport stdio|http] [--host 127.0.0.1] [--port 8000] [--legacy]

`ping_fast` has no output schema and logs nothing, so a call costs the server as little as the SDK
allows; what a benchmark measures is the fuzzer's loop.
"""

from __future__ import annotations

import logging
from typing import Annotated

import _serve  # examples/servers/_serve.py: the shared command line
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from pydantic import Field

_serve.plain_stderr_logging(logging.WARNING)
app = MCPServer("fuzzgate-fast-example", version="1.0.0", log_level="WARNING")


@app.tool(
    annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True),
    structured_output=False,
)
def ping_fast(n: Annotated[int | None, Field(description="Echoed back when given.")] = None) -> str:
    """Answer "pong" (with `n` when given)."""
    return "pong" if n is None else f"pong {n}"


def main() -> None:
    _serve.serve(app, _serve.parse_args("fuzzgate example server for benchmarks"))


if __name__ == "__main__":
    main()
