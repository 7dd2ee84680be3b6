"""Several writer processes on one store, some killed mid-write, Redis itself killed and restarted
under them: every acknowledged entry and finding is there, each bug once, each worker's latest
statistics."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fuzzgate.model.corpus import CorpusEntry
from fuzzgate.store.shared import SharedStore, findings_key
from tests.redis_server import RedisServer

WRITER = Path(__file__).with_name("store_writer.py")
ROUNDS = 30
FINGERPRINTS = ("fp0", "fp1", "fp2")
WAIT_S = 180.0
PAUSE_S = "0.05"
"""Between a writer's rounds: its 30 rounds last long enough to be killed in the middle."""


class Writer:
    """One `store_writer.py` process and the rounds the store acknowledged to it."""

    def __init__(self, spec: str, worker: str) -> None:
        self.worker = worker
        self.acks: list[int] = []
        self.proc = subprocess.Popen(
            [sys.executable, str(WRITER), spec, worker, str(ROUNDS), PAUSE_S],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("ack "):
                self.acks.append(int(line.split()[1]))

    def wait_for_acks(self, n: int) -> None:
        deadline = time.monotonic() + WAIT_S
        while len(self.acks) < n:
            if self.proc.poll() is not None:
                self._reader.join()
                assert len(self.acks) >= n, self._failure()
                return
            assert time.monotonic() < deadline, f"{self.worker} acknowledged only {len(self.acks)} rounds"
            time.sleep(0.02)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self._reader.join()

    def finish(self) -> None:
        code = self.proc.wait(timeout=WAIT_S)
        self._reader.join()
        assert code == 0, self._failure()
        assert self.acks == list(range(ROUNDS))

    def _failure(self) -> str:
        stderr = self.proc.stderr.read() if self.proc.stderr and self.proc.poll() is not None else ""
        return f"{self.worker} exited {self.proc.returncode}: {stderr[-2000:]}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.kill()


@pytest.fixture(params=["redis", "directory"])
def spec(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "redis":
        server: RedisServer = request.getfixturevalue("redis_server")
        return server.url
    return str(tmp_path / "store")


def test_killed_writers_and_a_redis_restart_lose_nothing_acknowledged(
    spec: str, request: pytest.FixtureRequest
) -> None:
    writers = [Writer(spec, f"w{n}") for n in range(4)]
    try:
        killed, survivors = writers[:2], writers[2:]
        for writer in killed:
            writer.wait_for_acks(5)
            writer.kill()  # anywhere: between a write and its delete, mid-batch, ...
        if spec.startswith("redis://"):
            survivors[0].wait_for_acks(5)
            server: RedisServer = request.getfixturevalue("redis_server")
            server.restart(hard=True)  # SIGKILL: only the fsynced append-only file keeps the data
        for writer in survivors:
            writer.finish()
    finally:
        for writer in writers:
            writer.stop()

    store = SharedStore.open(spec, retry_for=10)
    # Every corpus entry any writer was told was written is there.
    keys = {entry.key for entry in store.corpus("srv").entries}
    for writer in writers:
        for i in writer.acks:
            assert CorpusEntry(tool="divide", arguments={"worker": writer.worker, "i": i}).key in keys

    # Each bug once, with the smallest repro anyone had and hits counted once per worker.
    found = store.findings("srv")
    assert sorted(f.finding.fingerprint for f in found) == list(FINGERPRINTS)
    for stored in found:
        n = FINGERPRINTS.index(stored.finding.fingerprint)
        acked = [sum(1 for i in w.acks if i % 3 == n) for w in writers]
        most = [a + (1 if w in killed else 0) for a, w in zip(acked, writers, strict=True)]
        assert sum(acked) <= stored.finding.count <= sum(most)
        last_round = max(i for i in range(ROUNDS) if i % 3 == n)
        assert stored.finding.repro.case_index == ROUNDS - last_round
        assert {"w2", "w3"} <= set(stored.workers)
        assert stored.state == "confirmed"

    # The latest statistics of each worker: at least what it was told was written.
    latest = {snapshot.worker: snapshot.seq for snapshot in store.stats("srv")}
    for writer in writers:
        if writer.acks:
            assert latest[writer.worker] >= len(writer.acks)
    assert latest["w2"] == latest["w3"] == ROUNDS
    assert {w.id for w in store.workers()} == {w.worker for w in writers}

    # What crashes left behind folds away: one record per worker and fingerprint at most.
    store.compact()
    assert len(list(store.db.fetch(findings_key("srv")))) <= len(writers) * len(FINGERPRINTS)
    assert store.findings("srv") == found
    store.close()
