"""What a run and a worker write to the shared store, and how they count it.

`fuzzgate run --store` and `fuzzgate work` write the same records (`store.shared`): the corpus
entries they kept, a `FindingRecord` per finding, a `StatsSnapshot` per target and their own
`WorkerInfo`. This module turns the engine's events and results into those records; `cli.run` and
`cli.work` decide when to write them.

Statistics count what one process did (`StatsRecorder`): per tool its calls, the seconds they
took, the features it reached, the corpus entries it kept and the bugs it met, and a timeline of
the totals. A worker runs one engine per cycle and each starts its feedback afresh (replaying the
store's corpus first), so "features reached" is the most any one cycle reached on the tool: it
grows only when a cycle gets further than every cycle before, which is what a scheduler asking
"does this tool still show something new?" needs.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from fuzzgate.check.secrets import Redactor
from fuzzgate.engine.events import CallFinished, Event
from fuzzgate.learn.live_corpus import Seeds
from fuzzgate.model.commands import subject_label
from fuzzgate.model.corpus import CorpusEntry
from fuzzgate.model.findings import Finding, Surface
from fuzzgate.record.results import RunReport
from fuzzgate.store.shared import (
    STATES,
    TIMELINE_POINTS,
    Environment,
    FindingRecord,
    SharedStore,
    StatsSnapshot,
    StoreError,
    TimelinePoint,
    ToolStats,
    WorkerInfo,
    finding_state,
    mask_url,
    new_worker_id,
    thin_timeline,
)

_STRENGTH = {state: rank for rank, state in enumerate(reversed(STATES))}


def keepable(entries: Iterable[CorpusEntry], redact: Redactor) -> list[CorpusEntry]:
    """The entries that may leave the run: one holding a secret or a canary (a value a reply brought
    and the dictionary put in a field) never does. The same check as the corpus directory's."""
    kept = []
    for entry in entries:
        text = json.dumps(entry.to_json(), sort_keys=True, ensure_ascii=False)
        if redact.text(text) == text:
            kept.append(entry)
    return kept


def stronger(a: str, b: str) -> str:
    """The stronger evidence of two record states (confirmed > flaky > unconfirmed > seen)."""
    return a if _STRENGTH[a] >= _STRENGTH[b] else b


def merge_record(
    previous: FindingRecord | None,
    finding: Finding,
    state: str,
    *,
    target: str,
    worker: str,
    environment: Environment,
    now: float,
) -> FindingRecord:
    """This worker's record of `finding` after meeting it again: the smaller repro, the hits added
    up, the stronger evidence, the first time kept. One record per worker and fingerprint, so the
    store never holds the same bug twice for one worker."""
    if previous is None:
        return FindingRecord(target, finding, state, worker, environment, now, now)
    return FindingRecord(
        target=target,
        finding=previous.finding.merged_with(finding),
        state=stronger(previous.state, state),
        worker=worker,
        environment=environment,
        first_seen=previous.first_seen,
        last_seen=max(now, previous.last_seen),
    )


@dataclass(slots=True)
class _Tool:
    calls: int = 0
    seconds: float = 0.0
    best: int = 0
    """The most features one cycle reached on the tool."""
    cycle: int = 0
    """Features the current cycle reached on it."""
    corpus_added: int = 0
    findings: set[str] = field(default_factory=set)
    last_new: float | None = None

    def stats(self) -> ToolStats:
        return ToolStats(
            calls=self.calls,
            seconds=round(self.seconds, 3),
            behaviours=max(self.best, self.cycle),
            corpus_added=self.corpus_added,
            findings=len(self.findings),
            last_new=self.last_new,
        )


class StatsRecorder:
    """One process's statistics on one target in one environment, fed with the engine's events
    (an `EventSink`), cycle after cycle. `snapshot` gives the record to write, numbered."""

    def __init__(self, worker: str, target: str) -> None:
        self.worker = worker
        self.target = target
        self._tools: dict[str, _Tool] = {}
        self._timeline: list[TimelinePoint] = []
        self._seq = 0
        self._features = 0

    def begin_cycle(self) -> None:
        """A new engine run: its running feature count starts from zero."""
        for tool in self._tools.values():
            tool.best = max(tool.best, tool.cycle)
            tool.cycle = 0
        self._features = 0

    def _tool(self, surface: Surface, name: str) -> _Tool:
        return self._tools.setdefault(subject_label(surface, name), _Tool())

    def __call__(self, event: Event) -> None:
        if not isinstance(event, CallFinished):
            return
        tool = self._tool(event.surface, event.tool)
        tool.calls += 1
        tool.seconds += event.outcome.duration_s
        # The run's totals after this call: what grew since the last call is this call's doing
        # (with calls in flight at once, near enough).
        features = event.behaviours + event.arcs + event.lines
        new, self._features = max(0, features - self._features), max(features, self._features)
        if new:
            tool.cycle += new
            if tool.cycle > tool.best:
                tool.last_new = time.time()

    def kept(self, entries: Iterable[CorpusEntry]) -> None:
        """Corpus entries kept on their tools (those written to the store)."""
        for entry in entries:
            self._tool(entry.surface, entry.tool).corpus_added += 1

    def found(self, finding: Finding) -> None:
        """A bug met on the finding's tool (each fingerprint counts once per tool)."""
        self._tool(finding.surface, finding.name).findings.add(finding.fingerprint)

    def tools(self, redact: Redactor | None = None) -> Mapping[str, ToolStats]:
        """Each tool's statistics, by its label `redact`ed: a server's tool names are its own words."""
        if redact is None:
            return {label: tool.stats() for label, tool in self._tools.items()}
        return {redact.text(label): tool.stats() for label, tool in self._tools.items()}

    def snapshot(
        self, environment: Environment, now: float | None = None, redact: Redactor | None = None
    ) -> StatsSnapshot:
        """The statistics so far, with a new timeline point; each snapshot has a higher `seq`."""
        now = time.time() if now is None else now
        tools = self.tools(redact)
        point = TimelinePoint(
            at=now,
            calls=sum(s.calls for s in tools.values()),
            behaviours=sum(s.behaviours for s in tools.values()),
            corpus=sum(s.corpus_added for s in tools.values()),
            findings=len({fp for tool in self._tools.values() for fp in tool.findings}),
        )
        self._timeline.append(point)
        if len(self._timeline) > 2 * TIMELINE_POINTS:
            self._timeline = list(thin_timeline(self._timeline))
        self._seq += 1
        return StatsSnapshot(
            worker=self.worker,
            target=self.target,
            environment=environment,
            seq=self._seq,
            written=now,
            tools=tools,
            timeline=thin_timeline(self._timeline),
        )


def server_label(name: str | None, version: str | None) -> str | None:
    """`"<name> <version>"` as an environment's `server`, None when the server named neither."""
    text = " ".join(part for part in (name, version) if part).strip()
    return text or None


RUN_RETRY_S = 5.0
"""How long one store operation of `fuzzgate run` retries a lost connection: a gate run has a
budget, and a store it cannot reach is said in the report, not waited for."""


class RunStore:
    """The shared store of one `fuzzgate run --store`: seeds in, records out. A store that cannot be
    reached or written never fails the gate; `note()` says what happened in one line."""

    def __init__(self, spec: str, target: str) -> None:
        self.target = target
        self.location = mask_url(spec)
        self.worker = new_worker_id()
        self.started = time.time()
        self.recorder = StatsRecorder(self.worker, target)
        self.seeded = 0
        """Seeds the store added to the corpus directory's."""
        self.entries = 0
        self.findings = 0
        self.failed: str | None = None
        self.store: SharedStore | None = None
        try:
            self.store = SharedStore.open(spec, retry_for=RUN_RETRY_S)
        except StoreError as exc:
            self.failed = exc.message

    def seeds(self, seeds: Seeds) -> Seeds:
        """`seeds` (the corpus directory's) with the store's entries of the target added, each key once."""
        if self.store is None:
            return seeds
        try:
            loaded = self.store.corpus(self.target)
        except StoreError as exc:
            self.failed = exc.message
            return seeds
        keys = {entry.key for entry in seeds.entries}
        extra = tuple(entry for entry in loaded.entries if entry.key not in keys)
        self.seeded = len(extra)
        entries = tuple(sorted((*seeds.entries, *extra), key=lambda e: e.key))
        skipped = (*seeds.skipped, *(f"{self.location}: {reason}" for reason in loaded.skipped))
        cold = seeds.cold if not entries else None
        return Seeds(entries, cold, skipped, seeds.path or self.location)

    def publish(self, report: RunReport, added: Iterable[CorpusEntry], redact: Redactor) -> None:
        """Write the run's kept entries (never one holding a secret), its findings (already redacted
        in `report`), its statistics and its worker record. Stops at the first failure; a store that
        already failed to give the seeds is not waited for again (the budget's promise holds)."""
        if self.store is None:
            return
        if self.failed is not None:
            self.store.close()
            return
        store = self.store
        now = time.time()
        server = server_label(report.target.server_name, report.target.server_version)
        environment = Environment.detect(server=server, cwd=Path.cwd())
        records = [
            FindingRecord(self.target, finding, finding_state(finding), self.worker, environment, now, now)
            for finding in report.findings
        ]
        for finding in report.findings:
            self.recorder.found(finding)
        entries = keepable(added, redact)
        self.recorder.kept(entries)
        try:
            self.entries = store.add_corpus(self.target, entries)
            store.record_findings(records)
            self.findings = len(records)
            store.write_stats(self.recorder.snapshot(environment, now, redact))
            host, pid = socket.gethostname().split(".")[0] or "host", os.getpid()
            store.heartbeat(WorkerInfo(self.worker, host, pid, self.started, now, (self.target,), "stopped"))
        except StoreError as exc:
            self.failed = exc.message
        finally:
            store.close()

    def note(self) -> str:
        """One line for the report, the console and the summary."""
        seeds = f"{self.seeded} seed(s) from the store"
        if self.failed is not None:
            wrote = f"{self.entries} corpus entries and {self.findings} findings written"
            return f"store {self.location}: {self.failed}; the run went on without it ({seeds}, {wrote})"
        return (
            f"store {self.location}: {seeds}; wrote {self.entries} new corpus entries, "
            f"{self.findings} findings and the run's statistics"
        )
