"""`fuzzgate replay FINGERPRINT --store`: a finding a worker or another machine's run put in the
shared store reproduces here in one command, with neither its report nor a baseline entry around
(the command `fuzzgate report` prints for findings a command line cannot hold)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import fuzzgate, stdio_target

pytestmark = pytest.mark.e2e

FLAGS = ("--include=split_bill", "--cases", "20", "--budget", "120s", "--replays", "1", "--seed", "7")


def test_replay_finds_a_fingerprint_in_the_store(tmp_path: Path) -> None:
    store = tmp_path / "shared"
    run = fuzzgate("run", *stdio_target("buggy_server.py"), *FLAGS, "--store", str(store), cwd=tmp_path)
    assert run.code == 1, run.stdout + run.stderr
    [finding] = [f for f in run.report["findings"] if f["kind"] == "internal_error"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    without = fuzzgate("replay", finding["fingerprint"], *stdio_target("buggy_server.py"), cwd=elsewhere)
    assert without.code == 2 and "no finding with fingerprint" in without.stderr, without.stdout + without.stderr

    again = fuzzgate(
        "replay", finding["fingerprint"], *stdio_target("buggy_server.py"), "--store", str(store), cwd=elsewhere
    )
    assert again.code == 1, again.stdout + again.stderr
    assert f"still fails: internal_error in split_bill ({finding['fingerprint']})" in " ".join(again.stdout.split())
