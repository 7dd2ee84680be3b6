"""An MCP server whose tools start processes that try to outlive it, for fuzzgate's process tests.

    python leaky.py --marker TEXT --pid-prefix PREFIX [--helper-at-start] [--ignore-sigterm]

Every process it starts carries TEXT in its command line and writes `<kind>-<pid>.pid` to DIR, so a
test can look for survivors both ways after fuzzgate has exited.

Tools (none takes an argument):

- `start_session_leader`: a child that calls `os.setsid()` and sleeps: it leaves the server's
  session and process group, so no process-group kill reaches it, and it keeps the server's stdin
  and stderr pipes open;
- `start_daemon`: a classic double-fork daemon (fork, setsid, fork, the middle process exits, stdio
  on /dev/null): its parent is gone before the tool answers, so it is nobody's child but the
  nearest subreaper's;
- `crash_leaving_child`: starts a session leader like the first tool, then the server exits 1;
- `hang`: never answers.

`--helper-at-start` starts one more session leader before serving, holding the real stdout pipe as
well. `--ignore-sigterm` makes the server and everything it starts ignore SIGTERM (SIG_IGN survives
exec), so only SIGKILL ends them.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
from mcp.server.mcpserver import MCPServer

_SESSION_LEADER = """
import os, sys, time
os.setsid()
# Written whole, then renamed: a reader never sees the file empty, even if this process is killed
# half-way through writing it.
path = f"{sys.argv[2]}session-{os.getpid()}.pid"
with open(path + ".tmp", "w") as f:
    f.write(str(os.getpid()))
os.replace(path + ".tmp", path)
time.sleep(3600)
"""

_DAEMON = """
import os, sys, time
if os.fork():
    os._exit(0)
os.setsid()
if os.fork():
    os._exit(0)
# Written whole, then renamed: a reader never sees the file empty, even if this process is killed
# half-way through writing it.
path = f"{sys.argv[2]}daemon-{os.getpid()}.pid"
with open(path + ".tmp", "w") as f:
    f.write(str(os.getpid()))
os.replace(path + ".tmp", path)
time.sleep(3600)
"""

parser = argparse.ArgumentParser()
parser.add_argument("--marker", required=True)
parser.add_argument("--pid-prefix", required=True)
parser.add_argument("--helper-at-start", action="store_true")
parser.add_argument("--ignore-sigterm", action="store_true")
ARGS = parser.parse_args()

# Plain text logs: MCPServer would draw each traceback through rich, a CPU-bound third of a second
# per exception (tests/servers/sdk_strict.py keeps rich, as most real servers on the SDK log).
logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
app = MCPServer("leaky", log_level="WARNING")


def _spawn(code: str, *, inherit_stdio: bool = True) -> subprocess.Popen[bytes]:
    stdio = None if inherit_stdio else subprocess.DEVNULL
    argv = [sys.executable, "-c", code, ARGS.marker, ARGS.pid_prefix]
    return subprocess.Popen(argv, stdin=stdio, stdout=stdio, stderr=stdio)


@app.tool(structured_output=False)
def start_session_leader() -> str:
    """Start a child that leaves the server's session, and answer once it has written its pid file."""
    child = _spawn(_SESSION_LEADER)
    pid_file = Path(f"{ARGS.pid_prefix}session-{child.pid}.pid")
    deadline = time.monotonic() + 10
    while not pid_file.exists() and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    return f"started {child.pid}"


@app.tool(structured_output=False)
def start_daemon() -> str:
    """Start a double-forked daemon."""
    launcher = _spawn(_DAEMON, inherit_stdio=False)
    launcher.wait()
    return "daemon started"


@app.tool(structured_output=False)
def crash_leaving_child() -> str:
    """Start a child that leaves the server's session, then exit."""
    _spawn(_SESSION_LEADER)
    print("crashing on purpose", file=sys.stderr, flush=True)
    os._exit(1)


@app.tool(structured_output=False)
async def hang() -> str:
    """Never answer."""
    await anyio.sleep_forever()
    return "unreachable"


if __name__ == "__main__":
    if ARGS.ignore_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if ARGS.helper_at_start:
        # Before stdio_server() points fd 1 at stderr: the helper keeps the real stdout pipe too.
        _spawn(_SESSION_LEADER)
    app.run("stdio")
