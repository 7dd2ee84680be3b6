"""What runs and workers write to the shared store: statistics from events, one record per worker
and fingerprint, no entry holding a secret, and `run --store`'s one-line note."""

from __future__ import annotations

from pathlib import Path

from fuzzgate.check.secrets import Redactor
from fuzzgate.engine.events import CallFinished, ServerReady
from fuzzgate.fleet.store_sync import RunStore, StatsRecorder, keepable, merge_record, server_label, stronger
from fuzzgate.learn.live_corpus import Seeds
from fuzzgate.model.corpus import CorpusEntry
from fuzzgate.model.findings import Finding, Kind, Repro, Severity, Surface
from fuzzgate.model.outcome import CallOutcome, OutcomeStatus
from fuzzgate.store.shared import Environment, SharedStore, finding_state
from tests.report.report_factory import sample_report

ENV = Environment("0.1.0", "example 1.0", "abc")


def call(tool: str, *, behaviours: int, surface: Surface = Surface.TOOL) -> CallFinished:
    return CallFinished(
        tool=tool, case_index=0, arguments={}, schema_valid=True, origin="conform",
        outcome=CallOutcome(OutcomeStatus.OK, 0.5), observations=0, calls=0, findings=0, elapsed_s=0.0,
        surface=surface, behaviours=behaviours,
    )  # fmt: skip


def finding(fingerprint: str, *, count: int = 1, arguments: dict[str, object] | None = None) -> Finding:
    arguments = {"a": 1} if arguments is None else arguments
    return Finding(
        kind=Kind.CRASH, severity=Severity.HIGH, surface=Surface.TOOL, name="divide", message="boom",
        fingerprint=fingerprint, repro=Repro(seed=1, case_index=0, arguments=arguments, transport="stdio"),
        count=count,
    )  # fmt: skip


def test_the_recorder_counts_per_tool_what_each_call_added() -> None:
    recorder = StatsRecorder("w", "srv")
    recorder.begin_cycle()
    recorder(ServerReady("2025-06-18", "example", 0, "1.0"))
    recorder(call("a", behaviours=2))
    recorder(call("b", behaviours=3))
    recorder(call("a", behaviours=4))
    recorder(call("summarize", behaviours=4, surface=Surface.PROMPT))
    recorder.kept(
        [CorpusEntry("a", {"x": 1}), CorpusEntry("a", {"x": 2}), CorpusEntry("summarize", {}, Surface.PROMPT)]
    )
    recorder.found(finding("fp1"))
    tools = recorder.tools()
    assert (tools["a"].calls, tools["a"].behaviours, tools["a"].corpus_added, tools["a"].seconds) == (2, 3, 2, 1.0)
    assert (tools["b"].calls, tools["b"].behaviours, tools["b"].corpus_added) == (1, 1, 0)
    assert tools["prompt summarize"].behaviours == 0 and tools["prompt summarize"].last_new is None
    assert tools["prompt summarize"].corpus_added == 1
    assert tools["divide"].findings == 1
    snap = recorder.snapshot(ENV, now=10.0)
    assert snap.seq == 1 and snap.environment == ENV
    assert snap.timeline[-1].calls == 4 and snap.timeline[-1].findings == 1 and snap.timeline[-1].corpus == 3
    assert recorder.snapshot(ENV, now=11.0).seq == 2


def test_features_count_the_most_one_cycle_reached_so_replayed_seeds_do_not_count_twice() -> None:
    recorder = StatsRecorder("w", "srv")
    for behaviours in (4, 3, 6):
        recorder.begin_cycle()
        recorder(call("a", behaviours=behaviours))
        recorder.begin_cycle()
    assert recorder.tools()["a"].behaviours == 6
    assert recorder.tools()["a"].calls == 3


def test_one_record_per_worker_and_fingerprint_keeps_the_strongest_evidence_and_first_time() -> None:
    first = merge_record(None, finding("fp", count=2), "confirmed", target="srv", worker="w", environment=ENV, now=1)
    again = merge_record(
        first, finding("fp", count=3, arguments={}), "seen", target="srv", worker="w", environment=ENV, now=5
    )
    assert again.state == "confirmed" and again.finding.count == 5
    assert again.finding.repro.arguments == {}, "the smaller repro"
    assert (again.first_seen, again.last_seen) == (1, 5)
    assert stronger("seen", "flaky") == "flaky" and stronger("confirmed", "unconfirmed") == "confirmed"


def test_an_entry_holding_a_secret_never_leaves_the_run() -> None:
    redact = Redactor(["sk-very-secret-value"])
    clean = CorpusEntry("echo", {"text": "hello"})
    leaky = CorpusEntry("echo", {"text": "sk-very-secret-value"})
    assert keepable([clean, leaky], redact) == [clean]


def test_server_label() -> None:
    assert server_label("example", "1.0") == "example 1.0"
    assert server_label(None, None) is None


def test_run_store_writes_entries_findings_stats_and_its_worker(tmp_path: Path) -> None:
    report = sample_report(tmp_path)
    shared = RunStore(str(tmp_path / "store"), "calc")
    shared.recorder(call("divide", behaviours=2))
    entry = CorpusEntry("divide", {"a": 1, "b": 0})
    shared.publish(report, [entry], Redactor([]))
    assert shared.failed is None
    store = SharedStore.open(str(tmp_path / "store"))
    assert [e.key for e in store.corpus("calc").entries] == [entry.key]
    found = {f.finding.fingerprint: f.state for f in store.findings("calc")}
    assert found == {f.fingerprint: finding_state(f) for f in report.findings}
    [snapshot] = store.stats("calc")
    assert snapshot.tools["divide"].calls == 1 and snapshot.environment.server == "calc-server 1.2.0"
    assert snapshot.tools["divide"].corpus_added == 1
    [worker] = store.workers()
    assert worker.state == "stopped"
    assert shared.note() == (
        f"store {tmp_path / 'store'}: 0 seed(s) from the store; wrote 1 new corpus entries, "
        f"{len(report.findings)} findings and the run's statistics"
    )


def test_a_store_that_cannot_be_written_is_one_line_and_no_exception(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    shared = RunStore(str(blocker / "store"), "calc")
    assert shared.seeds(Seeds()).entries == ()
    shared.publish(sample_report(tmp_path), [CorpusEntry("divide", {"a": 1})], Redactor([]))
    note = shared.note()
    assert note.startswith(f"store {blocker / 'store'}: ") and "\n" not in note
    assert "went on without it" in note
