"""A server at two revisions of one repository: the base's tools, and, where a file `head.txt` lies
beside this script, the head's extra tool. `average` has been buggy since the base; `ratio` is the
head's new bug; `echo` is clean. Each bug raises from the server's own code on a value the schema
allows, so both are found in a short run."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

HEAD = (Path(__file__).parent / "head.txt").exists()

# Plain text logs: MCPServer would draw each traceback through rich, a CPU-bound third of a second
# per exception (tests/servers/sdk_strict.py keeps rich, as most real servers on the SDK log).
logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
server = MCPServer("revision", log_level="WARNING")


@server.tool()
def average(values: list[int]) -> float:
    """The mean of the values (an empty list divides by zero: old bug)."""
    return sum(values) / len(values)


@server.tool()
def echo(text: str) -> str:
    """The text, back."""
    return text


if HEAD:

    @server.tool()
    def ratio(numerator: int, denominator: int) -> float:
        """numerator / denominator (zero divides by zero: the head's new bug)."""
        return numerator / denominator


if __name__ == "__main__":
    server.run()
