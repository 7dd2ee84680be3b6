"""The Node coverage collector through the real CLI: the planted-bug server on the official
TypeScript SDK (tests/servers/node_nested/), over stdio, in the default sandbox. Its bugs sit
behind nested conditions gated by constants only its code holds; with coverage feedback (V8's,
and the constants mined from the server's source) the run finds at least three of the four and
nothing in the clean look-alikes. Bounded by cases, not time.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.e2e.conftest import ROOT, fuzzgate
from tests.validators import INSTALL_VALIDATORS, missing

pytestmark = pytest.mark.e2e

SERVER = ROOT / "tests" / "servers" / "node_nested"
NODE_MODULES = ROOT / "tests" / ".tools" / "node_modules"
PLANTED = {
    "NB-1": ("render_theme", "crash"),
    "NB-2": ("allocate_buffer", "hang"),
    "NB-3": ("run_batch", "crash"),
    "NB-4": ("export_report", "secret_leak"),
}
LOOK_ALIKES = ("render_preview", "allocate_pool", "export_summary")


def test_coverage_feedback_finds_the_planted_bugs_of_a_node_server(tmp_path: Path) -> None:
    if shutil.which("node") is None:
        missing("node is not installed", "install Node.js 20 or later")
    if not (NODE_MODULES / "@modelcontextprotocol" / "sdk").is_dir():
        missing("the MCP TypeScript SDK is not installed", INSTALL_VALIDATORS)
    project = tmp_path / "project"
    shutil.copytree(SERVER, project)
    # The SDK stays where the install script put it: NODE_PATH finds it (a symlink out of the
    # scope would read as one of the sandbox's escape canaries).
    (project / "fuzzgate.toml").write_text(
        f'[target]\ncommand = "node"\nargs = ["server.js"]\nenv = {{ NODE_PATH = {json.dumps(str(NODE_MODULES))} }}\n'
    )
    run = fuzzgate(
        "run", "--feedback", "auto", "--mode", "conform", "--cases", "80", "--budget", "180s", "--seed", "7",
        cwd=project, timeout=400,
    )  # fmt: skip
    assert run.code in (0, 1), run.stdout + run.stderr
    report = run.report
    feedback = report["feedback"]
    assert feedback["signal"] == "coverage", feedback
    assert feedback["note"].startswith("coverage: Node "), feedback
    assert feedback["lines"] > 0 and feedback["arcs"] > 0 and feedback["constants"] > 0, feedback
    assert "sandboxed" in run.stdout, "the default sandbox held the server"

    found = {bug for bug, (tool, kind) in PLANTED.items() if any(f["kind"] == kind for f in run.findings(name=tool))}
    assert len(found) >= 3, (found, [(f["name"], f["kind"], f["message"]) for f in report["findings"]])
    for finding in report["findings"]:
        # Every finding is a planted bug's (NB-3 may show on set_profile's call before it, never alone).
        assert finding["name"] not in LOOK_ALIKES, finding
    entries = list((project / ".fuzzgate" / "corpus").rglob("*.json"))
    assert entries, "the run kept what reached new code"
