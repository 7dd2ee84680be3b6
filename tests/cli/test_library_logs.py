"""What a library logs is not fuzzgate's output: the console holds fuzzgate's own lines only."""

from __future__ import annotations

import subprocess
import sys

# The command's handler stands in for a session the MCP SDK's client logs a traceback in, as it
# does when fuzzgate closes a streamable HTTP session whose reply is still streaming in.
_SCRIPT = """
import logging
import sys

import fuzzgate.cli.main as cli


def handler(ns, out):
    try:
        raise RuntimeError("stream closed")
    except RuntimeError:
        logging.getLogger("mcp.client.streamable_http").exception("Error parsing SSE message")
    return 0


cli._cmd_init = handler
sys.exit(cli.main(sys.argv[1:]))
"""


def _init(*flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _SCRIPT, *flags, "init"], capture_output=True, text=True, timeout=60)


def test_the_sdk_clients_log_records_do_not_reach_the_console() -> None:
    run = _init()
    assert run.returncode == 0
    assert "Error parsing SSE message" not in run.stderr
    assert "Traceback" not in run.stderr


def test_verbose_shows_them() -> None:
    run = _init("-v")
    assert run.returncode == 0
    assert "Error parsing SSE message" in run.stderr
