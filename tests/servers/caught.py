"""An MCP server whose framework catches what its tools raise: the caught exception is logged with
its traceback on stderr and answered with a proper `isError` reply of the framework's own, while
one tool's exception reaches the SDK uncaught.

- `lookup(key)` raises KeyError for every key; the framework logs the traceback and answers its own
  `isError` "no record for that key": caught, a low finding.
- `divide(n)` raises ZeroDivisionError for every n, uncaught: the SDK logs the traceback and answers
  its bare "Error executing tool divide": unhandled, high.
"""

from __future__ import annotations

import functools
import logging
import sys
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
log = logging.getLogger("caught")
app = MCPServer("caught", log_level="WARNING")

RECORDS = {"alpha": 1}


def answered(message: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The framework: what a tool raises is logged with its traceback and answered as `message`."""

    def wrap(tool: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(tool)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            try:
                return tool(*args, **kwargs)
            except Exception:
                log.exception("tool %s failed", tool.__name__)
                raise ToolError(message) from None

        return guarded

    return wrap


@app.tool()
@answered("no record for that key")
def lookup(key: Annotated[str, Field(max_length=20)]) -> str:
    """Look a record up."""
    return str(RECORDS[key + "!"])


@app.tool()
def divide(n: Annotated[int, Field(ge=0, le=100)]) -> str:
    """Divide 100 by nothing."""
    return str(100 // (n - n))


if __name__ == "__main__":
    app.run("stdio")
