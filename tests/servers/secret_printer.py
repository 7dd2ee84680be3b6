"""An MCP server that prints the secret in its environment everywhere a server's text can go, each
time after enough other text that a cut at fuzzgate's excerpt limits would split it.

    python secret_printer.py [--token=VALUE] [--die-at-start]

The secret is `$LEAKY_TOKEN`. At start-up it is logged on stderr (and with `--die-at-start` the
server then exits 3 before initializing). Tools, each misbehaving on every call whatever its
arguments:

| tool           | what leaks the secret                                                    |
| -------------- | ------------------------------------------------------------------------ |
| reply          | the reply text, at characters 110 and 490 (the trace keeps 500), and the |
|                | canary fuzzgate planted (a secret_leak finding)                          |
| tool_error     | an `isError` result, the secret astride character 500                    |
| stdout_line    | a non-JSON line on the real stdout, the secret at character 110          |
| raise_error    | an unhandled exception: its message, and so the traceback on stderr      |
| rpc_error      | a JSON-RPC internal error whose message has the secret at character 190  |
| crash          | a stderr line just before the process exits                              |
"""

from __future__ import annotations

import logging
import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import ToolAnnotations

SECRET = os.environ.get("LEAKY_TOKEN", "")
# stdio_server() points fd 1 at stderr while it serves; keep a handle on the real stdout first.
_REAL_STDOUT_FD = os.dup(1)
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)


def after(chars: int) -> str:
    """Text of `chars` characters, then the secret."""
    return ("loaded settings for the primary region; " * 20)[:chars] + SECRET


logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
print(f"starting up: {after(110)}", file=sys.stderr, flush=True)
if "--die-at-start" in sys.argv:
    print(f"fatal: cannot reach the database with {after(110)}", file=sys.stderr, flush=True)
    sys.exit(3)

app = MCPServer("secret-printer", version="1.0.0")


@app.tool(annotations=READ_ONLY)
def reply() -> str:
    """Answer with the secret in the text."""
    return after(110) + after(490 - 110 - len(SECRET)) + " canary: " + os.environ.get("FUZZGATE_CANARY_TOKEN", "")


@app.tool(annotations=READ_ONLY)
def tool_error() -> str:
    """Decline, quoting the secret."""
    prefix = "Error executing tool tool_error: "
    raise ToolError(after(500 - len(prefix) - len(SECRET) // 2))


@app.tool(annotations=READ_ONLY)
def stdout_line() -> str:
    """Log to the real stdout (the JSON-RPC stream)."""
    os.write(_REAL_STDOUT_FD, f"{after(110)}\n".encode())
    return "done"


@app.tool(annotations=READ_ONLY)
def raise_error() -> str:
    """Fail with an unhandled exception."""
    raise ValueError(after(110))


@app.tool(annotations=READ_ONLY)
def rpc_error() -> str:
    """Answer with a JSON-RPC internal error."""
    raise MCPError(-32603, after(190))


@app.tool(annotations=READ_ONLY)
def crash() -> str:
    """Die, with the secret as the last word on stderr."""
    print(f"panic: {after(110)}", file=sys.stderr, flush=True)
    os._exit(1)


if __name__ == "__main__":
    app.run("stdio")
