"""The worker's writer thread: hands-off writes, retried until the store takes them, drained on stop."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from fuzzgate.fleet.worker_writer import StoreWriter
from fuzzgate.model.corpus import CorpusEntry
from fuzzgate.store.database import InMemoryDatabase
from fuzzgate.store.shared import Environment, SharedStore, StatsSnapshot, StoreError, WorkerInfo

ENV = Environment("0.1.0", "example 1.0", "abc")


class FlakyDatabase(InMemoryDatabase):
    """An in-memory database that refuses every operation while `down`, as Redis does while it restarts."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False

    def _check(self) -> None:
        if self.down:
            raise StoreError("redis://127.0.0.1:1/0: cannot connect (Connection refused)")

    def save(self, key: bytes, value: bytes) -> None:
        self._check()
        super().save(key, value)

    def fetch(self, key: bytes) -> Iterable[bytes]:
        self._check()
        return super().fetch(key)

    def delete(self, key: bytes, value: bytes) -> None:
        self._check()
        super().delete(key, value)


def _until(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "never happened"
        time.sleep(0.02)


def _writer(db: FlakyDatabase, log: list[str]) -> tuple[StoreWriter, SharedStore]:
    store = SharedStore(db, "redis://127.0.0.1:1/0")
    info = WorkerInfo("w1", "host", 1, 1.0, 1.0, ("srv",))
    return StoreWriter(store, info, log.append, heartbeat_s=0.1), SharedStore(db, "view")


def test_writes_wait_for_the_store_and_land_once_when_it_is_back() -> None:
    db = FlakyDatabase()
    db.down = True
    log: list[str] = []
    writer, view = _writer(db, log)
    writer.start()
    entries = [CorpusEntry("echo", {"text": str(i)}) for i in range(3)]
    writer.add_corpus("srv", entries)
    writer.write_stats(StatsSnapshot("w1", "srv", ENV, 1, 1.0))
    writer.write_stats(StatsSnapshot("w1", "srv", ENV, 2, 2.0))
    _until(lambda: writer.failing is not None)
    db.down = False
    _until(lambda: writer.written["corpus"] == 3 and writer.written["stats"] >= 1)
    assert sorted(e.key for e in view.corpus("srv").entries) == sorted(e.key for e in entries)
    assert [s.seq for s in view.stats("srv")] == [2], "only the latest snapshot waiting is written"
    assert len([line for line in log if "retrying" in line]) == 1, log
    assert any("writing again" in line for line in log), log
    assert writer.stop(5.0)
    assert [w.state for w in view.workers()] == ["stopped"]


def test_stop_gives_up_within_its_bound_when_the_store_stays_away() -> None:
    db = FlakyDatabase()
    log: list[str] = []
    writer, view = _writer(db, log)
    writer.start()
    _until(lambda: bool(db.keys()))
    db.down = True
    writer.add_corpus("srv", [CorpusEntry("echo", {"text": "x"})])
    assert not writer.stop(1.0)
    assert writer.lost >= 1
    db.down = False
    assert [w.state for w in view.workers()] == ["running"], "a worker that could not say it stopped"
