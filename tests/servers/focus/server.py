"""Two tools whose code lives in two modules beside this script: what a change to one of them
reaches is told apart by the files each tool's calls run (`fuzzgate.plan.focus`)."""

from __future__ import annotations

import logging
import sys

# The script's directory is on sys.path when it runs as a script.
import alpha
import beta
from mcp.server.mcpserver import MCPServer

# Plain text logs: MCPServer would draw each traceback through rich, a CPU-bound third of a second
# per exception (tests/servers/sdk_strict.py keeps rich, as most real servers on the SDK log).
logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
server = MCPServer("focus", log_level="WARNING")
server.tool()(alpha.alpha)
server.tool()(beta.beta)

if __name__ == "__main__":
    server.run()
