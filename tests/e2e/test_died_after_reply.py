"""`fuzzgate run` against a server that answers a call and dies right after: tests/servers/after_reply.py's
`reload_settings` sends SIGTERM to its own process 20 ms after its reply, as desktop-commander's
`kill_process` does given its own pid; `sync` of tests/servers/node_minimal.js --sync-rejects leaves
a promise that rejects 5 ms after its reply, which kills Node. The death lands on whatever request
comes next: fuzzing saw crashes of `echo`, `add` and protocol probes, none of which reproduced
alone, and the run said PASS. The crash is `reload_settings`'s, found on the spot when the server
is already dead before the next request, and otherwise traced back from the sequence on fresh
servers (`Verifier`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import ROOT, CliRun, fuzzgate

pytestmark = pytest.mark.e2e

SERVER = ROOT / "tests" / "servers" / "after_reply.py"
NODE_SERVER = ROOT / "tests" / "servers" / "node_minimal.js"


def _run(work: Path, *server_args: str, command: str = sys.executable, server: Path = SERVER) -> CliRun:
    work.mkdir()
    return fuzzgate(
        "run", "--command", command, f"--arg={server}", *(f"--arg={a}" for a in server_args),
        "--seed", "4", "--cases", "12", "--budget", "150s", "--replays", "2", "--baseline", str(work / "baseline"),
        cwd=work,
    )  # fmt: skip


def test_the_crash_is_reported_on_the_call_the_server_died_after(tmp_path: Path) -> None:
    run = _run(tmp_path / "buggy")
    assert run.code == 1, run.stdout + run.stderr
    crashes = run.findings(kind="crash")
    assert [(c["surface"], c["name"]) for c in crashes] == [("tool", "reload_settings")], crashes
    (crash,) = crashes
    assert crash["reproduced"] == crash["replays"] == 2 and not crash["flaky"], crash
    assert "killed by SIGTERM" in crash["message"]
    # A single call reproduces it, and the command printed for it does.
    assert crash["repro"].get("prefix", []) == [], crash["repro"]
    fingerprint = crash["fingerprint"]
    replay = fuzzgate("replay", fingerprint, "--out", str(run.out), cwd=tmp_path / "buggy")
    assert replay.code == 1 and f"still fails: crash in reload_settings ({fingerprint})" in replay.stdout, replay


def test_a_server_that_lives_on_after_its_replies_has_no_crash(tmp_path: Path) -> None:
    run = _run(tmp_path / "clean", "--clean")
    assert run.code == 0, run.stdout + run.stderr
    assert run.findings(kind="crash") == []
    assert "came from the call before" not in run.stdout


def test_a_node_server_killed_by_a_rejection_after_its_reply_crashes_in_that_call(tmp_path: Path) -> None:
    run = _run(tmp_path / "node", "--sync-rejects", command="node", server=NODE_SERVER)
    crashes = run.findings(kind="crash")
    assert [(c["surface"], c["name"]) for c in crashes] == [("tool", "sync")], run.stdout
    (crash,) = crashes
    assert crash["reproduced"] == crash["replays"] == 2 and not crash["flaky"], crash
    assert "sync failed: the cache is gone" in crash["message"], crash
    # Node's report of the rejection on stderr is the crash's, not a caught error of some call.
    assert run.findings(kind="internal_error") == [], run.stdout
