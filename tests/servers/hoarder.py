"""An MCP server whose memory one input can exhaust, beside clean tools that bound theirs.

    python hoarder.py                # stdio
    python hoarder.py --port 8000    # streamable HTTP on 127.0.0.1:8000/mcp

- `render(scale)`: bug: draws a picture of `scale` MiB in memory (the schema allows up to 1024) and
  holds it while it "encodes" it (2 ms per MiB) before it answers with its size: a scale of a few
  hundred holds more than a test's memory limit, for longer than fuzzgate takes to see it.
- `render_bounded(scale)`: clean: the same with a scale over 16 refused with a tool error.
- `word_count(text)`: clean.

Nothing is kept between calls: each picture is freed once its call answers. With
`HOARDER_AT_START_MIB=N` it holds N MiB from its start, taken before the SDK is imported (a second
before it can answer anything).
"""

from __future__ import annotations

import os

_HELD_FROM_START = b"\xff" * (int(os.environ.get("HOARDER_AT_START_MIB", "0")) << 20)

import logging  # noqa: E402 - the memory above is taken first, on purpose
import sys  # noqa: E402
import time  # noqa: E402
from typing import Annotated  # noqa: E402

from mcp.server.mcpserver import MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from pydantic import Field  # noqa: E402

ENCODE_S_PER_MIB = 0.002
MIB = 1 << 20

logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
app = MCPServer("hoarder", log_level="WARNING")

Scale = Annotated[int, Field(ge=1, le=1024, description="The picture's size in MiB.")]


def _draw(scale: int) -> int:
    picture = b"\xff" * (scale * MIB)  # every page written: resident at once
    time.sleep(scale * ENCODE_S_PER_MIB)
    return len(picture)


@app.tool()
def render(scale: Scale) -> int:
    """Render a picture of `scale` MiB and return its size in bytes."""
    return _draw(scale)


@app.tool()
def render_bounded(scale: Scale) -> int:
    """Render a picture of at most 16 MiB and return its size in bytes."""
    if scale > 16:
        raise ToolError("scale must be at most 16")
    return _draw(scale)


@app.tool()
def word_count(text: Annotated[str, Field(max_length=10_000)]) -> int:
    """Count the words of `text`."""
    return len(text.split())


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--port":
        app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        app.run("stdio")
