"""The result of a run, as every reporter sees it and as `report.json` stores it."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from fuzzgate.config.model import Shard
from fuzzgate.model.errors import ExitCode
from fuzzgate.model.findings import Cause, Finding, JSONValue, Severity, Surface
from fuzzgate.triage.fingerprint import ORIGINAL_SCHEME, in_current_scheme
from fuzzgate.triage.versions import GeneratorVersions

REPORT_VERSION = 1


class Status(StrEnum):
    """What a run did with one tool, resource template or prompt."""

    FUZZED = "fuzzed"
    BLOCKED = "blocked"
    """Looks destructive and is not allowlisted: never called."""
    SKIPPED = "skipped"
    """Excluded by a filter, over `max_tools`, or its schema could not be handled."""


def mostly_untested(untested: int, fuzzed: int) -> bool:
    """Whether more of what a run was to fuzz got no call than got one: a pass would vouch for tools
    never called. Calls that nearly all timed out, a server lost again and again, or a budget far
    too short for the server's size leave a run so (`RunReport.inconclusive`)."""
    return untested * 2 > fuzzed


SHARD_REASON_PREFIX = "in shard "
"""How a sharded run's skip reason begins for what another share fuzzes (`plan.shards.shard_reason`)."""


class BaselineState(StrEnum):
    NEW = "new"
    KNOWN = "known"
    FIXED = "fixed"
    PRE_EXISTING = "pre-existing"
    """Not in the baseline, but failing the same way on the base revision (`--base`): the change did
    not bring it, so it never fails the gate."""


class Verdict(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    INCONCLUSIVE = "inconclusive"
    """No gating finding, but most requests never reached the server, or none did
    (`RunReport.inconclusive`): a run that barely tested the server, or tested nothing, must not
    read as a pass."""


def exit_code(verdict: Verdict) -> ExitCode:
    """The exit code of a verdict (README, "Exit codes"): an inconclusive run is fuzzgate's own
    failure (its client did not get the requests to the server), never a pass."""
    if verdict is Verdict.FAIL:
        return ExitCode.FINDINGS
    return ExitCode.INTERNAL if verdict is Verdict.INCONCLUSIVE else ExitCode.OK


@dataclass(frozen=True, slots=True)
class SurfaceEntry:
    """One thing the server offers and what the run did with it."""

    surface: Surface
    name: str
    status: Status
    reason: str | None = None
    cases: int = 0
    probes_planned: int = 0
    """The probes planned for it (`fuzzgate.generate.probes`, `fuzzgate.generate.cost`)."""
    probes_sent: int = 0
    """Of those, the ones that reached the server."""
    corpus_calls: int = 0
    """Calls of its corpus entries that reached the server, not counted in `cases`."""

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "surface": self.surface.value,
            "name": self.name,
            "status": self.status.value,
            "reason": self.reason,
            "cases": self.cases,
            "probes_planned": self.probes_planned,
            "probes_sent": self.probes_sent,
            "corpus_calls": self.corpus_calls,
        }

    @classmethod
    def from_json(cls, data: dict[str, JSONValue]) -> SurfaceEntry:
        return cls(
            surface=Surface(data["surface"]),
            name=str(data["name"]),
            status=Status(data["status"]),
            reason=data.get("reason"),
            cases=int(data.get("cases", 0)),
            probes_planned=int(data.get("probes_planned", 0)),
            probes_sent=int(data.get("probes_sent", 0)),
            corpus_calls=int(data.get("corpus_calls", 0)),
        )

    def probes_line(self) -> str:
        """`N of M sent`; "-" when none was planned."""
        return f"{self.probes_sent} of {self.probes_planned}" if self.probes_planned else "-"


@dataclass(frozen=True, slots=True)
class TargetSummary:
    """The target as reports may show it: no env values, no header values."""

    name: str
    kind: str
    command: str | None = None
    args: tuple[str, ...] = ()
    url: str | None = None
    protocol_version: str | None = None
    server_name: str | None = None
    server_version: str | None = None
    header_names: tuple[str, ...] = ()
    """The names of the headers an HTTP target was sent (their values are secrets, never recorded):
    a replay of the recorded target needs them given again (`cli.recorded`)."""

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "name": self.name,
            "kind": self.kind,
            "command": self.command,
            "args": list(self.args),
            "url": self.url,
            "header_names": list(self.header_names),
            "protocol_version": self.protocol_version,
            "server_name": self.server_name,
            "server_version": self.server_version,
        }

    @classmethod
    def from_json(cls, data: dict[str, JSONValue]) -> TargetSummary:
        return cls(
            name=str(data["name"]),
            kind=str(data["kind"]),
            command=data.get("command"),
            args=tuple(data.get("args") or ()),
            url=data.get("url"),
            protocol_version=data.get("protocol_version"),
            server_name=data.get("server_name"),
            server_version=data.get("server_version"),
            header_names=tuple(str(name) for name in data.get("header_names") or ()),
        )


@dataclass(frozen=True, slots=True)
class SamplingSummary:
    """What coverage sampling did in a run (`fuzzgate.learn.sampling`): one call in `every` of a tool
    measured once `plateau` calls in a row reached nothing new."""

    every: int
    plateau: int
    tools: tuple[str, ...] = ()
    """The tools whose calls were sampled (subject labels), in the order they reached a plateau."""
    measured: int = 0
    """Calls measured."""
    unmeasured: int = 0
    """Calls that got behaviour feedback only."""

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "every": self.every,
            "plateau": self.plateau,
            "tools": list(self.tools),
            "measured": self.measured,
            "unmeasured": self.unmeasured,
        }

    @classmethod
    def from_json(cls, data: dict[str, JSONValue]) -> SamplingSummary:
        return cls(
            every=int(data["every"]),
            plateau=int(data["plateau"]),
            tools=tuple(str(tool) for tool in data.get("tools") or ()),
            measured=int(data.get("measured", 0)),
            unmeasured=int(data.get("unmeasured", 0)),
        )


@dataclass(frozen=True, slots=True)
class FeedbackSummary:
    """Which signal guided the run, why, and what it reached."""

    signal: str
    """`coverage`, `behaviour` or `off`."""
    note: str
    behaviours: int = 0
    lines: int = 0
    """Lines of the server's own code covered (0 without coverage)."""
    arcs: int = 0
    constants: int = 0
    """Constants the server's code compares against, mined by the collector into the dictionary."""
    sampling: SamplingSummary | None = None
    """Under coverage feedback with `[fuzzgate] coverage_sampling` above 1: what sampling did."""

    def to_json(self) -> dict[str, JSONValue]:
        data: dict[str, JSONValue] = {
            "signal": self.signal,
            "note": self.note,
            "behaviours": self.behaviours,
            "lines": self.lines,
            "arcs": self.arcs,
            "constants": self.constants,
        }
        if self.sampling is not None:
            data["sampling"] = self.sampling.to_json()
        return data

    @classmethod
    def from_json(cls, data: dict[str, JSONValue]) -> FeedbackSummary:
        return cls(
            signal=str(data["signal"]),
            note=str(data.get("note", "")),
            behaviours=int(data.get("behaviours", 0)),
            lines=int(data.get("lines", 0)),
            arcs=int(data.get("arcs", 0)),
            constants=int(data.get("constants", 0)),
            sampling=SamplingSummary.from_json(data["sampling"]) if isinstance(data.get("sampling"), dict) else None,
        )


@dataclass(frozen=True, slots=True)
class CorpusSummary:
    """What the run's corpus started from, replayed, kept and saved."""

    path: str | None
    """Where it is kept (None with feedback off)."""
    loaded: int = 0
    skipped: tuple[str, ...] = ()
    """Files that could not be read, each with its reason."""
    cold: str | None = None
    """Why the run started cold, None when it loaded entries."""
    replayed: int = 0
    kept: int = 0
    """Replayed entries that reached something new in this run."""
    not_replayed: int = 0
    """Entries not sent: their tool was not fuzzed, or the replay share of the budget ran out."""
    replay_s: float = 0.0
    added: int = 0
    """Entries this run kept."""
    saved: int = 0
    """Of those, written to the store (an entry holding a secret is never written)."""
    save_error: str | None = None

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "path": self.path,
            "loaded": self.loaded,
            "skipped": list(self.skipped),
            "cold": self.cold,
            "replayed": self.replayed,
            "kept": self.kept,
            "not_replayed": self.not_replayed,
            "replay_s": round(self.replay_s, 3),
            "added": self.added,
            "saved": self.saved,
            "save_error": self.save_error,
        }

    @classmethod
    def from_json(cls, data: dict[str, JSONValue]) -> CorpusSummary:
        return cls(
            path=None if data.get("path") is None else str(data["path"]),
            loaded=int(data.get("loaded", 0)),
            skipped=tuple(str(s) for s in data.get("skipped") or ()),
            cold=None if data.get("cold") is None else str(data["cold"]),
            replayed=int(data.get("replayed", 0)),
            kept=int(data.get("kept", 0)),
            not_replayed=int(data.get("not_replayed", 0)),
            replay_s=float(data.get("replay_s", 0.0)),
            added=int(data.get("added", 0)),
            saved=int(data.get("saved", 0)),
            save_error=None if data.get("save_error") is None else str(data["save_error"]),
        )


@dataclass(frozen=True, slots=True)
class MemorySummary:
    """The most resident memory one server's process tree held in the run, as the memory watch read
    it (`OwnedProcess.watch_memory`, every `resident.POLL_S`), beside the limit: what a user sizes
    `[fuzzgate] memory_limit` by. A peak past the limit is a server the watch stopped."""

    limit: int
    """`[fuzzgate] memory_limit`, bytes."""
    peak: int
    """Bytes: the largest sum over one server's processes at one reading (0: none was read)."""

    def to_json(self) -> dict[str, JSONValue]:
        return {"limit": self.limit, "peak": self.peak}

    @classmethod
    def from_json(cls, data: dict[str, JSONValue]) -> MemorySummary:
        return cls(limit=int(data["limit"]), peak=int(data["peak"]))


@dataclass(frozen=True, slots=True)
class RunReport:
    """Everything one run produced. `findings` are this run's (merged, replayed); `states` maps each
    fingerprint (this run's and the baseline's) to new/known/fixed; `fixed` holds baseline entries
    that no longer fail."""

    version: str
    target: TargetSummary
    seed: int
    seed_source: str
    budget_s: float
    duration_s: float
    calls: int
    mode: str
    fail_on: Severity
    entries: tuple[SurfaceEntry, ...]
    findings: tuple[Finding, ...]
    verdict: Verdict
    states: dict[str, BaselineState] = field(default_factory=dict)
    fixed: tuple[Finding, ...] = ()
    config_path: str | None = None
    command_flags: tuple[str, ...] = ()
    """The run's own command-line flags the commands it prints repeat after `--config`
    (`Config.follow_up_flags`), redacted like every other string of the report."""
    target_line: int = 1
    resources: tuple[str, ...] = ()
    prompts: tuple[str, ...] = ()
    hypothesis_version: str | None = None
    """With `version` (fuzzgate's), what decides the values generated from the seed; None in a
    report written before it was recorded."""
    fingerprint_scheme: str = ORIGINAL_SCHEME
    """The scheme the findings' fingerprints were computed under (`fuzzgate.triage.fingerprint`)."""
    interrupted: bool = False
    notes: tuple[str, ...] = ()
    """What the time box cut short (unreplayed findings or baseline entries, tools never reached)."""
    timing: dict[str, float] = field(default_factory=dict)
    """Seconds since the run began at which each phase ended (startup, discovery, fuzzing,
    verification, outputs)."""
    containment: str | None = None
    """How the server was contained: sandboxed, or why not and what was then not observed; None when
    fuzzgate did not start the server (an HTTP target without a command)."""
    feedback: FeedbackSummary | None = None
    corpus: CorpusSummary | None = None
    shard: Shard | None = None
    """The share of the tools this run fuzzed (`--shard I/N`, "I/N" in JSON); None for every tool,
    and for a report `fuzzgate merge` made of all the shares."""
    unsendable: int = 0
    """Requests fuzzgate's own client could not encode (never sent; not in `calls`)."""
    client_failed: int = 0
    """Requests lost because fuzzgate's own side of the connection had failed (not in `calls`)."""
    cut_off: tuple[str, ...] = ()
    """Calls in flight at fuzzing's deadline that the time box stopped before they could be observed
    to their end (`tool case N`): a crash or hang they caused is not reported."""
    fail_on_sdk: bool = False
    """Whether findings the server's SDK causes (`Cause.SDK`) gate like the server's own."""
    memory: MemorySummary | None = None
    """The servers' peak resident memory and the limit; None when fuzzgate watched no server's memory
    (it started none, `memory_limit = "off"`, or not on Linux)."""

    def generated_by(self) -> GeneratorVersions:
        return GeneratorVersions(fuzzgate=self.version, hypothesis=self.hypothesis_version)

    def findings_in_current_scheme(self) -> tuple[Finding, ...]:
        """`findings` with their fingerprints re-derived under the running fuzzgate's scheme where
        their signatures allow, so that replaying one compares like with like."""
        return tuple(in_current_scheme(f, self.fingerprint_scheme) for f in self.findings)

    def state_of(self, finding: Finding) -> BaselineState:
        return self.states.get(finding.fingerprint, BaselineState.NEW)

    def gating(self) -> list[Finding]:
        """The findings that fail the gate: new, not flaky, the server's own at or above fail-on,
        and those its SDK causes (always low) only with `fail_on_sdk`. A finding the budget left
        unconfirmed (never replayed) fails it too: it was seen, and a gate that passes a bug it
        reached is worse than one that asks for a longer budget."""
        return [
            f
            for f in self.findings
            if not f.flaky
            and (self.fail_on_sdk if f.cause is Cause.SDK else f.severity.at_least(self.fail_on))
            and self.state_of(f) is BaselineState.NEW
        ]

    def probe_counts(self) -> tuple[int, int]:
        """(probes sent, probes planned) over every entry."""
        return sum(e.probes_sent for e in self.entries), sum(e.probes_planned for e in self.entries)

    def probes_short(self) -> tuple[SurfaceEntry, ...]:
        """The entries fuzzed that could not send all their probes."""
        return tuple(e for e in self.entries if e.probes_sent < e.probes_planned)

    def inconclusive(self) -> bool:
        """Whether most requests never reached the server (`calls` counts only those that did), the
        run fuzzed nothing (`fuzzed_nothing`), or most of what it was to fuzz got no call
        (`mostly_untested`)."""
        return self.mostly_unsent() or self.fuzzed_nothing() or mostly_untested(*self.untested())

    def mostly_unsent(self) -> bool:
        """Whether more requests never reached the server than did."""
        return self.unsendable + self.client_failed > self.calls

    def untested(self) -> tuple[int, int]:
        """Of the tools, resources and prompts this run was to fuzz (not blocked, skipped or another
        shard's), how many got no call at all (their corpus entries' included), and how many there were."""
        fuzzed = [e for e in self.entries if e.status is Status.FUZZED]
        return sum(1 for e in fuzzed if e.cases == 0 and e.probes_sent == 0 and e.corpus_calls == 0), len(fuzzed)

    def fuzzed_nothing(self) -> bool:
        """No call reached the server though the run had something of its own to fuzz: every tool,
        resource and prompt excluded or blocked, a server that offers none, a budget spent before
        the first call. A shard whose every tool lies in other shares has nothing of its own."""
        if self.calls > 0:
            return False
        return not self.entries or any(not (e.reason or "").startswith(SHARD_REASON_PREFIX) for e in self.entries)

    def decide(self) -> Verdict:
        """Fail on a gating finding; otherwise inconclusive when most requests never reached the
        server (the reason leads the notes); otherwise pass."""
        if self.gating():
            return Verdict.FAIL
        return Verdict.INCONCLUSIVE if self.inconclusive() else Verdict.PASS

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "report_version": REPORT_VERSION,
            "version": self.version,
            "hypothesis_version": self.hypothesis_version,
            "fingerprint_scheme": self.fingerprint_scheme,
            "target": self.target.to_json(),
            "seed": self.seed,
            "seed_source": self.seed_source,
            "budget_s": self.budget_s,
            "duration_s": round(self.duration_s, 3),
            "calls": self.calls,
            "unsendable": self.unsendable,
            "client_failed": self.client_failed,
            "cut_off_calls": list(self.cut_off),
            "mode": self.mode,
            "fail_on": self.fail_on.value,
            "fail_on_sdk": self.fail_on_sdk,
            "verdict": self.verdict.value,
            "interrupted": self.interrupted,
            "config_path": self.config_path,
            "command_flags": list(self.command_flags),
            "target_line": self.target_line,
            "cases_per_tool": {
                e.name: e.cases for e in self.entries if e.status is Status.FUZZED and e.surface is Surface.TOOL
            },
            "entries": [e.to_json() for e in self.entries],
            "probes": dict(zip(("sent", "planned"), self.probe_counts(), strict=True)),
            "resources": list(self.resources),
            "prompts": list(self.prompts),
            "notes": list(self.notes),
            "timing": dict(self.timing),
            "containment": self.containment,
            "feedback": self.feedback.to_json() if self.feedback is not None else None,
            "corpus": self.corpus.to_json() if self.corpus is not None else None,
            "memory": self.memory.to_json() if self.memory is not None else None,
            "shard": None if self.shard is None else str(self.shard),
            "findings": [{**f.to_json(), "baseline_state": self.state_of(f).value} for f in self.findings],
            "fixed": [f.to_json() for f in self.fixed],
        }

    @classmethod
    def from_json(cls, data: dict[str, JSONValue]) -> RunReport:
        findings = tuple(Finding.from_json(f) for f in data.get("findings", []))
        fixed = tuple(Finding.from_json(f) for f in data.get("fixed", []))
        states = {f["fingerprint"]: BaselineState(f.get("baseline_state", "new")) for f in data.get("findings", [])}
        states.update({f.fingerprint: BaselineState.FIXED for f in fixed})
        return cls(
            version=str(data["version"]),
            hypothesis_version=data.get("hypothesis_version"),
            fingerprint_scheme=str(data.get("fingerprint_scheme") or ORIGINAL_SCHEME),
            target=TargetSummary.from_json(data["target"]),
            seed=int(data["seed"]),
            seed_source=str(data["seed_source"]),
            budget_s=float(data["budget_s"]),
            duration_s=float(data["duration_s"]),
            calls=int(data["calls"]),
            mode=str(data["mode"]),
            fail_on=Severity(data["fail_on"]),
            entries=tuple(SurfaceEntry.from_json(e) for e in data.get("entries", [])),
            findings=findings,
            verdict=Verdict(data["verdict"]),
            states=states,
            fixed=fixed,
            config_path=data.get("config_path"),
            command_flags=tuple(str(flag) for flag in data.get("command_flags") or ()),
            target_line=int(data.get("target_line", 1)),
            resources=tuple(data.get("resources") or ()),
            prompts=tuple(data.get("prompts") or ()),
            interrupted=bool(data.get("interrupted", False)),
            notes=tuple(data.get("notes") or ()),
            timing={str(k): float(v) for k, v in (data.get("timing") or {}).items()},
            containment=None if data.get("containment") is None else str(data["containment"]),
            feedback=FeedbackSummary.from_json(data["feedback"]) if data.get("feedback") else None,
            corpus=CorpusSummary.from_json(data["corpus"]) if data.get("corpus") else None,
            memory=MemorySummary.from_json(data["memory"]) if data.get("memory") else None,
            shard=shard_from_json(data.get("shard")),
            unsendable=int(data.get("unsendable", 0)),
            client_failed=int(data.get("client_failed", 0)),
            cut_off=tuple(str(c) for c in data.get("cut_off_calls") or ()),
            fail_on_sdk=bool(data.get("fail_on_sdk", False)),
        )


def shard_from_json(value: JSONValue) -> Shard | None:
    """`"I/N"` as `report.json` stores it (None, or absent in older reports: not sharded)."""
    if value is None:
        return None
    index, _, count = str(value).partition("/")
    shard = Shard(int(index), int(count))
    if not 1 <= shard.index <= shard.count:
        raise ValueError(f"shard {value!r}: expected I/N with 1 <= I <= N")
    return shard
