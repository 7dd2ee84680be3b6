"""How the shared store's views fold what many workers wrote: the latest value per identity (a
worker's record of a fingerprint, its stats snapshot, its heartbeat), then one `StoredFinding` per
fingerprint across workers, with the strongest evidence, the merged hits and replays, and its
first and last sighting."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any, TypeVar

from fuzzgate.model.findings import Finding
from fuzzgate.store.records import STATES, FindingRecord, StoredFinding

_T = TypeVar("_T")

_STRENGTH = {state: rank for rank, state in enumerate(reversed(STATES))}


def latest_by(
    items: Iterable[_T], identity: Callable[[_T], tuple[Any, ...]], order: Callable[[_T], tuple[Any, ...]]
) -> list[_T]:
    """The greatest item by `order` of each `identity`, in first-seen order of identities."""
    best: dict[tuple[Any, ...], _T] = {}
    for item in items:
        ident = identity(item)
        if ident not in best or order(item) > order(best[ident]):
            best[ident] = item
    return list(best.values())


def record_identity(record: FindingRecord) -> tuple[str, str]:
    return record.worker, record.finding.fingerprint


def record_order(record: FindingRecord) -> tuple[float, int, int]:
    # A worker's record only grows: later, then more hits, then stronger evidence.
    return record.last_seen, record.finding.count, _STRENGTH[record.state]


def fold_finding(target: str, records: list[FindingRecord]) -> StoredFinding:
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


def finding_order(found: StoredFinding) -> tuple[str, int, str, str, str]:
    f = found.finding
    return found.target, -f.severity.rank, f.kind.value, f.name, f.fingerprint
