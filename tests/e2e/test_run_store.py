"""`fuzzgate run --store`: a run reads seeds from the shared store and writes what it kept and found
back; a store it cannot reach is one note, never a failed gate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fuzzgate.store.shared import SharedStore
from tests.e2e.conftest import fuzzgate, stdio_target
from tests.redis_server import free_port

pytestmark = pytest.mark.e2e

TOOLS = ("split_bill", "parse_config", "echo")
# Bounded by cases, not time: the same work however loaded the machine (what the runs keep and find
# only has to be there).
FLAGS = (
    *(f"--include={tool}" for tool in TOOLS), "--timeout", "2s", "--replays", "1", "--cases", "10", "--budget", "120s",
)  # fmt: skip


def _notes(run_dir: Path) -> list[str]:
    report = json.loads((run_dir / "report.json").read_text())
    return [note for note in report["notes"] if note.startswith("store ")]


def test_a_run_writes_the_store_and_the_next_run_starts_from_its_corpus(tmp_path: Path) -> None:
    store_dir = tmp_path / "shared"
    first = fuzzgate(
        "run", *stdio_target("buggy_server.py"), *FLAGS, "--store", str(store_dir), "--corpus", str(tmp_path / "c1"),
        cwd=tmp_path, out=tmp_path / "out1",
    )  # fmt: skip
    assert first.code in (0, 1), first.stdout + first.stderr
    [note] = _notes(tmp_path / "out1")
    assert "0 seed(s) from the store" in note and "wrote" in note
    assert "seed(s) from the store" in " ".join(first.stdout.split())
    assert "seed(s) from the store" in (tmp_path / "out1" / "summary.md").read_text()

    store = SharedStore.open(str(store_dir))
    entries = store.corpus("buggy_server").entries
    assert entries, "the run wrote the entries it kept"
    found = store.findings("buggy_server")
    assert {f.finding.fingerprint for f in found} == {f["fingerprint"] for f in first.report["findings"]}
    assert all(f.state in ("confirmed", "flaky", "unconfirmed") for f in found)
    [snapshot] = store.stats("buggy_server")
    assert snapshot.environment.fuzzgate and snapshot.environment.server
    assert sum(tool.calls for tool in snapshot.tools.values()) == first.report["calls"]
    [worker] = store.workers()
    assert worker.state == "stopped" and worker.targets == ("buggy_server",)

    # Another corpus directory, empty: the seeds come from the store alone.
    second = fuzzgate(
        "run", *stdio_target("buggy_server.py"), *FLAGS, "--store", str(store_dir), "--corpus", str(tmp_path / "c2"),
        cwd=tmp_path, out=tmp_path / "out2",
    )  # fmt: skip
    assert second.code in (0, 1), second.stdout + second.stderr
    [note] = _notes(tmp_path / "out2")
    assert f"{len(entries)} seed(s) from the store" in note, note
    corpus = second.report["corpus"]
    assert corpus["loaded"] == len(entries) and corpus["cold"] is None
    assert "seed(s) from the store" in " ".join(second.stdout.split())
    assert len(SharedStore.open(str(store_dir)).stats("buggy_server")) == 2, "one snapshot per run"


def test_an_unreachable_store_is_a_note_not_a_failed_gate(tmp_path: Path) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    run = fuzzgate(
        "run", *stdio_target("buggy_server.py"), "--include=echo", "--cases", "20", "--budget", "60s", "--store", url,
        cwd=tmp_path,
    )  # fmt: skip
    # Bounded by cases: a 10 s budget spent on start-up and the store's 5 s of retries left a loaded
    # machine no time to fuzz (an inconclusive run, exit 4).
    # The verdict is the findings' (a lone-surrogate transport finding may show up), never the store's.
    assert run.code in (0, 1), run.stdout + run.stderr
    assert run.report["verdict"] == ("fail" if run.code == 1 else "pass")
    [note] = _notes(tmp_path / "out")
    assert "cannot connect" in note and "went on without it" in note
    assert "went on without it" in " ".join(run.stdout.split())
    assert "went on without it" in (tmp_path / "out" / "summary.md").read_text()
