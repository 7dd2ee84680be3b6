"""Both of the collector's probes on a real interpreter, driven through `CoverageChannel`: coverage.py's
C tracer on the Python fuzzgate runs on, and sys.monitoring on Python 3.12 or later (found on PATH
or under pyenv; the server here needs only the standard library)."""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from fuzzgate.coverage.channel import CallCoverage, CollectorInfo, Constant, CoverageChannel
from fuzzgate.coverage.plan import CollectorPlan
from fuzzgate.sandbox.owned_process import LaunchSpec, child_environment

LINE_SERVER = Path(__file__).resolve().parents[1] / "servers" / "line_server.py"


def _newer_python() -> str | None:
    """An interpreter with sys.monitoring (3.12+), other than the one running the tests."""
    pyenv = os.path.expanduser("~/.pyenv/versions")
    names: list[str | None] = [*sorted(glob.glob(f"{pyenv}/3.1[2-9]*/bin/python3"), reverse=True)]
    names += [shutil.which(f"python3.{minor}") for minor in (14, 13, 12)]
    for name in names:
        # Not a pyenv shim: it runs only the versions pyenv selects for the working directory.
        if name and os.access(name, os.X_OK) and "/shims/" not in name:
            return name
    return None


NEWER = _newer_python()
REQUESTS: dict[str, dict[str, object]] = {
    # The first answer holds the module's start-up too: the server has no handshake to wait for.
    "first": {"word": "x"},
    "door": {"word": "door"},
    "door again": {"word": "door"},
    "count": {"n": 3},
    "seven": {"word": "letters"},
}
SWITCHED: dict[str, tuple[bool, dict[str, object]]] = {
    # (measured, request): the collector switched off for the one call in between.
    "unmeasured door": (False, {"word": "door"}),
    "traced off": (False, {"traced": 1}),
    "count after": (True, {"n": 3}),
    "traced on": (True, {"traced": 1}),
}


def start_measured(python: str, script: Path, cwd: Path) -> tuple[CoverageChannel, subprocess.Popen[bytes]]:
    """`python script` with the collector measuring the script's directory, its pipes to the test."""
    channel = CoverageChannel(CollectorPlan(True, "a test", directories=(script.parent,)))
    spec = channel.apply(LaunchSpec(python, (str(script),), child_environment({}), cwd))
    process = subprocess.Popen(
        [spec.command, *spec.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=spec.env,
        cwd=spec.cwd,
        pass_fds=spec.pass_fds,
    )
    return channel, process


def _drive(
    python: str, tmp_path: Path
) -> tuple[CollectorInfo | None, dict[str, CallCoverage | None], bytes, dict[str, object]]:
    channel, process = start_measured(python, LINE_SERVER, tmp_path)
    stdin, stdout, stderr = process.stdin, process.stdout, process.stderr
    assert stdin is not None and stdout is not None and stderr is not None

    replies: dict[str, object] = {}

    async def body() -> tuple[CollectorInfo | None, dict[str, CallCoverage | None]]:
        info = await channel.hello(10)
        collected: dict[str, CallCoverage | None] = {}
        for label, request in REQUESTS.items():
            stdin.write((json.dumps(request) + "\n").encode())
            stdin.flush()
            assert stdout.readline()
            collected[label] = await channel.collect(10)
        for label, (measured, request) in SWITCHED.items():
            await channel.measure(measured, 10)
            stdin.write((json.dumps(request) + "\n").encode())
            stdin.flush()
            replies[label] = json.loads(stdout.readline())
            if measured:
                collected[label] = await channel.collect(10)
        return info, collected

    try:
        info, collected = anyio.run(body)
    finally:
        channel.close()
        stdin.close()
        process.wait(10)
    return info, collected, stderr.read(), replies


def _check(
    info: CollectorInfo | None,
    collected: dict[str, CallCoverage | None],
    stderr: bytes,
    replies: dict[str, object],
    core: str,
) -> None:
    assert info is not None and info.core == core
    assert stderr == b""
    answers = {label: value for label, value in collected.items() if value is not None}
    assert answers.keys() == {*REQUESTS, "count after", "traced on"}
    for label, coverage in answers.items():
        assert {line.rsplit(":", 1)[0] for line in coverage.lines} == {"line_server.py"}, label
        assert {arc.rsplit(":", 2)[0] for arc in coverage.arcs} <= {"line_server.py"}, label
    # What runs before the answer is written is the call's; the loop around it may fall on
    # either side of a collect (the server goes on once it has answered).
    source = LINE_SERVER.read_text().splitlines()
    first = next(n for n, text in enumerate(source, 1) if text.startswith("def check"))
    last = next(n for n, text in enumerate(source, 1) if text.startswith("def count"))
    in_check = {f"line_server.py:{n}" for n in range(first, last)}
    assert answers["door"].lines & in_check
    assert answers["door again"].lines & in_check == answers["door"].lines & in_check
    assert answers["count"].arcs - answers["door"].arcs, "the loop's branches"
    seven = next(n for n, text in enumerate(LINE_SERVER.read_text().splitlines(), 1) if '"seven letters"' in text)
    assert f"line_server.py:{seven}" in answers["seven"].lines - answers["door"].lines
    assert Constant("open-sesame", "word") in answers["first"].constants
    assert Constant(7, "word", length=True) in answers["first"].constants
    assert all(not coverage.constants for label, coverage in answers.items() if label != "first")
    # Switched off for a call and on again: the call after it is measured from its start, and
    # nothing of the unmeasured call is in its answer.
    # (On 3.11 the loop around the call, a frame that was running when tracing came back on, may
    # be missing: the C tracer measures the frames that start after it.)
    assert info.pause
    start = next(n for n, text in enumerate(source, 1) if text.startswith("def count"))
    end = next(n for n, text in enumerate(source, 1) if text.startswith("def main"))

    def in_count(arcs: frozenset[str]) -> set[str]:
        return {arc for arc in arcs if start <= int(arc.rsplit(":", 2)[1]) < end}

    after = answers["count after"]
    assert in_count(answers["count"].arcs)
    assert in_count(after.arcs) == in_count(answers["count"].arcs)
    assert not after.lines & in_check, "the unmeasured call's lines are dropped"
    # Switched off means nothing measures the code: no trace function, no event armed on it.
    assert replies["traced off"] == {"traced": False}
    assert replies["traced on"] == {"traced": True}


def test_the_probe_of_the_python_fuzzgate_runs_on(tmp_path: Path) -> None:
    core = "sys.monitoring" if sys.version_info >= (3, 12) else "CTracer"
    _check(*_drive(sys.executable, tmp_path), core=core)


@pytest.mark.skipif(NEWER is None, reason="no Python 3.12+ on PATH or under pyenv for the sys.monitoring probe")
def test_sys_monitoring_on_a_newer_python(tmp_path: Path) -> None:
    assert NEWER is not None
    _check(*_drive(NEWER, tmp_path), core="sys.monitoring")
