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

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from types import TracebackType
from typing import Any, TypeVar
from urllib.parse import unquote_plus, urlsplit

from fuzzgate.model.corpus import CorpusEntry, CorpusFormatError
from fuzzgate.model.errors import FuzzgateError
from fuzzgate.model.findings import Finding
from fuzzgate.store.corpus_store import MAX_ENTRIES_PER_TOOL, CorpusLoad, entry_bytes, read_entry
from fuzzgate.store.database import CorpusDatabase
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

PREFIX = f"fuzzgate/{STORE_FORMAT}/"
"""Every key of the layout starts with this; keys outside it are not the store's and are left alone."""

KINDS = ("targets", "corpus", "findings", "stats", "workers")
"""The kinds of value, in the order `copy_to` counts them."""

URL_SCHEMES = ("redis://", "rediss://", "unix://")

ENTRY_CACHE = 200_000
"""Parsed corpus values a store remembers at most (a few hundred MB at worst); past it, it starts over."""


class StoreError(FuzzgateError):
    """The shared store cannot be reached, read or written; the message names the store."""

    title = "store error"


def new_worker_id() -> str:
    """A fresh worker id, `<host>-<pid>-<6 hex>`: readable, and unique even when a pid is reused."""
    import os
    import secrets
    import socket

    host = socket.gethostname().split(".")[0] or "host"
    return f"{host}-{os.getpid()}-{secrets.token_hex(3)}"


def is_url(spec: str) -> bool:
    """Whether `spec` names a Redis server (else it is a directory)."""
    return spec.startswith(URL_SCHEMES)


CREDENTIAL_PARAMETERS = frozenset({"password", "username", "ssl_password"})
"""Query parameters through which redis-py takes credentials (`redis://host/0?password=...`)."""


def mask_url(url: str) -> str:
    """`url` with its credentials replaced by `***`, fit for messages and logs: the password of its
    userinfo (`redis://user:***@host`) and the values of the query's `password`, `username` and
    `ssl_password`, which redis-py takes as well. A URL that does not parse is masked whole after
    its scheme, since where its credentials sit cannot be told."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return url.split("://", 1)[0] + "://***" if "://" in url else url
    # Edited in place rather than rebuilt: `urlunsplit` would drop the empty host of `unix:///path`.
    head, question, rest = url.partition("?")
    query, hash_sign, fragment = rest.partition("#")
    if password:
        head = head.replace(parts.netloc, f"{parts.username or ''}:***@{parts.netloc.rpartition('@')[2]}", 1)
    query = "&".join(_masked_parameter(item) for item in query.split("&"))
    return head + question + query + hash_sign + fragment


def _masked_parameter(item: str) -> str:
    name, equals, _value = item.partition("=")
    return f"{name}=***" if equals and unquote_plus(name).lower() in CREDENTIAL_PARAMETERS else item


def _key(*parts: str) -> bytes:
    return (PREFIX + "/".join(parts)).encode("utf-8")


TARGETS_KEY = _key("targets")
WORKERS_KEY = _key("workers")


def corpus_key(target: str) -> bytes:
    return _key("corpus", target)


def findings_key(target: str) -> bytes:
    return _key("findings", target)


def stats_key(target: str) -> bytes:
    return _key("stats", target)


def value_id(value: bytes) -> str:
    """A short name of a stored value for messages (the set-directory backend's file stem)."""
    return hashlib.sha256(value).hexdigest()[:16]


_T = TypeVar("_T")

_STRENGTH = {state: rank for rank, state in enumerate(reversed(STATES))}


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
            for record in _latest(self.finding_records(name), _record_identity, _record_order):
                by_fingerprint.setdefault(record.finding.fingerprint, []).append(record)
            folded.extend(_fold(name, records) for records in by_fingerprint.values())
        return sorted(folded, key=_finding_order)

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
        latest = _latest(snapshots, lambda s: (s.worker,), lambda s: (s.seq, s.written))
        return sorted(latest, key=lambda s: s.worker)

    # --- workers ----------------------------------------------------------------------------------

    def heartbeat(self, worker: WorkerInfo) -> None:
        """Write `worker`'s heartbeat, then delete the one this process wrote before."""
        self._replace(WORKERS_KEY, ("worker", worker.id), dump(worker.to_json()))

    def workers(self) -> list[WorkerInfo]:
        """The latest heartbeat of every worker that ever wrote one, oldest start first."""
        infos = [info for _, info in self._parse(WORKERS_KEY, WorkerInfo.from_json)]
        latest = _latest(infos, lambda w: (w.id,), lambda w: (w.seen, w.state == "stopped"))
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
            kind, target = _split(key)
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
                findings_key(target), FindingRecord.from_json, _record_identity, _record_order
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
        keep = {id(item) for item in _latest([item for _, item in parsed], identity, order)}
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


def _split(key: bytes) -> tuple[str, str]:
    """(kind, target) of a layout key; target is "" for the store-wide keys."""
    text = key.decode("utf-8", "backslashreplace").removeprefix(PREFIX)
    kind, _, target = text.partition("/")
    return kind, target


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


def _latest(
    items: Iterable[_T], identity: Callable[[_T], tuple[Any, ...]], order: Callable[[_T], tuple[Any, ...]]
) -> list[_T]:
    """The greatest item by `order` of each `identity`, in first-seen order of identities."""
    best: dict[tuple[Any, ...], _T] = {}
    for item in items:
        ident = identity(item)
        if ident not in best or order(item) > order(best[ident]):
            best[ident] = item
    return list(best.values())


def _record_identity(record: FindingRecord) -> tuple[str, str]:
    return record.worker, record.finding.fingerprint


def _record_order(record: FindingRecord) -> tuple[float, int, int]:
    # A worker's record only grows: later, then more hits, then stronger evidence.
    return record.last_seen, record.finding.count, _STRENGTH[record.state]


def _fold(target: str, records: list[FindingRecord]) -> StoredFinding:
    """One bug from every worker's latest record of it."""
    records = sorted(records, key=lambda r: r.worker)
    finding: Finding = records[0].finding
    for record in records[1:]:
        finding = finding.merged_with(record.finding)
    state = max((r.state for r in records), key=_STRENGTH.__getitem__)
    finding = replace(
        finding,
        replays=sum(r.finding.replays for r in records),
        reproduced=sum(r.finding.reproduced for r in records),
        flaky=state == "flaky",
        unconfirmed=state in ("unconfirmed", "seen"),
    )
    return StoredFinding(
        target=target,
        finding=finding,
        state=state,
        workers=tuple(sorted({r.worker for r in records})),
        first_seen=min(r.first_seen for r in records),
        last_seen=max(r.last_seen for r in records),
    )


def _finding_order(found: StoredFinding) -> tuple[str, int, str, str, str]:
    f = found.finding
    return found.target, -f.severity.rank, f.kind.value, f.name, f.fingerprint
