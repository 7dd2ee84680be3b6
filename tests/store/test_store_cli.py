"""`fuzzgate store export | import | merge | show` through the real CLI, with a real redis-server."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgate.model.corpus import CorpusEntry
from fuzzgate.model.findings import Surface
from fuzzgate.store.corpus_store import CorpusStore
from fuzzgate.store.shared import SharedStore, WorkerInfo, corpus_key, findings_key
from tests.e2e.conftest import CliRun, fuzzgate
from tests.redis_server import RedisServer, free_port
from tests.store.test_shared import record, snapshot

pytestmark = pytest.mark.e2e

PASSWORD = "hunter2-s3cret"


def entries(tool: str, n: int, surface: Surface = Surface.TOOL) -> list[CorpusEntry]:
    return [CorpusEntry(tool=tool, arguments={"n": i}, surface=surface) for i in range(n)]


def fill(path: Path, worker: str, *, seq: int = 1) -> SharedStore:
    """A directory store with two targets, as workers leave it."""
    store = SharedStore.open(str(path))
    store.add_corpus("files server", entries("read_file", 3) + entries("summarize", 1, Surface.PROMPT))
    store.add_corpus("calc", entries("divide", 2))
    store.record_findings([record(worker, target="files server"), record(worker, target="calc", fingerprint="fp9")])
    store.write_stats(snapshot(worker, seq))
    store.heartbeat(WorkerInfo(worker, "host-a", 10, 1.0, 2.0, ("files server",)))
    return store


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def ok(run: CliRun) -> CliRun:
    assert run.code == 0, run.stdout + run.stderr
    return run


def test_directory_to_redis_to_directory_round_trips(tmp_path: Path, redis_server: RedisServer) -> None:
    fill(tmp_path / "a", "w1")
    run = ok(fuzzgate("store", "import", str(tmp_path / "a"), "--store", redis_server.url, cwd=tmp_path))
    assert "3 targets, 6 corpus entries, 2 finding records, 1 stats snapshot, 1 worker" in run.stdout
    ok(fuzzgate("store", "export", str(tmp_path / "b"), "--store", redis_server.url, cwd=tmp_path))
    assert tree(tmp_path / "b") == tree(tmp_path / "a")
    # Again: nothing new anywhere.
    run = ok(fuzzgate("store", "import", str(tmp_path / "a"), "--store", redis_server.url, cwd=tmp_path))
    assert "0 targets, 0 corpus entries, 0 finding records" in run.stdout


def test_a_runs_corpus_directory_in_and_out(tmp_path: Path) -> None:
    run_corpus = tmp_path / "corpus"
    for target, tool, n in (("files server", "read_file", 3), ("calc", "divide", 2)):
        store = CorpusStore(run_corpus, target)
        for entry in entries(tool, n):
            store.add(entry)
    (run_corpus / "calc" / "broken.json").write_text("{not json")
    (tmp_path / "store").mkdir()
    SharedStore.open(str(tmp_path / "store")).add_corpus("files server", entries("read_file", 1))

    run = ok(fuzzgate("store", "import", "--corpus-dir", str(run_corpus), "--store", "store", cwd=tmp_path))
    assert "imported 2 new corpus entries of calc" in run.stdout
    # The store knew "files server", whose run directory is named by slug.
    assert "imported 2 new corpus entries of files server" in run.stdout
    assert "skipped:" in run.stdout and "broken.json" in run.stdout
    assert SharedStore.open(str(tmp_path / "store")).targets() == ["calc", "files server"]

    ok(fuzzgate("store", "export", "--corpus-dir", str(tmp_path / "out"), "--store", "store", cwd=tmp_path))
    exported, original = tree(tmp_path / "out"), tree(run_corpus)
    del original["calc/broken.json"]
    assert exported == original


def test_merge_keeps_every_input_and_finding_and_each_workers_latest_stats(tmp_path: Path) -> None:
    fill(tmp_path / "a", "w1", seq=1)
    b = fill(tmp_path / "b", "w2")
    b.add_corpus("calc", entries("multiply", 1))
    b.record_findings([record("w2", target="calc", fingerprint="fp-only-b")])
    # The same worker's stats in both, a later snapshot in c: the merge keeps the latest.
    fill(tmp_path / "c", "w1", seq=5)

    ok(fuzzgate("store", "merge", "a", "b", "c", "--store", "merged", cwd=tmp_path))
    merged = SharedStore.open(str(tmp_path / "merged"))
    assert len(merged.corpus("calc").entries) == 3
    assert {f.finding.fingerprint for f in merged.findings("calc")} == {"fp9", "fp-only-b"}
    (shared,) = merged.findings("files server")
    assert shared.workers == ("w1", "w2")
    assert [(s.worker, s.seq) for s in merged.stats("srv")] == [("w1", 5), ("w2", 1)]
    stored = list(merged.db.fetch(b"fuzzgate/1/stats/srv"))
    assert len(stored) == 2  # w1's superseded snapshot was dropped


def test_show_lists_targets_findings_and_workers(tmp_path: Path) -> None:
    fill(tmp_path / "a", "w1")
    run = ok(fuzzgate("store", "show", "--store", "a", cwd=tmp_path))
    assert "3 target(s)" in run.stdout
    assert "files server" in run.stdout and "calc" in run.stdout
    assert "confirmed" in run.stdout and "w1" in run.stdout and "host-a" in run.stdout


def test_corrupt_values_are_skipped_and_counted_never_fatal(tmp_path: Path) -> None:
    store = fill(tmp_path / "a", "w1")
    store.db.save(corpus_key("calc"), b"\xff not an entry")
    store.db.save(findings_key("calc"), b'{"format": 99}')
    run = ok(fuzzgate("store", "export", "b", "--store", "a", cwd=tmp_path))
    assert "2 value(s) could not be read and were skipped" in run.stdout
    assert "format 99" in run.stdout
    run = ok(fuzzgate("store", "show", "--store", "b", cwd=tmp_path))
    assert "skipped" not in run.stdout


def test_an_unreachable_redis_is_one_line_and_exit_2(tmp_path: Path) -> None:
    url = f"redis://:{PASSWORD}@127.0.0.1:{free_port()}/0"
    run = fuzzgate("store", "show", "--store", url, "--retry-for", "0.3", cwd=tmp_path)
    assert run.code == 2, run.stdout + run.stderr
    first = run.stderr.splitlines()[0]
    assert first.startswith("fuzzgate: store error: redis://:***@127.0.0.1:") and "cannot connect" in first
    assert PASSWORD not in run.stdout + run.stderr
    assert "Traceback" not in run.stderr


def test_a_missing_source_directory_is_a_usage_error(tmp_path: Path) -> None:
    run = fuzzgate("store", "export", "out", "--store", "nowhere", cwd=tmp_path)
    assert run.code == 2 and "nowhere is not a store directory" in run.stderr
    assert not (tmp_path / "out").exists()


def test_a_run_corpus_given_as_a_store_says_to_use_corpus_dir(tmp_path: Path) -> None:
    CorpusStore(tmp_path / "corpus", "calc").add(entries("divide", 1)[0])
    run = fuzzgate("store", "import", "corpus", "--store", "store", cwd=tmp_path)
    assert run.code == 2 and "is a run's corpus directory, not a store" in run.stderr
    assert "--corpus-dir" in run.stderr


def test_an_export_writes_no_secret(tmp_path: Path) -> None:
    with RedisServer(tmp_path / "redis", password=PASSWORD) as server:
        fill(tmp_path / "a", "w1")
        runs = [
            ok(fuzzgate("store", "import", "a", "--store", server.url, cwd=tmp_path)),
            ok(fuzzgate("store", "export", "b", "--corpus-dir", "corpus", "--store", server.url, cwd=tmp_path)),
            ok(fuzzgate("store", "show", "--store", server.url, cwd=tmp_path)),
        ]
    assert "redis://:***@127.0.0.1" in runs[0].stdout
    for run in runs:
        assert PASSWORD not in run.stdout + run.stderr
    for root in (tmp_path / "b", tmp_path / "corpus"):
        files = tree(root)
        assert files
        assert not any(PASSWORD.encode() in data for data in files.values())
