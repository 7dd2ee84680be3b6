"""A clean Node server on the official TypeScript SDK 1.32.2 with zod 3.25.76 beside it, as npm
installs the SDK for a server that pins zod 3 (tests/servers/node_tasks/). zod before 4.1.13 takes
an object with its own `constructor` key for a class instance, so the SDK's own request schema
refuses `{"constructor": {}}` as a tool's arguments and answers -32603 with zod's issues. Through the
real CLI, in the default sandbox: one low finding of the server, caused by the SDK, which fails no
gate unless `--fail-on-sdk` asks; before fuzzgate read the SDK's refusal from the reply, it was a
high `internal_error` in each tool, and the clean server failed the gate."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.e2e.conftest import ROOT, fuzzgate
from tests.validators import INSTALL_VALIDATORS, missing

pytestmark = pytest.mark.e2e

SERVER = ROOT / "tests" / "servers" / "node_tasks" / "server.js"
NODE_MODULES = ROOT / "tests" / ".tools" / "zod3" / "node_modules"


def test_the_typescript_sdks_refusal_of_a_request_is_the_sdks_low_finding(tmp_path: Path) -> None:
    if shutil.which("node") is None:
        missing("node is not installed", "install Node.js 20 or later")
    if not (NODE_MODULES / "@modelcontextprotocol" / "sdk").is_dir() or not (NODE_MODULES / "zod").is_dir():
        missing("the MCP TypeScript SDK beside zod 3 is not installed", INSTALL_VALIDATORS)
    (tmp_path / "fuzzgate.toml").write_text(
        f'[target]\ncommand = "node"\nargs = [{json.dumps(str(SERVER))}]\n'
        f"env = {{ NODE_PATH = {json.dumps(str(NODE_MODULES))} }}\n"
    )
    run = fuzzgate("run", "--cases", "60", "--budget", "120s", "--seed", "5", cwd=tmp_path, timeout=300)
    report = run.report
    assert report["calls"] >= 60, report["calls"]
    found = [(f["kind"], f["surface"], f["name"], f["cause"], f["severity"]) for f in report["findings"]]
    assert found == [("internal_error", "server", "transport", "sdk", "low")], report["findings"]
    (finding,) = report["findings"]
    # The SDK and its version, read from the server's process (the SDK Node.js loads from NODE_PATH).
    assert "the TypeScript MCP SDK (@modelcontextprotocol/sdk 1.32.2)" in finding["message"], finding["message"]
    assert "zod 4.1.13 fixes it" in finding["message"]
    assert finding["reproduced"] == finding["replays"] >= 1 and not finding["flaky"], finding
    assert run.code == 0, run.stdout + run.stderr

    # The finding is there all the same: a gate that asks fails on it.
    again = fuzzgate(
        "run", "--cases", "60", "--budget", "120s", "--seed", "5", "--fail-on-sdk", cwd=tmp_path, timeout=300
    )
    assert again.code == 1, again.stdout + again.stderr
    assert [f["fingerprint"] for f in again.report["findings"]] == [finding["fingerprint"]]
