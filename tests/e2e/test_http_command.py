"""An HTTP target fuzzgate starts from its `[target] command`: a crash restarts the server, the
finding is confirmed on fresh servers and nothing outlives the run. The same server started by
the test and reached by URL only: its crash finding can only be unconfirmed, and fails the gate."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fuzzgate.sandbox.jail import sandbox_unavailable
from tests.e2e.conftest import free_port, fuzzgate, served_over_http

pytestmark = pytest.mark.e2e

SERVER = Path(__file__).resolve().parents[1] / "servers" / "http_crash.py"
RUN = ("--cases", "10", "--budget", "60s", "--seed", "0", "--timeout", "3s")


def _config(tmp_path: Path, port: int, *args: str) -> None:
    (tmp_path / "fuzzgate.toml").write_text(
        f"""\
[target]
kind = "http"
url = "http://127.0.0.1:{port}/mcp"
command = {str(sys.executable)!r}
args = [{", ".join(repr(a) for a in (str(SERVER), *args))}]
""",
        encoding="utf-8",
    )


def _servers(port: int) -> list[int]:
    """Live processes running the crash server on `port` (a zombie's command line is empty)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if str(SERVER).encode() in cmdline and f"--port={port}".encode() in cmdline:
                found.append(int(entry.name))
    return found


@pytest.fixture
def port() -> Iterator[int]:
    """A free loopback port; whatever still serves on it after a failed test is killed."""
    chosen = free_port()
    yield chosen
    for pid in _servers(chosen):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def test_a_served_http_target_is_restarted_and_its_crash_confirmed(tmp_path: Path, port: int) -> None:
    _config(tmp_path, port, f"--port={port}")
    run = fuzzgate("run", *RUN, cwd=tmp_path)
    assert run.code == 1, run.stdout + run.stderr
    report = run.report
    assert report["target"]["kind"] == "http"
    (crash,) = run.findings(kind="crash")
    assert crash["name"] == "store_record" and crash["repro"]["transport"] == "http"
    assert crash["replays"] > 0 and crash["reproduced"] > 0
    assert not crash["unconfirmed"] and not crash["flaky"]
    # The served process's stderr and exit status reach the oracles, as over stdio.
    assert "exit status 3" in crash["message"] and "RuntimeError: record buffer overflow" in crash["message"]
    assert "Traceback (most recent call last)" in crash["details"]["stderr"]
    assert crash["signature"][0] == "trace"
    # The crash took the server down; fuzzgate started another and went on fuzzing.
    assert "restarted the server" in run.stdout
    # `--cases 10` generated cases each; the tool's probes and the mutants of its corpus entries
    # come on top.
    cases = {e["name"]: e["cases"] - e["probes_planned"] for e in report["entries"]}
    assert cases.keys() == {"store_record", "echo"} and all(10 <= n <= 20 for n in cases.values()), cases
    assert report["verdict"] == "fail"
    assert _servers(port) == []
    assert "Traceback" not in run.stderr and "Exception ignored" not in run.stderr


def test_a_server_fuzzgate_did_not_start_leaves_its_crash_unconfirmed(tmp_path: Path, port: int) -> None:
    server = subprocess.Popen(
        [sys.executable, str(SERVER), f"--port={port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        _wait_for(port)
        run = fuzzgate("run", "--url", f"http://127.0.0.1:{port}/mcp", *RUN, cwd=tmp_path)
    finally:
        server.kill()
        server.wait(timeout=10)
    assert run.code == 1, run.stdout + run.stderr
    (crash,) = run.findings(kind="crash")
    # Nothing could restart the server: seen, never replayed, neither confirmed nor dropped.
    assert (crash["replays"], crash["unconfirmed"], crash["flaky"]) == (0, True, False)
    assert run.report["verdict"] == "fail"
    assert any("could not be reached" in note and "command" in note for note in run.report["notes"])


def test_a_served_http_target_that_cannot_start_exits_3(tmp_path: Path, port: int) -> None:
    # Without --port the server's argparse refuses to start: its stderr tail and status are shown.
    _config(tmp_path, port)
    run = fuzzgate("run", *RUN, cwd=tmp_path)
    assert run.code == 3, run.stdout + run.stderr
    assert f"never accepted connections on 127.0.0.1:{port}" in run.stderr
    assert "status 2" in run.stderr and "the following arguments are required: --port" in run.stderr
    assert not (tmp_path / "out").exists()
    # Something else on the port: without the sandbox (the server shares the host's loopback)
    # fuzzgate will not fuzz a server it did not start in its place.
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", port))
        holder.listen()
        _config(tmp_path, port, f"--port={port}")
        run = fuzzgate("run", *RUN, "--sandbox", "off", cwd=tmp_path)
    assert run.code == 3, run.stdout + run.stderr
    assert f"something is already listening on 127.0.0.1:{port}" in run.stderr
    assert _servers(port) == []


@pytest.mark.skipif(sandbox_unavailable() is not None, reason="needs Linux namespaces")
def test_a_served_http_target_in_the_sandbox_has_a_loopback_of_its_own(tmp_path: Path, port: int) -> None:
    """The server listens on the jail's loopback and fuzzgate reaches it through the relay: a host
    process holding the same port is neither in its way nor ever connected to, by fuzzgate or by
    the server's calls."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", port))
        holder.listen()
        holder.setblocking(False)
        _config(tmp_path, port, f"--port={port}")
        run = fuzzgate("run", *RUN, "--sandbox", "required", cwd=tmp_path)
        with pytest.raises(BlockingIOError):
            holder.accept()
    assert run.code == 1, run.stdout + run.stderr
    relayed = "network its own loopback only (fuzzgate reaches it through a Unix socket relay)"
    assert relayed in run.report["containment"]
    (crash,) = run.findings(kind="crash")
    assert crash["reproduced"] > 0 and not crash["unconfirmed"]
    assert run.report["calls"] > 10
    assert _servers(port) == []


def test_a_served_http_target_gets_coverage_feedback(tmp_path: Path, port: int) -> None:
    """The collector goes into an HTTP server fuzzgate starts as into a stdio one: its calls give
    coverage, which the corpus learns from."""
    _config(tmp_path, port, f"--port={port}")
    run = fuzzgate("run", *RUN, "--feedback", "auto", cwd=tmp_path)
    assert run.code == 1, run.stdout + run.stderr
    feedback = run.report["feedback"]
    assert feedback["signal"] == "coverage" and feedback["note"].startswith("coverage: Python "), feedback
    assert feedback["lines"] > 0 and feedback["arcs"] > 0, feedback
    assert f"measuring {SERVER.parent}" in feedback["note"], feedback
    assert list((tmp_path / ".fuzzgate" / "corpus").rglob("*.json")), "the run kept what reached new code"


def _wait_for(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"the test's server never listened on port {port}")


def test_a_request_fuzzgates_http_client_cannot_send_is_not_a_call(tmp_path: Path, port: int) -> None:
    # A lone surrogate cannot be encoded by the SDK's HTTP client, which breaks fuzzgate's side of
    # the session: every later request used to come back -32000 at once, counted as a call, and the
    # run said PASS over thousands of calls the server never saw. The count a run reports is the
    # count the server received; the unencodable request is counted apart, and the session reopened.
    log = tmp_path / "calls.log"
    argv = [sys.executable, str(SERVER), f"--port={port}", f"--call-log={log}"]
    with served_over_http(argv, port) as url:
        run = fuzzgate(
            "run", "--url", url, "--include", "echo", "--cases", "60", "--budget", "60s", "--seed", "0", cwd=tmp_path
        )
    assert run.code == 0, run.stdout + run.stderr
    report = run.report
    # The protocol probes (a tools/call of an unknown tool, or with odd `arguments`) are not calls.
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    received = [
        p for p in lines if isinstance(p, dict) and p.get("name") == "echo" and isinstance(p.get("arguments"), dict)
    ]
    assert report["calls"] == len(received) > 0
    assert report["unsendable"] >= 1 and report["verdict"] == "pass"
    assert any("never reached the server" in note for note in report["notes"]), report["notes"]
