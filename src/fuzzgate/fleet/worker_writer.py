"""A worker's writes to the shared store, from one thread, so a slow or lost store never holds up
fuzzing.

The worker hands records over (`add_corpus`, `record_findings`, `write_stats`) and goes on; the
writer thread writes them in order, and a heartbeat every `HEARTBEAT_S`. A write that fails (Redis
restarting, a network blip, after the backend's own retries) is tried again with backoff, the same
record, until the store takes it: nothing handed over is dropped while the worker runs, and what
the store acknowledged stays there. Statistics are a snapshot per target that the next one replaces,
so only the latest waiting one is written.

`stop` drains what is waiting (within a bound: a store that is gone for good must not keep a
stopping worker alive), then writes the worker's record as stopped.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from fuzzgate.model.corpus import CorpusEntry
from fuzzgate.store.shared import FindingRecord, SharedStore, StatsSnapshot, StoreError, WorkerInfo

HEARTBEAT_S = 5.0
BACKOFF_FIRST_S = 0.5
BACKOFF_MAX_S = 10.0

Log = Callable[[str], None]


class StoreWriter:
    def __init__(self, store: SharedStore, info: WorkerInfo, log: Log, *, heartbeat_s: float = HEARTBEAT_S) -> None:
        self.store = store
        self.info = info
        self._log = log
        self._heartbeat_s = heartbeat_s
        self._jobs: queue.Queue[tuple[str, Callable[[], object]] | None] = queue.Queue()
        self._stats: dict[str, StatsSnapshot] = {}
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="fuzzgate-store-writer", daemon=True)
        self._give_up_at: float | None = None
        self._next_beat = 0.0
        self.written = {"corpus": 0, "findings": 0, "stats": 0}
        """What the store acknowledged so far (corpus: new entries it took)."""
        self.failing: str | None = None
        """The store's last error while it fails, None while it takes writes."""
        self.lost = 0
        """Jobs given up when `stop` ran out of time."""

    # --- the worker's side ----------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def targets(self, targets: Sequence[str]) -> None:
        self.info = replace(self.info, targets=tuple(targets))

    def add_corpus(self, target: str, entries: Sequence[CorpusEntry]) -> None:
        if entries:
            batch = list(entries)
            self._jobs.put(("corpus", lambda: self._count("corpus", self.store.add_corpus(target, batch))))

    def record_findings(self, records: Sequence[FindingRecord]) -> None:
        if records:
            batch = list(records)
            self._jobs.put(("findings", lambda: self._findings(batch)))

    def write_stats(self, snapshot: StatsSnapshot) -> None:
        with self._lock:
            self._stats[snapshot.target] = snapshot
        self._jobs.put(("stats", self._write_stats))

    def stop(self, drain_s: float) -> bool:
        """Write what waits (for at most `drain_s`), then the worker's record as stopped. True when
        everything handed over was written."""
        self._give_up_at = time.monotonic() + drain_s
        self._jobs.put(None)
        self._thread.join(drain_s + 5)
        return not self._thread.is_alive() and self.lost == 0

    # --- the thread ------------------------------------------------------------------------------

    def _count(self, kind: str, n: int) -> None:
        self.written[kind] += n

    def _findings(self, records: list[FindingRecord]) -> None:
        self.store.record_findings(records)
        self.written["findings"] += len(records)

    def _write_stats(self) -> None:
        with self._lock:
            waiting = list(self._stats.values())
            self._stats.clear()
        for snapshot in waiting:
            try:
                self.store.write_stats(snapshot)
            except BaseException:
                with self._lock:
                    # Not replaced by a newer one meanwhile: tried again.
                    self._stats.setdefault(snapshot.target, snapshot)
                raise
            self.written["stats"] += 1

    def _beat(self, state: str = "running") -> None:
        self.info = replace(self.info, seen=time.time(), state=state)
        self.store.heartbeat(self.info)
        self._next_beat = time.monotonic() + self._heartbeat_s

    def _run(self) -> None:
        while True:
            due = time.monotonic() >= self._next_beat and self._give_up_at is None
            if due and not self._attempt("heartbeat", self._beat):
                break
            timeout = max(0.05, self._next_beat - time.monotonic())
            try:
                job = self._jobs.get(timeout=timeout)
            except queue.Empty:
                continue
            if job is None:
                self._attempt("stopped", lambda: self._beat("stopped"))
                return
            if not self._attempt(*job):
                break
        # Gave up (stopping, the store gone past the bound): count what is left unwritten.
        while True:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                return
            if job is not None:
                self.lost += 1

    def _attempt(self, what: str, job: Callable[[], object]) -> bool:
        """Run `job` until the store takes it; False when stopping ran out of time first."""
        delay = BACKOFF_FIRST_S
        began = time.monotonic()
        while True:
            try:
                job()
            except StoreError as exc:
                if self.failing is None:
                    self._log(f"{exc.message}; retrying in the background (fuzzing goes on)")
                self.failing = exc.message
            except Exception as exc:  # a bug, not an outage: retrying would never end
                self._log(f"store: writing {what} failed ({type(exc).__name__}: {exc}); dropped")
                return True
            else:
                if self.failing is not None:
                    self._log(f"store {self.store.location}: writing again after {time.monotonic() - began:.0f}s")
                    self.failing = None
                return True
            if self._give_up_at is not None and time.monotonic() + delay > self._give_up_at:
                self.lost += 1
                return False
            time.sleep(delay)
            delay = min(BACKOFF_MAX_S, delay * 2)
