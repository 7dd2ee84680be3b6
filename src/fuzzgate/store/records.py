"""The values a shared store holds: what one worker writes about a target, in JSON of format 1.

Every value is one JSON object carrying `"format": 1`, written as canonical bytes (sorted keys, no
spaces, ASCII with escapes), so the same record always gives the same bytes and a set of values
never holds two spellings of one record. `from_json` raises `RecordError` (a `ValueError`) saying
in words what is wrong; the store skips such a value with that reason, never fails on it.

`SharedStore` (`fuzzgate.store.shared`) folds these per-worker records into the views a report
shows: `StoredFinding` is one bug however many workers found it.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fuzzgate import __version__
from fuzzgate.model.findings import Finding, JSONValue
from fuzzgate.model.json_fields import UnusableJSON, parse_json

STORE_FORMAT = 1
"""The version of the store's layout and of every JSON value in it; a value of another format is
skipped (it may be a newer fuzzgate's), not misread."""

TIMELINE_POINTS = 240
"""The most points a snapshot's timeline keeps: enough for a plot, small enough to rewrite often."""

STATES = ("confirmed", "flaky", "unconfirmed", "seen")
"""A finding's evidence, strongest first: reproduced on every replay; on some; the budget ended
before any replay; not replayed yet (a worker writes it as soon as it sees it)."""


class RecordError(ValueError):
    """A stored value that is not a record this version reads; the message says why."""


def dump(data: Mapping[str, JSONValue]) -> bytes:
    """The canonical bytes of a record: one spelling per record, so set semantics dedupe it.
    ASCII escapes keep a lone surrogate from fuzzed input writable and readable back."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def load(value: bytes) -> dict[str, Any]:
    """Parse a stored value into a format-1 JSON object, or raise `RecordError` saying why not."""
    try:
        obj = parse_json(value)
    except UnusableJSON as exc:
        raise RecordError(str(exc)) from None
    if not isinstance(obj, dict):
        raise RecordError("not a JSON object")
    if obj.get("format") != STORE_FORMAT:
        raise RecordError(f"format {obj.get('format')!r}, this fuzzgate reads format {STORE_FORMAT}")
    return obj


_MALFORMED = (KeyError, TypeError, ValueError, AttributeError, ArithmeticError)
"""What converting a field of the wrong shape raises (`int(1e999)` is an OverflowError)."""


def _malformed(kind: str, exc: Exception) -> RecordError:
    return RecordError(f"malformed {kind} ({type(exc).__name__}: {exc})")


def _optional_str(value: object) -> str | None:
    return None if value is None else str(value)


@dataclass(frozen=True, slots=True)
class Environment:
    """Where statistics came from (HypoFuzz's environment tags): statistics of other code are kept
    apart, while inputs and findings are shared across environments."""

    fuzzgate: str
    server: str | None = None
    """`"<name> <version>"` as the server reported it at initialization; None when unknown."""
    commit: str | None = None
    """The commit fuzzed (GITHUB_SHA, or `git rev-parse HEAD` of the working directory)."""

    @classmethod
    def detect(cls, server: str | None = None, cwd: Path | None = None) -> Environment:
        """This fuzzgate, `server`, and the commit of `cwd` (GITHUB_SHA first) when there is one."""
        return cls(fuzzgate=__version__, server=server, commit=_commit(cwd))

    def label(self) -> str:
        """E.g. "fuzzgate 0.12.0, server example 1.0, commit abc1234"."""
        parts = [f"fuzzgate {self.fuzzgate}"]
        if self.server:
            parts.append(f"server {self.server}")
        if self.commit:
            parts.append(f"commit {self.commit[:7]}")
        return ", ".join(parts)

    def to_json(self) -> dict[str, JSONValue]:
        return {"fuzzgate": self.fuzzgate, "server": self.server, "commit": self.commit}

    @classmethod
    def from_json(cls, data: object) -> Environment:
        if not isinstance(data, dict) or not isinstance(data.get("fuzzgate"), str):
            raise RecordError('environment must be an object with a string "fuzzgate"')
        return cls(data["fuzzgate"], _optional_str(data.get("server")), _optional_str(data.get("commit")))


def _commit(cwd: Path | None) -> str | None:
    sha = os.environ.get("GITHUB_SHA", "").strip()
    if sha:
        return sha
    try:
        proc = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    head = proc.stdout.strip()
    return head if proc.returncode == 0 and head else None


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """A worker's heartbeat: who it is, since when, what it fuzzes. The latest `seen` per id wins."""

    id: str
    host: str
    pid: int
    started: float
    seen: float
    targets: tuple[str, ...] = ()
    state: str = "running"
    """`running` or `stopped` (a worker that ended cleanly says so; a killed one just stops beating)."""

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "format": STORE_FORMAT,
            "id": self.id,
            "host": self.host,
            "pid": self.pid,
            "started": self.started,
            "seen": self.seen,
            "targets": list(self.targets),
            "state": self.state,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> WorkerInfo:
        try:
            return cls(
                id=str(data["id"]),
                host=str(data["host"]),
                pid=int(data["pid"]),
                started=float(data["started"]),
                seen=float(data["seen"]),
                targets=tuple(str(t) for t in data.get("targets") or ()),
                state=str(data.get("state", "running")),
            )
        except _MALFORMED as exc:
            raise _malformed("worker", exc) from None


@dataclass(frozen=True, slots=True)
class ToolStats:
    """One worker's totals on one tool (prompt, resource) of a target."""

    calls: int = 0
    seconds: float = 0.0
    behaviours: int = 0
    """Features (behaviours or coverage arcs) this worker discovered on the tool."""
    corpus_added: int = 0
    findings: int = 0
    last_new: float | None = None
    """Unix time of the last new feature on this tool: long ago means the tool is saturated."""

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "calls": self.calls,
            "seconds": self.seconds,
            "behaviours": self.behaviours,
            "corpus_added": self.corpus_added,
            "findings": self.findings,
            "last_new": self.last_new,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ToolStats:
        last_new = data.get("last_new")
        return cls(
            calls=int(data.get("calls", 0)),
            seconds=float(data.get("seconds", 0.0)),
            behaviours=int(data.get("behaviours", 0)),
            corpus_added=int(data.get("corpus_added", 0)),
            findings=int(data.get("findings", 0)),
            last_new=None if last_new is None else float(last_new),
        )


@dataclass(frozen=True, slots=True)
class TimelinePoint:
    """A worker's cumulative totals on a target at time `at` (unix time)."""

    at: float
    calls: int
    behaviours: int
    corpus: int
    findings: int

    def to_json(self) -> list[JSONValue]:
        # A list, in field order: a timeline has hundreds of points and is rewritten often.
        return [self.at, self.calls, self.behaviours, self.corpus, self.findings]

    @classmethod
    def from_json(cls, data: object) -> TimelinePoint:
        if not isinstance(data, list) or len(data) != 5:
            raise RecordError("a timeline point must be [at, calls, behaviours, corpus, findings]")
        at, calls, behaviours, corpus, findings = data
        return cls(float(at), int(calls), int(behaviours), int(corpus), int(findings))


def thin_timeline(points: Sequence[TimelinePoint], limit: int = TIMELINE_POINTS) -> tuple[TimelinePoint, ...]:
    """At most `limit` of `points`, evenly spread, the first and the last always kept."""
    if len(points) <= limit:
        return tuple(points)
    if limit < 2:
        return tuple(points[-limit:]) if limit else ()
    last = len(points) - 1
    picks = sorted({round(i * last / (limit - 1)) for i in range(limit)})
    return tuple(points[i] for i in picks)


@dataclass(frozen=True, slots=True)
class StatsSnapshot:
    """One worker's statistics on one target so far; it rewrites them as it goes (higher `seq`)."""

    worker: str
    target: str
    environment: Environment
    seq: int
    written: float
    tools: Mapping[str, ToolStats] = field(default_factory=dict)
    """Key: `subject_label(surface, name)`, e.g. "read_file", "prompt summarize"."""
    timeline: tuple[TimelinePoint, ...] = ()

    def __post_init__(self) -> None:
        if len(self.timeline) > TIMELINE_POINTS:
            object.__setattr__(self, "timeline", thin_timeline(self.timeline))

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "format": STORE_FORMAT,
            "worker": self.worker,
            "target": self.target,
            "environment": self.environment.to_json(),
            "seq": self.seq,
            "written": self.written,
            "tools": {name: stats.to_json() for name, stats in sorted(self.tools.items())},
            "timeline": [point.to_json() for point in self.timeline],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> StatsSnapshot:
        try:
            tools = data.get("tools") or {}
            if not isinstance(tools, dict):
                raise RecordError('"tools" must be an object')
            return cls(
                worker=str(data["worker"]),
                target=str(data["target"]),
                environment=Environment.from_json(data.get("environment")),
                seq=int(data["seq"]),
                written=float(data["written"]),
                tools={str(name): ToolStats.from_json(stats) for name, stats in tools.items()},
                timeline=tuple(TimelinePoint.from_json(p) for p in data.get("timeline") or ()),
            )
        except RecordError:
            raise
        except _MALFORMED as exc:
            raise _malformed("statistics", exc) from None


def finding_state(finding: Finding) -> str:
    """The evidence a finding carries after triage, as a record's `state`."""
    if finding.flaky:
        return "flaky"
    if finding.reproduced > 0:
        return "confirmed"
    if finding.unconfirmed:
        return "unconfirmed"
    return "seen"


@dataclass(frozen=True, slots=True)
class FindingRecord:
    """What one worker knows of one bug; it rewrites its record as it learns more."""

    target: str
    finding: Finding
    """Already redacted by the writer: the store never sees a secret."""
    state: str
    worker: str
    environment: Environment
    first_seen: float
    last_seen: float

    def __post_init__(self) -> None:
        if self.state not in STATES:
            raise RecordError(f"state {self.state!r} is not one of {', '.join(STATES)}")

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "format": STORE_FORMAT,
            "target": self.target,
            "finding": self.finding.to_json(),
            "state": self.state,
            "worker": self.worker,
            "environment": self.environment.to_json(),
            "first_seen": self.first_seen,
            "last_seen": self.last_seen,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FindingRecord:
        try:
            return cls(
                target=str(data["target"]),
                finding=Finding.from_json(data["finding"]),
                state=str(data["state"]),
                worker=str(data["worker"]),
                environment=Environment.from_json(data.get("environment")),
                first_seen=float(data["first_seen"]),
                last_seen=float(data["last_seen"]),
            )
        except RecordError:
            raise
        except _MALFORMED as exc:
            raise _malformed("finding record", exc) from None


@dataclass(frozen=True, slots=True)
class StoredFinding:
    """The view of one bug on one target, folded from every worker's record of it."""

    target: str
    finding: Finding
    """The smallest repro among the records; `count`, `replays`, `reproduced` summed over workers;
    `flaky` and `unconfirmed` set from `state`."""
    state: str
    """The strongest evidence any worker has: confirmed > flaky > unconfirmed > seen."""
    workers: tuple[str, ...]
    first_seen: float
    last_seen: float
