"""The shared store: corpus, findings, statistics and workers of many runs, in one `CorpusDatabase`.

HypoFuzz's design: all state that matters lives here, workers only read and write it, and every
view (`fuzzgate report`, `fuzzgate store show`) is drawn from it, so workers can come and go and
nothing is lost. Any backend serves: `InMemoryDatabase` (tests), `SetDirectoryDatabase` (a
directory a person can browse), `RedisDatabase` (many machines).

Layout (keys are UTF-8; each value is one JSON object of `"format": 1`, see `records`):

    fuzzgate/1/targets             target names
    fuzzgate/1/corpus/<target>     corpus entries, `entry_bytes` (the files of a run's corpus)
    fuzzgate/1/findings/<target>   `FindingRecord`s: one per worker and fingerprint
    fuzzgate/1/stats/<target>      `StatsSnapshot`s: the latest per worker counts
    fuzzgate/1/workers             `WorkerInfo` heartbeats: the latest per worker counts

Writers never coordinate. A worker replaces its own record by writing the new value first and
then deleting the one it wrote before, so a worker killed between the two leaves both, and the
views fold them: the latest record per worker, then one `StoredFinding` per (target, fingerprint)
across workers. Nothing is ever lost by a crash; at worst a superseded value lingers until
`compact()`.

Reading never fails on a bad value: one that does not parse (another format, a torn hand edit) is
skipped and its reason appended to `skipped`. Failures of the backend itself (Redis unreachable
after its retries, a directory that cannot be written) raise `StoreError`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from types import TracebackType
from typing import Any, TypeVar

from fuzzgate.model.corpus import CorpusEntry, CorpusFormatError
from fuzzgate.store.corpus_store import MAX_ENTRIES_PER_TOOL, CorpusLoad, entry_bytes, read_entry
from fuzzgate.store.database import CorpusDatabase
from fuzzgate.store.fold import finding_order, fold_finding, latest_by, record_identity, record_order
from fuzzgate.store.layout import (
    KINDS,
    PREFIX,
    TARGETS_KEY,
    WORKERS_KEY,
    corpus_key,
    findings_key,
    split_key,
    stats_key,
    value_id,
)
from fuzzgate.store.location import StoreError, is_url, mask_url
from fuzzgate.store.records import (
    STATES,
    STORE_FORMAT,
    TIMELINE_POINTS,
    Environment,
    FindingRecord,
    RecordError,
    StatsSnapshot,
    StoredFinding,
    TimelinePoint,
    ToolStats,
    WorkerInfo,
    dump,
    finding_state,
    load,
    thin_timeline,
)

__all__ = [
    "PREFIX",
    "STATES",
    "STORE_FORMAT",
    "TIMELINE_POINTS",
    "Environment",
    "FindingRecord",
    "SharedStore",
    "StatsSnapshot",
    "StoreError",
    "StoredFinding",
    "TimelinePoint",
    "ToolStats",
    "WorkerInfo",
    "finding_state",
    "is_url",
    "mask_url",
    "new_worker_id",
    "thin_timeline",
]


ENTRY_CACHE = 200_000
"""Parsed corpus values a store remembers at most (a few hundred MB at worst); past it, it starts over."""


def new_worker_id() -> str:
    """A fresh worker id, `<host>-<pid>-<6 hex>`: readable, and unique even when a pid is reused."""
    import os
    import secrets
    import socket

    host = socket.gethostname().split(".")[0] or "host"
    return f"{host}-{os.getpid()}-{secrets.token_hex(3)}"


_T = TypeVar("_T")


class SharedStore:
    """The shared store over `db` (see the module docstring). `location` names it in messages;
    for a Redis URL, with any password replaced by `***`."""

    def __init__(self, db: CorpusDatabase, location: str) -> None:
        self.db = db
        self.location = mask_url(location)
        self.skipped: list[str] = []
        """`"<where>: <reason>"` for every value the reads so far skipped (each once)."""
        self._own: dict[tuple[str, ...], bytes] = {}
        """The last value this process wrote per record identity, to delete when it writes the next."""
        self._registered: set[str] = set()
        self._entries: dict[bytes, tuple[CorpusEntry, str] | str] = {}
        """Corpus values parsed before (the entry and its key, or why it is not one): a worker
        reads the corpus before every batch it adds, and parsing thousands of entries (hashing
        each for its key) each time would cost far more than fetching them."""

    @classmethod
    def open(cls, spec: str, *, retry_for: float = 30.0) -> SharedStore:
        """The store at `spec`: a `redis://`, `rediss://` or `unix://` URL, else a directory.
        `retry_for` bounds how long each Redis operation retries a lost connection."""
        if is_url(spec):
            from fuzzgate.store.redis_db import RedisDatabase

            return cls(RedisDatabase.from_url(spec, retry_for=retry_for), spec)
        from pathlib import Path

        from fuzzgate.store.set_directory import SetDirectoryDatabase

        return cls(SetDirectoryDatabase(Path(spec)), spec)

    def __repr__(self) -> str:
        return f"SharedStore({self.location!r})"

    def __enter__(self) -> SharedStore:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        close: Callable[[], None] | None = getattr(self.db, "close", None)
        if close is not None:
            close()

    # --- targets ----------------------------------------------------------------------------------

    def targets(self) -> list[str]:
        """Every target anything was written for, sorted."""
        names = set()
        for value in self.db.fetch(TARGETS_KEY):
            try:
                names.add(value.decode("utf-8"))
            except UnicodeDecodeError:
                self._skip(TARGETS_KEY, value, "not a UTF-8 target name")
        return sorted(name for name in names if name)

    def _register(self, target: str) -> None:
        if target not in self._registered:
            self.db.save(TARGETS_KEY, target.encode("utf-8"))
            self._registered.add(target)

    # --- corpus -----------------------------------------------------------------------------------

    def corpus(self, target: str) -> CorpusLoad:
        """`target`'s entries, one per key, sorted by key; values that are not entries are skipped."""
        entries, skipped = self._corpus(target)
        loaded = tuple(entries[k] for k in sorted(entries))
        cold = None
        if not loaded:
            cold = (
                f"none of the {len(skipped)} value(s) of {target} in {self.location} could be read"
                if skipped
                else f"no corpus for {target} in {self.location} yet"
            )
        return CorpusLoad(loaded, tuple(skipped), cold)

    def add_corpus(self, target: str, entries: Iterable[CorpusEntry], *, cap: bool = True) -> int:
        """Write the entries whose key is not stored yet, at most `MAX_ENTRIES_PER_TOOL` per tool
        (workers writing at the same moment may pass it by a few; `cap=False`, for an import that
        keeps every input, lifts it). Returns how many were written."""
        entries = list(entries)
        if not entries:
            return 0
        held, _ = self._corpus(target)
        keys = set(held)
        counts = Counter((entry.surface, entry.tool) for entry in held.values())
        new: list[bytes] = []
        for entry in entries:
            key = entry.key
            if key in keys or (cap and counts[entry.surface, entry.tool] >= MAX_ENTRIES_PER_TOOL):
                continue
            keys.add(key)
            counts[entry.surface, entry.tool] += 1
            new.append(entry_bytes(entry))
        self._register(target)
        self._save_all(corpus_key(target), new)
        return len(new)

    def _corpus(self, target: str) -> tuple[dict[str, CorpusEntry], list[str]]:
        """`target`'s entries by key (the first value in byte order wins a key), and the skips."""
        key = corpus_key(target)
        entries: dict[str, CorpusEntry] = {}
        skipped: list[str] = []
        for value in sorted(self.db.fetch(key)):
            parsed = self._entry(value)
            if isinstance(parsed, str):
                skipped.append(self._skip(key, value, parsed))
                continue
            entry, entry_key = parsed
            entries.setdefault(entry_key, entry)
        return entries, skipped

    # --- findings ---------------------------------------------------------------------------------

    def record_findings(self, records: Iterable[FindingRecord]) -> None:
        """Write each record, then delete the record this process wrote before for the same worker
        and fingerprint (new first: a crash in between leaves both, and the views fold them)."""
        for record in records:
            self._register(record.target)
            self._replace(
                findings_key(record.target),
                ("finding", record.target, record.worker, record.finding.fingerprint),
                dump(record.to_json()),
            )

    def finding_records(self, target: str) -> list[FindingRecord]:
        """Every readable record of `target`, as stored (several per worker may linger)."""
        key = findings_key(target)
        records = self._parse(key, FindingRecord.from_json)
        kept = []
        for value, record in records:
            if record.target != target:
                self._skip(key, value, f"a record of target {record.target!r} under {target!r}")
                continue
            kept.append(record)
        return kept

    def findings(self, target: str | None = None) -> list[StoredFinding]:
        """One `StoredFinding` per (target, fingerprint), of `target` or of every target; sorted
        by target, then most severe first."""
        targets = [target] if target is not None else self.targets()
        folded: list[StoredFinding] = []
        for name in targets:
            by_fingerprint: dict[str, list[FindingRecord]] = {}
            for record in latest_by(self.finding_records(name), record_identity, record_order):
                by_fingerprint.setdefault(record.finding.fingerprint, []).append(record)
            folded.extend(fold_finding(name, records) for records in by_fingerprint.values())
        return sorted(folded, key=finding_order)

    # --- statistics -------------------------------------------------------------------------------

    def write_stats(self, snapshot: StatsSnapshot) -> None:
        """Write `snapshot`, then delete the one this process wrote before for that worker and target."""
        self._register(snapshot.target)
        self._replace(stats_key(snapshot.target), ("stats", snapshot.target, snapshot.worker), dump(snapshot.to_json()))

    def stats(self, target: str, environment: Environment | None = None) -> list[StatsSnapshot]:
        """The latest snapshot of each worker on `target` (highest `seq`), sorted by worker; only
        snapshots of `environment` when given."""
        key = stats_key(target)
        snapshots = [snapshot for _, snapshot in self._parse(key, StatsSnapshot.from_json)]
        if environment is not None:
            snapshots = [s for s in snapshots if s.environment == environment]
        latest = latest_by(snapshots, lambda s: (s.worker,), lambda s: (s.seq, s.written))
        return sorted(latest, key=lambda s: s.worker)

    # --- workers ----------------------------------------------------------------------------------

    def heartbeat(self, worker: WorkerInfo) -> None:
        """Write `worker`'s heartbeat, then delete the one this process wrote before."""
        self._replace(WORKERS_KEY, ("worker", worker.id), dump(worker.to_json()))

    def workers(self) -> list[WorkerInfo]:
        """The latest heartbeat of every worker that ever wrote one, oldest start first."""
        infos = [info for _, info in self._parse(WORKERS_KEY, WorkerInfo.from_json)]
        latest = latest_by(infos, lambda w: (w.id,), lambda w: (w.seen, w.state == "stopped"))
        return sorted(latest, key=lambda w: (w.started, w.id))

    # --- moving between stores --------------------------------------------------------------------

    def copy_to(self, other: SharedStore) -> dict[str, int]:
        """Add every readable value of this store to `other` (a union: nothing in `other` is
        removed). Returns how many values of each kind were new there, and `skipped`: values that
        did not parse (their reasons are in `skipped`)."""
        counts = dict.fromkeys((*KINDS, "skipped"), 0)
        targets_before = set(other.targets())
        keys = sorted(k for k in self.db.keys() if k.startswith(PREFIX.encode()))  # noqa: SIM118
        for key in keys:
            kind, target = split_key(key)
            check = _CHECKS.get(kind)
            if check is None or (kind in ("corpus", "findings", "stats")) != bool(target):
                for value in self.db.fetch(key):
                    self._skip(key, value, "not a key of store format 1")
                    counts["skipped"] += 1
                continue
            good = []
            for value in sorted(self.db.fetch(key)):
                try:
                    check(value)
                except _UNREADABLE as exc:
                    self._skip(key, value, _reason(exc))
                    counts["skipped"] += 1
                    continue
                good.append(value)
            if target:
                other._register(target)
            there = set(other.db.fetch(key))
            new = [value for value in good if value not in there]
            other._save_all(key, new)
            counts[kind] += len(new)
        # Targets a value named are registered as it is copied: count what is new at the end.
        counts["targets"] = len(set(other.targets()) - targets_before)
        return counts

    def compact(self) -> int:
        """Delete values that a later value of the same worker supersedes (left by a crash between
        a write and its delete, or by a merge of two stores). Returns how many were deleted."""
        deleted = 0
        for target in self.targets():
            deleted += self._drop_superseded(
                findings_key(target), FindingRecord.from_json, record_identity, record_order
            )
            deleted += self._drop_superseded(
                stats_key(target), StatsSnapshot.from_json, lambda s: (s.worker,), lambda s: (s.seq, s.written)
            )
        deleted += self._drop_superseded(
            WORKERS_KEY, WorkerInfo.from_json, lambda w: (w.id,), lambda w: (w.seen, w.state == "stopped")
        )
        return deleted

    # --- internals --------------------------------------------------------------------------------

    def _entry(self, value: bytes) -> tuple[CorpusEntry, str] | str:
        parsed = self._entries.get(value)
        if parsed is None:
            try:
                entry = read_entry(value)
                parsed = (entry, entry.key)
            except _UNREADABLE as exc:
                parsed = _reason(exc)
            if len(self._entries) >= ENTRY_CACHE:
                self._entries.clear()
            self._entries[value] = parsed
        return parsed

    def _replace(self, key: bytes, identity: tuple[str, ...], value: bytes) -> None:
        self.db.save(key, value)
        old = self._own.get(identity)
        if old is not None and old != value:
            self.db.delete(key, old)
        self._own[identity] = value

    def _save_all(self, key: bytes, values: list[bytes]) -> None:
        # A backend with a batch write (Redis: one round trip) uses it.
        save_many: Callable[[bytes, Iterable[bytes]], None] | None = getattr(self.db, "save_many", None)
        if save_many is not None:
            if values:
                save_many(key, values)
            return
        for value in values:
            self.db.save(key, value)

    def _parse(self, key: bytes, parse: Callable[[Mapping[str, Any]], _T]) -> list[tuple[bytes, _T]]:
        parsed = []
        for value in sorted(self.db.fetch(key)):
            try:
                parsed.append((value, parse(load(value))))
            except _UNREADABLE as exc:
                self._skip(key, value, _reason(exc))
        return parsed

    def _skip(self, key: bytes, value: bytes, reason: str) -> str:
        where = key.decode("utf-8", "backslashreplace")
        text = f"{self.location} {where} value {value_id(value)}: {reason}"
        if text not in self.skipped:
            self.skipped.append(text)
        return text

    def _drop_superseded(
        self,
        key: bytes,
        parse: Callable[[Mapping[str, Any]], _T],
        identity: Callable[[_T], tuple[Any, ...]],
        order: Callable[[_T], tuple[Any, ...]],
    ) -> int:
        parsed = self._parse(key, parse)
        keep = {id(item) for item in latest_by([item for _, item in parsed], identity, order)}
        stale = [value for value, item in parsed if id(item) not in keep]
        for value in stale:
            self.db.delete(key, value)
        return len(stale)


_UNREADABLE = (CorpusFormatError, KeyError, TypeError, ValueError, AttributeError, ArithmeticError, RecursionError)
"""What parsing a stored value can raise: each is a reason to skip the value, never an error. The
parsers raise `RecordError` / `CorpusFormatError` with words; the rest is for shapes they missed."""


def _reason(exc: Exception) -> str:
    if isinstance(exc, (RecordError, CorpusFormatError)):
        return str(exc)
    return f"malformed value ({type(exc).__name__}: {exc})"


def _check_target(value: bytes) -> None:
    try:
        if value.decode("utf-8"):
            return
    except UnicodeDecodeError:
        pass
    raise RecordError("not a UTF-8 target name")


_CHECKS: dict[str, Callable[[bytes], object]] = {
    "targets": _check_target,
    "corpus": read_entry,
    "findings": lambda value: FindingRecord.from_json(load(value)),
    "stats": lambda value: StatsSnapshot.from_json(load(value)),
    "workers": lambda value: WorkerInfo.from_json(load(value)),
}
