"""Workers that come and go: real `fuzzgate work` processes against the buggy example server, one
real `redis-server` on loopback, workers killed with SIGKILL and Redis restarted mid-run.

Every kill and restart happens at a moment the store shows (the first finding, a worker's first
heartbeat, progress after the restart), never after a sleep, and nothing asserts how long anything
took: the test is bounded by generous timeouts while it polls the store.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fuzzgate.store.shared import SharedStore
from tests.e2e.conftest import SERVERS
from tests.redis_server import RedisServer, redis_server

pytestmark = pytest.mark.e2e
__all__ = ["redis_server"]

TARGET = "buggy_server"
QUICK = ("split_bill", "parse_config", "format_label")
"""Tools whose planted bug a few seconds of fuzzing finds (an internal error, a traceback, a crash)."""
TOOLS = (*QUICK, "echo")
WAIT_S = 240.0


class Workers:
    """`fuzzgate work` processes, each in its own session and directory, killed however the test ends."""

    def __init__(self, root: Path, url: str) -> None:
        self.root = root
        self.url = url
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str) -> subprocess.Popen[bytes]:
        cwd = self.root / name
        cwd.mkdir()
        argv = [
            sys.executable, "-m", "fuzzgate", "work", "--store", self.url,
            "--command", sys.executable, f"--arg={SERVERS / 'buggy_server.py'}",
            *(f"--include={tool}" for tool in TOOLS),
            "--cycle", "8s", "--tools", "2", "--replays", "1", "--feedback", "behaviour", "--timeout", "2s",
            "--nice", "5",
        ]  # fmt: skip
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "FUZZGATE_", "WALLFACER_"))}
        with open(cwd / "log.txt", "wb") as log:
            proc = subprocess.Popen(
                argv, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        self.procs[name] = proc
        return proc

    def log(self, name: str) -> str:
        return (self.root / name / "log.txt").read_text(errors="replace")

    def kill(self, name: str) -> None:
        proc = self.procs[name]
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)

    def close(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)


@pytest.fixture
def workers(tmp_path: Path, redis_server: RedisServer) -> Iterator[Workers]:
    crew = Workers(tmp_path, redis_server.url)
    try:
        yield crew
    finally:
        crew.close()


def _store(url: str) -> SharedStore:
    return SharedStore.open(url, retry_for=60)


def _state(store: SharedStore) -> tuple[set[str], set[str]]:
    """The fingerprints of the findings view and the keys of the corpus, as the store has them."""
    fingerprints = {found.finding.fingerprint for found in store.findings(TARGET)}
    keys = {entry.key for entry in store.corpus(TARGET).entries}
    return fingerprints, keys


def _until(what: str, condition: Callable[[], bool], crew: Workers, timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.5)
    logs = "\n".join(f"--- {name}\n{crew.log(name)[-3000:]}" for name in crew.procs)
    raise AssertionError(f"the store never showed {what} within {timeout:.0f}s\n{logs}")


def _kept(before: tuple[set[str], set[str]], store: SharedStore, when: str) -> None:
    fingerprints, keys = _state(store)
    assert before[0] <= fingerprints, f"findings lost {when}: {sorted(before[0] - fingerprints)}"
    assert before[1] <= keys, f"corpus entries lost {when}: {sorted(before[1] - keys)}"


def test_workers_killed_and_redis_restarted_lose_nothing_and_duplicate_nothing(
    workers: Workers, redis_server: RedisServer
) -> None:
    store = _store(redis_server.url)
    a, b = workers.start("a"), workers.start("b")

    # A worker killed as soon as the store shows a finding: what the store acknowledged stays.
    _until("a first finding", lambda: bool(store.findings(TARGET)), workers)
    before = _state(store)
    workers.kill("a")
    assert a.returncode == -signal.SIGKILL
    _kept(before, store, "when a worker was killed")

    c = workers.start("c")
    _until("the new worker's heartbeat", lambda: c.pid in {w.pid for w in store.workers()}, workers)

    # Redis killed (no shutdown) and started again on the same port and data: the workers go on.
    before = _state(store)
    redis_server.restart(hard=True)
    restarted = time.time()
    _kept(before, store, "across a Redis restart")
    running = [w.id for w in store.workers() if w.state == "running" and w.pid in (b.pid, c.pid)]
    assert len(running) == 2, store.workers()

    def beat_again() -> bool:
        seen = {w.pid: w.seen for w in store.workers()}
        return all(seen.get(proc.pid, 0) > restarted for proc in (b, c))

    _until("both live workers writing again after the restart", beat_again, workers)

    # The quick planted bugs, found by whichever workers are alive.
    def quick_found() -> bool:
        return {found.finding.name for found in store.findings(TARGET)} >= set(QUICK)

    _until("the quick planted bugs", quick_found, workers)
    before = _state(store)
    workers.kill("b")
    _kept(before, store, "when a second worker was killed")
    assert a.poll() is not None and b.poll() is not None

    # SIGTERM, once the worker is fuzzing (its statistics are in the store): it hands over what it
    # has, marks itself stopped and exits 0.
    def c_fuzzing() -> bool:
        ids = {w.id for w in store.workers() if w.pid == c.pid}
        return any(snapshot.worker in ids for snapshot in store.stats(TARGET))

    _until("the new worker's statistics", c_fuzzing, workers)
    os.kill(c.pid, signal.SIGTERM)
    assert c.wait(timeout=120) == 0, workers.log("c")
    assert "stopped after" in workers.log("c")
    stopped = [w for w in store.workers() if w.pid == c.pid]
    assert [w.state for w in stopped] == ["stopped"], stopped
    assert [w.state for w in store.workers() if w.pid == a.pid] == ["running"], "a killed worker cannot say"

    # One view entry per bug, however many workers met it and however often they were killed.
    found = store.findings(TARGET)
    fingerprints = [f.finding.fingerprint for f in found]
    assert len(fingerprints) == len(set(fingerprints)), fingerprints
    for record in found:
        assert len(record.workers) == len(set(record.workers))
    _kept(before, store, "at the end")
    # Every record belongs to a worker that ran, and a worker that was never killed left exactly one
    # record per fingerprint (each rewrite deleted the one before).
    ids = {w.id for w in store.workers()}
    assert {worker for f in found for worker in f.workers} <= ids
    [c_id] = [w.id for w in stopped]
    per_fingerprint = Counter(r.finding.fingerprint for r in store.finding_records(TARGET) if r.worker == c_id)
    assert all(n == 1 for n in per_fingerprint.values()), per_fingerprint
    store.close()


def test_work_exits_2_in_one_line_when_the_store_is_unreachable(tmp_path: Path) -> None:
    from tests.redis_server import free_port

    proc = subprocess.run(
        [
            sys.executable, "-m", "fuzzgate", "work", "--store", f"redis://127.0.0.1:{free_port()}/0", "--wait", "1s",
            "--command", sys.executable, f"--arg={SERVERS / 'buggy_server.py'}",
        ],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "store error" in proc.stderr and "cannot connect" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_work_without_a_store_or_with_a_bad_cycle_is_a_usage_error(tmp_path: Path) -> None:
    base = [
        sys.executable,
        "-m",
        "fuzzgate",
        "work",
        "--command",
        sys.executable,
        f"--arg={SERVERS / 'buggy_server.py'}",
    ]
    for extra, words in (((), "needs a store"), (("--store", "d", "--cycle", "soon"), "--cycle")):
        proc = subprocess.run([*base, *extra], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert words in proc.stderr


def test_one_worker_fuzzes_several_targets_and_picks_the_unfuzzed_one_first(tmp_path: Path) -> None:
    also = tmp_path / "fast.toml"
    also.write_text(
        f'[target]\nkind = "stdio"\ncommand = {str(sys.executable)!r}\nargs = [{str(SERVERS / "fast_server.py")!r}]\n'
        '\n[fuzzgate]\nname = "fast"\n',
        encoding="utf-8",
    )
    store_dir = tmp_path / "store"
    proc = subprocess.run(
        [
            sys.executable, "-m", "fuzzgate", "work", "--store", str(store_dir), "--also", str(also),
            "--command", sys.executable, f"--arg={SERVERS / 'clean_server.py'}",
            "--cycle", "6s", "--cycles", "2", "--replays", "0", "--feedback", "behaviour", "--nice", "0",
        ],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "cycle 1 on clean_server (every tool)" in proc.stdout, proc.stdout
    assert "cycle 2 on fast (every tool)" in proc.stdout, proc.stdout
    store = SharedStore.open(str(store_dir))
    assert set(store.targets()) == {"clean_server", "fast"}
    for target in ("clean_server", "fast"):
        [snapshot] = store.stats(target)
        assert sum(tool.calls for tool in snapshot.tools.values()) > 0
    [worker] = store.workers()
    assert worker.state == "stopped" and set(worker.targets) == {"clean_server", "fast"}
