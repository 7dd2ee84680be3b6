"""The shared store over an in-memory database: folding, latest snapshots, dedupe, skipped values."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzgate.model.corpus import CorpusEntry
from fuzzgate.model.findings import Finding, Kind, Repro, Severity, Surface
from fuzzgate.store.corpus_store import MAX_ENTRIES_PER_TOOL, entry_bytes
from fuzzgate.store.database import CorpusDatabase, InMemoryDatabase
from fuzzgate.store.shared import (
    TIMELINE_POINTS,
    Environment,
    FindingRecord,
    SharedStore,
    StatsSnapshot,
    StoreError,
    TimelinePoint,
    ToolStats,
    WorkerInfo,
    corpus_key,
    finding_state,
    findings_key,
    mask_url,
    new_worker_id,
    stats_key,
    thin_timeline,
)

ENV = Environment("0.1.0", "example 1.0", "abc1234def")
OTHER_ENV = Environment("0.1.0", "example 2.0", "fed4321cba")


class RecordingDatabase(InMemoryDatabase):
    """An in-memory database that logs every write, to check the order of writes and deletes."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[tuple[str, bytes, bytes]] = []

    def save(self, key: bytes, value: bytes) -> None:
        self.log.append(("save", key, value))
        super().save(key, value)

    def delete(self, key: bytes, value: bytes) -> None:
        self.log.append(("delete", key, value))
        super().delete(key, value)


def finding(fingerprint: str = "fp1", *, arguments: dict[str, object] | None = None, count: int = 1) -> Finding:
    return Finding(
        kind=Kind.CRASH,
        severity=Severity.CRITICAL,
        surface=Surface.TOOL,
        name="divide",
        message="ZeroDivisionError",
        fingerprint=fingerprint,
        repro=Repro(seed=1, case_index=2, arguments=arguments or {"a": 1, "b": 0}, transport="stdio"),
        count=count,
        replays=2,
        reproduced=2,
    )


def record(
    worker: str,
    *,
    state: str = "confirmed",
    target: str = "srv",
    seen: float = 100.0,
    **kwargs: object,
) -> FindingRecord:
    return FindingRecord(
        target=target,
        finding=finding(**kwargs),  # type: ignore[arg-type]
        state=state,
        worker=worker,
        environment=ENV,
        first_seen=seen,
        last_seen=seen,
    )


def snapshot(worker: str, seq: int, *, calls: int = 10, env: Environment = ENV) -> StatsSnapshot:
    return StatsSnapshot(
        worker=worker,
        target="srv",
        environment=env,
        seq=seq,
        written=1000.0 + seq,
        tools={"divide": ToolStats(calls=calls, seconds=1.5, behaviours=3, corpus_added=1, findings=1)},
        timeline=(TimelinePoint(1000.0, calls, 3, 1, 1),),
    )


def entry(tool: str, n: int, *, origin: str = "conform") -> CorpusEntry:
    return CorpusEntry(tool=tool, arguments={"n": n}, origin=origin, environment={"fuzzgate": "0.1.0"})


@pytest.fixture
def store() -> SharedStore:
    return SharedStore(InMemoryDatabase(), "memory")


# --- findings ------------------------------------------------------------------------------------


def test_one_finding_per_fingerprint_with_the_smallest_repro_and_summed_counts(store: SharedStore) -> None:
    store.record_findings([record("w1", arguments={"a": 1000000, "b": 0}, count=4)])
    store.record_findings([record("w2", arguments={"a": 1, "b": 0}, count=3)])
    store.record_findings([record("w3", fingerprint="fp2", count=1)])
    found = store.findings("srv")
    assert [f.finding.fingerprint for f in found] == ["fp1", "fp2"]
    fp1 = found[0]
    assert fp1.finding.count == 7
    assert fp1.finding.repro.arguments == {"a": 1, "b": 0}
    assert fp1.workers == ("w1", "w2")
    assert fp1.finding.replays == 4


def test_the_strongest_state_wins(store: SharedStore) -> None:
    store.record_findings([record("w1", state="seen"), record("w2", state="flaky")])
    assert store.findings()[0].state == "flaky"
    assert store.findings()[0].finding.flaky
    store.record_findings([record("w3", state="confirmed")])
    (found,) = store.findings()
    assert found.state == "confirmed"
    assert not found.finding.flaky and not found.finding.unconfirmed


def test_a_workers_later_record_replaces_its_earlier_one(store: SharedStore) -> None:
    store.record_findings([record("w1", state="seen", count=1, seen=100.0)])
    store.record_findings([record("w1", state="confirmed", count=5, seen=200.0)])
    (found,) = store.findings("srv")
    assert found.finding.count == 5  # not 6: the same worker's records are not added up
    assert found.state == "confirmed"
    assert (found.first_seen, found.last_seen) == (200.0, 200.0)
    assert len(list(store.db.fetch(findings_key("srv")))) == 1


def test_a_lingering_older_record_of_a_worker_is_folded_away() -> None:
    # A worker killed between writing its new record and deleting the old one leaves both.
    db = InMemoryDatabase()
    first, second = SharedStore(db, "m"), SharedStore(db, "m")
    first.record_findings([record("w1", count=1, seen=100.0)])
    second.record_findings([record("w1", count=4, seen=150.0)])
    assert len(list(db.fetch(findings_key("srv")))) == 2
    (found,) = first.findings()
    assert found.finding.count == 4
    assert first.compact() == 1
    assert len(list(db.fetch(findings_key("srv")))) == 1


def test_records_are_replaced_new_first_then_old_deleted() -> None:
    db = RecordingDatabase()
    store = SharedStore(db, "m")
    store.record_findings([record("w1", count=1)])
    store.write_stats(snapshot("w1", 1))
    db.log.clear()
    store.record_findings([record("w1", count=2)])
    store.write_stats(snapshot("w1", 2))
    ops = [(op, key) for op, key, _ in db.log if key != b"fuzzgate/1/targets"]
    assert ops == [
        ("save", findings_key("srv")),
        ("delete", findings_key("srv")),
        ("save", stats_key("srv")),
        ("delete", stats_key("srv")),
    ]
    assert b'"count":2' in db.log[0][2] and b'"count":1' in db.log[1][2]


def test_findings_of_every_target_sorted_most_severe_first(store: SharedStore) -> None:
    store.record_findings([record("w1", target="b"), record("w1", target="a")])
    assert store.targets() == ["a", "b"]
    assert [f.target for f in store.findings()] == ["a", "b"]
    assert store.findings("nothing") == []


# --- statistics ----------------------------------------------------------------------------------


def test_the_latest_snapshot_per_worker(store: SharedStore) -> None:
    store.write_stats(snapshot("w1", 1, calls=10))
    store.write_stats(snapshot("w1", 2, calls=25))
    store.write_stats(snapshot("w2", 7, calls=3))
    latest = store.stats("srv")
    assert [(s.worker, s.seq, s.tools["divide"].calls) for s in latest] == [("w1", 2, 25), ("w2", 7, 3)]
    assert len(list(store.db.fetch(stats_key("srv")))) == 2


def test_the_latest_snapshot_wins_even_when_an_older_one_lingers() -> None:
    db = InMemoryDatabase()
    SharedStore(db, "m").write_stats(snapshot("w1", 5))
    SharedStore(db, "m").write_stats(snapshot("w1", 3))
    assert [s.seq for s in SharedStore(db, "m").stats("srv")] == [5]


def test_statistics_of_one_environment(store: SharedStore) -> None:
    store.write_stats(snapshot("w1", 1))
    store.write_stats(snapshot("w2", 1, env=OTHER_ENV))
    assert [s.worker for s in store.stats("srv", ENV)] == ["w1"]
    assert [s.worker for s in store.stats("srv", OTHER_ENV)] == ["w2"]
    assert [s.worker for s in store.stats("srv")] == ["w1", "w2"]


def test_a_snapshot_round_trips_and_its_timeline_is_thinned() -> None:
    points = tuple(TimelinePoint(float(i), i, i, i, 0) for i in range(1000))
    snap = StatsSnapshot("w", "srv", ENV, 1, 1.0, {"t": ToolStats(last_new=5.0)}, points)
    assert len(snap.timeline) == TIMELINE_POINTS
    assert snap.timeline[0] == points[0] and snap.timeline[-1] == points[-1]
    store = SharedStore(InMemoryDatabase(), "m")
    store.write_stats(snap)
    assert store.stats("srv") == [snap]


# --- workers -------------------------------------------------------------------------------------


def test_heartbeats_keep_the_latest_per_worker(store: SharedStore) -> None:
    wid = new_worker_id()
    host, pid, suffix = wid.rsplit("-", 2)
    assert host and int(pid) > 0 and len(suffix) == 6
    assert new_worker_id() != wid
    store.heartbeat(WorkerInfo(wid, host, int(pid), 10.0, 10.0, ("srv",)))
    store.heartbeat(WorkerInfo(wid, host, int(pid), 10.0, 20.0, ("srv",), state="stopped"))
    store.heartbeat(WorkerInfo("other", "h", 2, 5.0, 6.0))
    assert [(w.id, w.seen, w.state) for w in store.workers()] == [("other", 6.0, "running"), (wid, 20.0, "stopped")]
    assert len(list(store.db.fetch(b"fuzzgate/1/workers"))) == 2


# --- corpus --------------------------------------------------------------------------------------


def test_corpus_dedupes_by_key(store: SharedStore) -> None:
    assert store.add_corpus("srv", [entry("divide", 1), entry("divide", 2)]) == 2
    # The same input kept under another origin is the same entry.
    assert store.add_corpus("srv", [entry("divide", 1, origin="mutate:x"), entry("divide", 3)]) == 1
    load = store.corpus("srv")
    assert [e.arguments["n"] for e in load.entries] == sorted([1, 2, 3], key=lambda n: entry("divide", n).key)
    assert load.cold is None and load.skipped == ()
    assert store.targets() == ["srv"]


def test_corpus_keeps_the_per_tool_cap(store: SharedStore) -> None:
    many = [entry("divide", n) for n in range(MAX_ENTRIES_PER_TOOL + 10)]
    assert store.add_corpus("srv", many) == MAX_ENTRIES_PER_TOOL
    assert store.add_corpus("srv", [entry("divide", -1)]) == 0
    assert store.add_corpus("srv", [entry("other", 1)]) == 1


def test_an_empty_corpus_is_cold_with_a_reason(store: SharedStore) -> None:
    load = store.corpus("srv")
    assert load.entries == () and load.cold is not None and "srv" in load.cold


# --- values that do not parse --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (b"\xff\xfe", "not UTF-8"),
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "not a JSON object"),
        (b'{"format": 2}', "format 2"),
        (b'{"format": 1, "target": "srv"}', "malformed"),
        (b'{"format": 1, "n": ' + b"9" * 5001 + b"}", "not usable JSON (Exceeds the limit (4300 digits)"),
    ],
)
def test_corrupt_values_are_skipped_with_a_reason(store: SharedStore, value: bytes, reason: str) -> None:
    store.record_findings([record("w1")])
    store.write_stats(snapshot("w1", 1))
    store.add_corpus("srv", [entry("divide", 1)])
    for key in (findings_key("srv"), stats_key("srv"), corpus_key("srv"), b"fuzzgate/1/workers"):
        store.db.save(key, value)
    assert len(store.findings("srv")) == 1
    assert len(store.stats("srv")) == 1
    assert store.workers() == []
    load = store.corpus("srv")
    assert len(load.entries) == 1 and len(load.skipped) == 1
    assert len(store.skipped) == 4
    assert all(reason in text for text in store.skipped)
    assert all(text.startswith("memory fuzzgate/1/") for text in store.skipped)


def test_a_record_under_another_targets_key_is_skipped(store: SharedStore) -> None:
    store.record_findings([record("w1", target="a")])
    for value in list(store.db.fetch(findings_key("a"))):
        store.db.save(findings_key("b"), value)
    assert store.findings("b") == []
    assert "under 'b'" in store.skipped[-1]


# --- moving between stores -----------------------------------------------------------------------


def _fill(store: SharedStore, worker: str) -> None:
    store.record_findings([record(worker)])
    store.write_stats(snapshot(worker, 1))
    store.heartbeat(WorkerInfo(worker, "h", 1, 1.0, 2.0, ("srv",)))
    store.add_corpus("srv", [entry("divide", hash(worker) % 1000)])


def _values(db: CorpusDatabase) -> dict[bytes, set[bytes]]:
    return {key: set(db.fetch(key)) for key in db.keys()}  # noqa: SIM118


def test_copy_is_a_union_and_counts_what_was_new() -> None:
    a, b = SharedStore(InMemoryDatabase(), "a"), SharedStore(InMemoryDatabase(), "b")
    _fill(a, "w1")
    _fill(b, "w2")
    before_a, before_b = _values(a.db), _values(b.db)
    a.db.save(corpus_key("srv"), b"garbage")
    counts = a.copy_to(b)
    assert counts == {"targets": 0, "corpus": 1, "findings": 1, "stats": 1, "workers": 1, "skipped": 1}
    after = _values(b.db)
    for key in before_a.keys() | before_b.keys():
        assert before_a.get(key, set()) | before_b.get(key, set()) <= after[key]
    assert b"garbage" not in after[corpus_key("srv")]
    assert [f.workers for f in b.findings()] == [("w1", "w2")]
    assert [s.worker for s in b.stats("srv")] == ["w1", "w2"]
    assert a.copy_to(b)["corpus"] == 0


def test_copy_registers_targets_the_source_forgot() -> None:
    a, b = SharedStore(InMemoryDatabase(), "a"), SharedStore(InMemoryDatabase(), "b")
    a.db.save(corpus_key("lost"), entry_bytes(entry("t", 1)))
    a.copy_to(b)
    assert b.targets() == ["lost"]


# --- names ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "masked"),
    [
        ("redis://:hunter2@db:6379/0", "redis://:***@db:6379/0"),
        ("redis://user:hunter2@db/1", "redis://user:***@db/1"),
        ("redis://db:6379", "redis://db:6379"),
        ("unix:///run/redis.sock", "unix:///run/redis.sock"),
        ("redis://db/0?password=hunter2", "redis://db/0?password=***"),
        ("redis://db/0?db=1&Username=bob&password=hunter%262", "redis://db/0?db=1&Username=***&password=***"),
        (
            "rediss://u:p%40ss@db/0?ssl_password=key&ssl_cert_reqs=none",
            "rediss://u:***@db/0?ssl_password=***&ssl_cert_reqs=none",
        ),
        ("unix:///run/redis.sock?db=0&password=hunter2", "unix:///run/redis.sock?db=0&password=***"),
        ("redis://[::1/0?password=hunter2", "redis://***"),
    ],
)
def test_passwords_are_masked(url: str, masked: str) -> None:
    assert mask_url(url) == masked
    assert SharedStore(InMemoryDatabase(), url).location == masked


def test_store_error_exits_2() -> None:
    assert int(StoreError("x").exit_code) == 2


# --- records -------------------------------------------------------------------------------------


@given(st.integers(min_value=0, max_value=600), st.integers(min_value=2, max_value=300))
def test_thinning_keeps_the_ends_in_order_within_the_limit(n: int, limit: int) -> None:
    points = [TimelinePoint(float(i), i, 0, 0, 0) for i in range(n)]
    thinned = thin_timeline(points, limit)
    assert len(thinned) == min(n, limit)
    assert [p.at for p in thinned] == sorted({p.at for p in thinned})
    if n:
        assert thinned[0] == points[0] and thinned[-1] == points[-1]


def test_environment_label_and_detection(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ENV.label() == "fuzzgate 0.1.0, server example 1.0, commit abc1234"
    assert Environment("0.1.0").label() == "fuzzgate 0.1.0"
    monkeypatch.setenv("GITHUB_SHA", "0123456789abcdef")
    detected = Environment.detect("srv 2.0")
    assert (detected.server, detected.commit) == ("srv 2.0", "0123456789abcdef")
    assert Environment.from_json(detected.to_json()) == detected


def test_a_record_of_an_unknown_state_is_refused() -> None:
    with pytest.raises(ValueError, match="state 'fixed'"):
        record("w1", state="fixed")


def test_finding_state_follows_the_triage_flags() -> None:
    base = finding()
    assert finding_state(base) == "confirmed"
    assert finding_state(replace(base, flaky=True)) == "flaky"
    assert finding_state(replace(base, reproduced=0, replays=0, unconfirmed=True)) == "unconfirmed"
    assert finding_state(replace(base, reproduced=0, replays=0)) == "seen"


def test_records_round_trip_through_their_canonical_bytes() -> None:
    rec = record("w1", arguments={"text": "caf\u00e9 \udc80"})
    store = SharedStore(InMemoryDatabase(), "m")
    store.record_findings([rec])
    (value,) = store.db.fetch(findings_key("srv"))
    assert value.isascii()
    assert store.finding_records("srv") == [rec]


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)


def _shapes_of(template: dict[str, object]) -> st.SearchStrategy[dict[str, object]]:
    """`template` with some fields replaced by arbitrary JSON: values a buggy or newer writer left."""
    keys = sorted(template)
    return st.fixed_dictionaries(
        {key: st.one_of(st.just(template[key]), _json) for key in keys},
        optional={"extra": _json},
    )


@settings(max_examples=150, deadline=None)
@given(
    finding_value=_shapes_of(record("w").to_json()),
    stats_value=_shapes_of(snapshot("w", 1).to_json()),
    worker_value=_shapes_of(WorkerInfo("w", "h", 1, 1.0, 2.0).to_json()),
    corpus_value=_shapes_of(entry("divide", 1).to_json()),
    nested=_shapes_of(record("w").to_json()["finding"]),
)
def test_no_stored_value_makes_a_read_raise(
    finding_value: dict[str, object],
    stats_value: dict[str, object],
    worker_value: dict[str, object],
    corpus_value: dict[str, object],
    nested: dict[str, object],
) -> None:
    import json

    store = SharedStore(InMemoryDatabase(), "m")
    store.db.save(b"fuzzgate/1/targets", b"srv")
    for key, value in (
        (findings_key("srv"), finding_value),
        (findings_key("srv"), {**record("w").to_json(), "finding": nested}),
        (stats_key("srv"), stats_value),
        (b"fuzzgate/1/workers", worker_value),
        (corpus_key("srv"), corpus_value),
    ):
        store.db.save(key, json.dumps(value, allow_nan=True).encode())
    store.findings()
    store.stats("srv")
    store.workers()
    store.corpus("srv")
    store.copy_to(SharedStore(InMemoryDatabase(), "other"))
    store.compact()
