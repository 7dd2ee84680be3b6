"""What every benchmark script shares: where things are, starting servers on free loopback ports,
and running the real `fuzzgate` CLI with its progress lines timestamped as they arrive.

Every process started here is in its own session and is killed (the whole group) on every exit
path, as fuzzgate itself does with the servers it owns.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
WORK = BENCH / ".work"
RESULTS = WORK / "results"
SERVERS = BENCH / "servers"
EXAMPLES = REPO / "examples" / "servers"
# $BENCH_FUZZGATE_VENV runs another fuzzgate (a snapshot of one commit, while others edit src/).
MAIN_VENV = Path(os.environ.get("BENCH_FUZZGATE_VENV", REPO / ".venv"))
PYTHON = str(MAIN_VENV / "bin" / "python")
FUZZGATE = str(MAIN_VENV / "bin" / "fuzzgate")
# The workplace's sandbox, beside the checkout (../shared); $NETJAIL overrides.
NETJAIL = Path(os.environ.get("NETJAIL", REPO.parent / "shared" / "tools" / "netjail.sh"))

# "N calls, M finding(s), Ks left", or the status line "N calls (R/s), B behaviours, ...".
_PROGRESS = re.compile(r"^\s*(\d+) calls(?:, \d+ finding| \(\d+/s\), )")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout_s:g}s")


def kill_group(proc: subprocess.Popen[Any], grace_s: float = 2.0) -> None:
    """SIGTERM the process group, then SIGKILL it, and reap the leader."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(grace_s)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(5)


@contextlib.contextmanager
def http_server(argv: Sequence[str], port: int, log: Path | None = None) -> Iterator[str]:
    """Start an HTTP MCP server on 127.0.0.1:`port`; yield its /mcp URL; stop it afterwards."""
    out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True)
    try:
        wait_for_port(port)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        kill_group(proc)
        if log:
            out.close()  # type: ignore[union-attr]


@dataclass
class FuzzgateRun:
    """One `fuzzgate run`: its exit code, report, and the CLI's progress lines with arrival times."""

    exit_code: int
    wall_s: float
    report: dict[str, Any] | None
    progress: list[tuple[float, int]] = field(default_factory=list)
    """(seconds since the CLI started, calls so far), one per progress line the CLI printed."""
    output: str = ""
    started_at: float | None = None
    """Seconds from spawning the CLI to its first output line (the run-started line)."""
    peak_rss_kib: int = 0
    server_peak_rss_kib: int = 0
    rss_samples: list[tuple[float, int, int]] = field(default_factory=list)
    """(seconds since start, fuzzgate RSS KiB, server RSS KiB), sampled once a second."""

    @property
    def run_rate(self) -> float:
        """calls / duration_s, as report.json states them (duration includes start-up and discovery)."""
        if not self.report or not self.report.get("duration_s"):
            return 0.0
        return float(self.report["calls"]) / float(self.report["duration_s"])

    @property
    def loop_rate(self) -> float:
        """Calls per second of the fuzzing loop alone, without start-up, discovery and output writing.

        The CLI prints its first line when the run starts (the engine starts with it when the
        baseline is empty) and its first progress line at the first call's end; fuzzing ends
        `duration_s` after the engine started. So the loop ran `report.calls - first_progress_calls`
        calls in `started_at + duration_s - first_progress_at` seconds.
        """
        if not self.progress or not self.report or self.started_at is None:
            return 0.0
        t0, c0 = self.progress[0]
        span = self.started_at + float(self.report["duration_s"]) - t0
        return (int(self.report["calls"]) - c0) / span if span > 0 else 0.0


def _rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _descendants(pid: int) -> list[int]:
    found, todo = [], _children(pid)
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(_children(p))
    return found


def run_fuzzgate(
    args: Sequence[str],
    out_dir: Path,
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout_s: float = 3600,
    sample_rss: bool = False,
    wrapper: Sequence[str] = (),
) -> FuzzgateRun:
    """Run `fuzzgate run ARGS --out OUT_DIR`, reading its output line by line as it comes; `wrapper`
    goes before the command line (a jail that fuzzgate and its server both run in)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    # A report left by an earlier run in the same directory must never pass for this run's (one that
    # fails writes none).
    (out_dir / "report.json").unlink(missing_ok=True)
    argv = [*wrapper, FUZZGATE, "run", *args, "--out", str(out_dir)]
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200", **(env or {})}
    full_env.pop("GITHUB_ACTIONS", None)
    full_env.pop("GITHUB_STEP_SUMMARY", None)
    start = time.monotonic()
    proc = subprocess.Popen(
        argv,
        cwd=cwd or out_dir,
        env=full_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    result = FuzzgateRun(exit_code=-1, wall_s=0.0, report=None)
    lines: list[str] = []
    sampler_stop = False

    def sample() -> None:
        while not sampler_stop and proc.poll() is None:
            own = _rss_kib(proc.pid)
            server = sum(_rss_kib(p) for p in _descendants(proc.pid))
            result.peak_rss_kib = max(result.peak_rss_kib, own)
            result.server_peak_rss_kib = max(result.server_peak_rss_kib, server)
            result.rss_samples.append((round(time.monotonic() - start, 1), own, server))
            time.sleep(1.0)

    sampler = threading.Thread(target=sample, daemon=True) if sample_rss else None
    if sampler:
        sampler.start()
    killer = threading.Timer(timeout_s, lambda: kill_group(proc, 1.0))
    killer.start()
    try:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.decode("utf-8", "replace")
            lines.append(line)
            now = time.monotonic() - start
            if m := _PROGRESS.match(line):
                result.progress.append((now, int(m.group(1))))
            if result.started_at is None:
                result.started_at = now
        proc.wait()
    finally:
        killer.cancel()
        sampler_stop = True
        kill_group(proc)
        if sampler:
            sampler.join()
    result.exit_code = proc.returncode
    result.wall_s = time.monotonic() - start
    result.output = "".join(lines)
    report = out_dir / "report.json"
    if report.exists():
        result.report = json.loads(report.read_text())
    return result


def fuzzgate_version() -> str:
    out = subprocess.run([FUZZGATE, "--version"], capture_output=True, text=True, check=False)
    return out.stdout.strip() or out.stderr.strip()


def save_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True))
    tmp.replace(path)


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)
