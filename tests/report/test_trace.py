"""`--trace FILE` on a disk that fills up: the run goes on, the trace keeps whole lines only, and
its writer says once what happened."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from fuzzgate.check.secrets import Redactor
from fuzzgate.engine.events import CallFinished
from fuzzgate.model.outcome import CallOutcome, OutcomeStatus
from fuzzgate.report.trace import TraceWriter

CALLS = 500
"""Far more than one batch of lines: the writer writes many times."""


def _call(index: int) -> CallFinished:
    outcome = CallOutcome(status=OutcomeStatus.OK, duration_s=0.01, text="ok " * 20)
    return CallFinished("echo", index, {"text": "x" * 40}, True, "conform", outcome, 0, index, 0, 0.1)


def _feed(writer: TraceWriter) -> None:
    for index in range(CALLS):
        writer(_call(index))
    writer.close()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full, a device every write to fails ENOSPC")
def test_a_full_disk_stops_the_trace_and_not_the_run() -> None:
    writer = TraceWriter(Path("/dev/full"), Redactor([]))
    _feed(writer)
    assert writer.failure == (
        "the trace /dev/full could not be written (No space left on device): it holds no call, "
        "and the run went on without it"
    )


def test_the_trace_keeps_the_whole_lines_written_before_the_disk_filled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace = tmp_path / "trace.jsonl"
    writer = TraceWriter(trace, Redactor([]))
    inode = trace.stat().st_ino
    real_write = os.write
    room = [20_000]

    def write(fd: int, data: bytes | memoryview) -> int:
        if os.fstat(fd).st_ino != inode:
            return real_write(fd, data)
        if room[0] == 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        done = real_write(fd, bytes(data[: room[0]]))
        room[0] -= done
        return done

    monkeypatch.setattr(os, "write", write)
    _feed(writer)
    monkeypatch.undo()
    text = trace.read_text()
    assert text.endswith("\n") and 19_000 < len(text) <= 20_000
    lines = [json.loads(line) for line in text.splitlines()]
    assert [line["case"] for line in lines] == list(range(len(lines)))
    assert writer.failure is not None and f"it holds the first {len(lines)} call(s)" in writer.failure


def test_a_whole_trace_says_nothing(tmp_path: Path) -> None:
    writer = TraceWriter(tmp_path / "trace.jsonl", Redactor([]))
    _feed(writer)
    assert writer.failure is None
    assert len((tmp_path / "trace.jsonl").read_text().splitlines()) == CALLS
