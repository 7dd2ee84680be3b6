"""What the HTML page shows, as plain data: its input (`StoreData`, one `TargetData` per target) and
the numbers folded from it (environments, one row per subject, the plotted series, a worker's
state). Nothing here renders or escapes anything; `html.py` draws the page from these.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from fuzzgate.model.commands import subject_label
from fuzzgate.report.timeline_svg import Series, counted, summed
from fuzzgate.store.records import Environment, StatsSnapshot, StoredFinding, WorkerInfo


@dataclass(frozen=True, slots=True)
class TargetData:
    """What the store holds about one target."""

    name: str
    findings: tuple[StoredFinding, ...] = ()
    stats: tuple[StatsSnapshot, ...] = ()
    """The latest snapshot of each worker, of every environment."""
    corpus: Mapping[str, int] = field(default_factory=dict)
    """Corpus entries per subject (`subject_label(surface, name)`)."""


@dataclass(frozen=True, slots=True)
class StoreData:
    """The whole page's input."""

    location: str
    """The store as the page names it (a Redis URL's password already masked)."""
    generated: float
    """When the page was drawn (unix time): ages of heartbeats are measured from it."""
    targets: tuple[TargetData, ...] = ()
    workers: tuple[WorkerInfo, ...] = ()
    skipped: tuple[str, ...] = ()
    """Values the store could not read, with the reason."""


def finding_subject(found: StoredFinding) -> str:
    return subject_label(found.finding.surface, found.finding.name)


def environment_groups(stats: Iterable[StatsSnapshot]) -> list[tuple[Environment, list[StatsSnapshot]]]:
    """Snapshots grouped by environment, the most recently written environment first: statistics
    of other code are counted apart from the current ones (HypoFuzz's environments)."""
    groups: dict[Environment, list[StatsSnapshot]] = {}
    for snapshot in stats:
        groups.setdefault(snapshot.environment, []).append(snapshot)
    return sorted(groups.items(), key=lambda item: -max(s.written for s in item[1]))


@dataclass(frozen=True, slots=True)
class SubjectRow:
    """One line of a target's table."""

    subject: str
    calls: int = 0
    behaviours: int = 0
    corpus: int = 0
    findings: Mapping[str, int] = field(default_factory=dict)
    last_new: float | None = None


def subject_rows(target: TargetData, current: Sequence[StatsSnapshot]) -> list[SubjectRow]:
    """Per subject: calls and behaviours summed over the `current` snapshots (each worker's
    latest), corpus entries, findings by state; subjects in the order of their names."""
    calls: Counter[str] = Counter()
    behaviours: Counter[str] = Counter()
    last_new: dict[str, float] = {}
    for snapshot in current:
        for subject, tool in snapshot.tools.items():
            calls[subject] += tool.calls
            behaviours[subject] += tool.behaviours
            if tool.last_new is not None:
                last_new[subject] = max(tool.last_new, last_new.get(subject, tool.last_new))
    by_state: dict[str, Counter[str]] = {}
    for found in target.findings:
        by_state.setdefault(finding_subject(found), Counter())[found.state] += 1
    subjects = sorted({*calls, *behaviours, *target.corpus, *by_state})
    return [
        SubjectRow(
            subject,
            calls[subject],
            behaviours[subject],
            target.corpus.get(subject, 0),
            dict(by_state.get(subject, {})),
            last_new.get(subject),
        )
        for subject in subjects
    ]


def target_series(
    target: TargetData, current: Sequence[StatsSnapshot], started: Mapping[str, float] | None = None
) -> dict[str, Series]:
    """The plotted counts of a target: behaviours and corpus entries summed over the workers'
    timelines, and distinct findings by the time any worker first saw them.

    A worker whose start is known (`started`, by worker id) counted 0 then: a run writes one point
    at its end, and the plot should show what it added, not a flat line."""
    started = started or {}

    def points(snapshot: StatsSnapshot, field: str) -> list[tuple[float, int]]:
        line = [(p.at, int(getattr(p, field))) for p in snapshot.timeline]
        begin = started.get(snapshot.worker)
        if begin is not None and line and begin < line[0][0]:
            line.insert(0, (begin, 0))
        return line

    return {
        "behaviours": summed(points(s, "behaviours") for s in current),
        "corpus": summed(points(s, "corpus") for s in current),
        "findings": counted(found.first_seen for found in target.findings),
    }


SILENT_AFTER_S = 60.0
"""A worker beats every 5 s: one that says `running` but has not beaten for this long was killed
or cut off (a killed worker cannot say it stopped)."""


def worker_state(worker: WorkerInfo, now: float) -> str:
    """`running`, `stopped`, or `silent`: running by its last word, but no heartbeat lately."""
    if worker.state == "running" and now - worker.seen > SILENT_AFTER_S:
        return "silent"
    return worker.state
