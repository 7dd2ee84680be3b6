"""An MCP server for the coverage collector's tests: small tools whose code paths differ, a
comparison with a magic word and a length, and a tool that reports what a child process sees.

    python coverage_target.py
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys

from mcp.server.mcpserver import MCPServer

# Plain text logs: MCPServer would draw each traceback through rich, a CPU-bound third of a second
# per exception (tests/servers/sdk_strict.py keeps rich, as most real servers on the SDK log).
logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
app = MCPServer("coverage-target", log_level="WARNING")


@app.tool()
def check(word: str) -> str:
    """Whether `word` opens the door."""
    if word == "open-sesame":
        return "opened"
    if len(word) == 7:
        return "seven letters"
    return "closed"


@app.tool()
def count(n: int) -> int:
    """The sum of 0 .. n-1."""
    total = 0
    for i in range(n):
        total += i
    return total


@app.tool()
def child() -> str:
    """What a child process of this server sees: the collector's variable, PYTHONPATH, whether the
    collector runs in it; and whether the user's own sitecustomize ran in this server."""
    code = (
        "import os, sys; "
        "print(repr((os.environ.get('FUZZGATE_COLLECTOR'), os.environ.get('PYTHONPATH'), "
        "'_fuzzgate_collector' in sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return f"{done.stdout.strip()} user-site={os.environ.get('USER_SITECUSTOMIZE', 'no')}"


if __name__ == "__main__":
    app.run()
