"""A shared store filled in code for the HTML report's tests: findings of every state (some with
hostile text), two workers' statistics with timelines, heartbeats, corpus entries, an older
environment and a value that does not parse."""

from __future__ import annotations

from fuzzgate.model.corpus import CorpusEntry
from fuzzgate.model.findings import Details, Finding, Kind, Repro, Severity, Step, Surface
from fuzzgate.store.layout import findings_key
from fuzzgate.store.shared import (
    Environment,
    FindingRecord,
    SharedStore,
    StatsSnapshot,
    TimelinePoint,
    ToolStats,
    WorkerInfo,
)

T0 = 1_790_000_000.0
TARGET = "demo <b>server</b>"
OTHER_TARGET = "second"
HOSTILE_MESSAGE = "ZeroDivisionError <script>alert(1)</script> in divide"
SVG_BREAKER = "bad reply </svg><svg onload=alert(3)> end"
TOKEN = "ghp_" + "A1b2C3d4" * 4 + "Zz9Y"
"""A GitHub token by the built-in pattern: the page must show it redacted."""
ENV = Environment("0.12.0", "example <i>1.0</i>", "abc1234def567")
OLD_ENV = Environment("0.11.0", "example 0.9", "0000000aaaa")


def finding(
    fingerprint: str,
    name: str,
    message: str,
    *,
    kind: Kind = Kind.CRASH,
    severity: Severity = Severity.CRITICAL,
    surface: Surface = Surface.TOOL,
    arguments: dict[str, object] | None = None,
    prefix: tuple[Step, ...] = (),
) -> Finding:
    return Finding(
        kind=kind,
        severity=severity,
        surface=surface,
        name=name,
        message=message,
        fingerprint=fingerprint,
        repro=Repro(seed=1, case_index=2, arguments=arguments or {"a": 1, "b": 0}, transport="stdio", prefix=prefix),
        details=Details(error=message, stderr="Traceback (most recent call last):\n</pre></details><b>x</b>"),
        count=2,
        replays=3,
        reproduced=3,
    )


FINDINGS = {
    "confirmed": finding("f0c0ffee00000001", "divide", HOSTILE_MESSAGE),
    "flaky": finding(
        "f0c0ffee00000002",
        "echo </code>",
        f"{SVG_BREAKER} leaked {TOKEN}",
        kind=Kind.SCHEMA_VIOLATION,
        severity=Severity.MEDIUM,
        arguments={"text": "'; rm -rf / #<>&\""},
    ),
    "unconfirmed": finding(
        "f0c0ffee00000003",
        "summarize",
        "prompt failed\x00\x1b[31m red",
        kind=Kind.INTERNAL_ERROR,
        severity=Severity.HIGH,
        surface=Surface.PROMPT,
    ),
    "seen": finding(
        "f0c0ffee00000004",
        "make_then_use",
        "needs the earlier call",
        prefix=(Step("make", {"x": 1}),),
    ),
}


def timeline(scale: int, points: int = 12) -> tuple[TimelinePoint, ...]:
    return tuple(TimelinePoint(T0 + i * 60 * scale, i * 10, i * scale, i, i // 4) for i in range(points))


def fill(store: SharedStore) -> None:
    """Everything the page shows, written the way workers write it."""
    records = []
    for state, found in FINDINGS.items():
        records.append(FindingRecord(TARGET, found, state, "w-one", ENV, T0 + 30, T0 + 300))
    # The same bug from a second worker: the page shows it once, with both workers.
    records.append(FindingRecord(TARGET, FINDINGS["confirmed"], "seen", "w-two<script>", ENV, T0 + 10, T0 + 500))
    records.append(
        FindingRecord(OTHER_TARGET, finding("a0000000000000aa", "ping", "slow"), "confirmed", "w-one", ENV, T0, T0)
    )
    store.record_findings(records)
    tools = {
        "divide": ToolStats(calls=120, seconds=2.0, behaviours=7, last_new=T0 + 400),
        "echo </code>": ToolStats(calls=80, seconds=1.0, behaviours=4),
        "prompt summarize": ToolStats(calls=10, seconds=0.5, behaviours=1),
    }
    store.write_stats(StatsSnapshot("w-one", TARGET, ENV, 5, T0 + 700, tools, timeline(1)))
    store.write_stats(StatsSnapshot("w-two<script>", TARGET, ENV, 9, T0 + 800, tools, timeline(2)))
    store.write_stats(StatsSnapshot("w-old", TARGET, OLD_ENV, 1, T0 - 9000, {"divide": ToolStats(calls=999)}, ()))
    store.heartbeat(WorkerInfo("w-one", "host-a", 101, T0, T0 + 700, (TARGET, OTHER_TARGET), "stopped"))
    store.heartbeat(WorkerInfo("w-two<script>", "host<b>b</b>", 202, T0 + 5, T0 + 800, (TARGET,), "running"))
    entries = [CorpusEntry("divide", {"a": i, "b": 1}) for i in range(4)]
    entries.append(CorpusEntry("echo </code>", {"text": "hi"}))
    entries.append(CorpusEntry("summarize", {"topic": "x"}, surface=Surface.PROMPT))
    store.add_corpus(TARGET, entries)
    store.db.save(findings_key(TARGET), b'{"format": 1, "target": "torn <img src=x>')
