"""`fuzzgate run` against tests/servers/late_replier.py, which answers the requests fuzzgate
cancelled (a call it gave up on, the ping a protocol probe no longer waits for) late and a second
time, as the Python SDK 1.x does: those replies are no finding against the probe or call in flight
(they were a `protocol_error`, high, on the protocol probe that happened to be in flight); the call
that never returns is still a hang."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import fuzzgate

pytestmark = pytest.mark.e2e

LATE = Path(__file__).resolve().parents[1] / "servers" / "late_replier.py"


def test_replies_to_cancelled_requests_are_no_protocol_error(tmp_path: Path) -> None:
    run = fuzzgate(
        "run", "--command", sys.executable, f"--arg={LATE}", "--cases", "4", "--budget", "120s",
        "--seed", "7", "--timeout", "1s", cwd=tmp_path,
    )  # fmt: skip
    kinds = {(f["name"], f["kind"]) for f in run.report["findings"]}
    assert kinds == {("sleepy", "hang")}, run.stdout + run.stderr
