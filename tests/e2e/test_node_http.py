"""A clean Node server on the official TypeScript SDK over streamable HTTP, started by fuzzgate and
built as the reference `everything` server is (tests/servers/node_http/): sessions, an event store,
so every response stream starts with a priming event (an SSE event with an id and empty data), and
a log line on stdout per request. Through the real CLI, in the default sandbox and with the Node
coverage collector (an HTTP server fuzzgate starts gets it as a stdio server does), it gets
nothing: a priming event is no message, and an HTTP server's stdout is its log. The protocol probes
read each answer's stream themselves, and took every priming event for a reply that is not JSON:
eleven high findings on a clean server."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.e2e.conftest import ROOT, free_port, fuzzgate
from tests.validators import INSTALL_VALIDATORS, missing

pytestmark = pytest.mark.e2e

SERVER = ROOT / "tests" / "servers" / "node_http" / "server.js"
NODE_MODULES = ROOT / "tests" / ".tools" / "node_modules"


def test_a_clean_node_http_server_with_priming_events_gets_no_finding(tmp_path: Path) -> None:
    if shutil.which("node") is None:
        missing("node is not installed", "install Node.js 20 or later")
    if not (NODE_MODULES / "@modelcontextprotocol" / "sdk").is_dir():
        missing("the MCP TypeScript SDK is not installed", INSTALL_VALIDATORS)
    port = free_port()
    (tmp_path / "fuzzgate.toml").write_text(
        "[target]\n"
        'kind = "http"\n'
        f'url = "http://127.0.0.1:{port}/mcp"\n'
        'command = "node"\n'
        f"args = [{json.dumps(str(SERVER))}, {json.dumps(str(port))}]\n"
        f"env = {{ NODE_PATH = {json.dumps(str(NODE_MODULES))} }}\n"
    )
    run = fuzzgate(
        "run", "--cases", "60", "--budget", "120s", "--seed", "5", "--feedback", "auto", cwd=tmp_path, timeout=300
    )
    report = run.report
    # Priming events are sent to clients of 2025-11-25 and later only: the run must be one.
    assert report["target"]["protocol_version"] >= "2025-11-25", report["target"]
    assert report["calls"] >= 100, report["calls"]
    feedback = report["feedback"]
    assert feedback["signal"] == "coverage" and feedback["note"].startswith("coverage: Node "), feedback
    assert feedback["lines"] > 0 and feedback["arcs"] > 0, feedback
    assert [(f["kind"], f["name"], f["message"]) for f in report["findings"]] == []
    assert run.code == 0, run.stdout + run.stderr
