"""An MCP server whose one bug needs one short value, while the call fuzzgate first fails with is
long: its schema's example is a long path, and it has optional fields that play no part.

- `open_record(path, note, tags, limit)`: any `path` not in its table (the example included) raises
  KeyError, uncaught (the SDK's crash reply); `note`, `tags` and `limit` play no part.

The bug reproduces with `{"path": ""}`: a shrunk repro is that short, the original long.
"""

from __future__ import annotations

import logging
import sys
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from pydantic import Field

# Plain text logs: MCPServer would draw each traceback through rich, a CPU-bound third of a second
# per exception (tests/servers/sdk_strict.py keeps rich, as most real servers on the SDK log).
logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
app = MCPServer("shrinkable", log_level="WARNING")

LONG_PATH = "/srv/records/" + "archive-2024-" * 12 + "quarterly/summary.json"
TABLE = {"known": "a record"}


@app.tool()
def open_record(
    path: Annotated[str, Field(max_length=400, examples=[LONG_PATH])],
    note: Annotated[str, Field(max_length=200, examples=["a note that plays no part in the bug at all"])] = "",
    tags: Annotated[list[str], Field(max_length=8)] = [],  # noqa: B006 (pydantic copies defaults)
    limit: Annotated[int, Field(ge=0, le=100000)] = 10,
) -> str:
    """Open a record by its path."""
    return TABLE[path]  # planted: KeyError for every unknown path


if __name__ == "__main__":
    app.run("stdio")
