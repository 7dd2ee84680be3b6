"""The stream of small, immutable events the engine yields. Reporters consume them; the engine never
prints and never exits."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fuzzgate.model.findings import Finding, Surface
from fuzzgate.model.outcome import CallOutcome
from fuzzgate.record.results import RunReport, SurfaceEntry


@dataclass(frozen=True, slots=True)
class RunStarted:
    target: str
    seed: int
    seed_source: str
    budget_s: float
    mode: str
    shard: str | None = None
    """`I/N` when the run fuzzes one share of the tools (`--shard`)."""


@dataclass(frozen=True, slots=True)
class ServerReady:
    protocol_version: str
    server_name: str | None
    generation: int
    server_version: str | None = None
    """As the server reported it (its own words: redact before showing or storing)."""


@dataclass(frozen=True, slots=True)
class Discovered:
    entries: tuple[SurfaceEntry, ...]
    resources: tuple[str, ...]
    resource_templates: tuple[str, ...]
    prompts: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CallFinished:
    tool: str
    case_index: int
    arguments: dict[str, Any]
    schema_valid: bool
    origin: str
    outcome: CallOutcome
    observations: int
    calls: int
    findings: int
    elapsed_s: float
    surface: Surface = Surface.TOOL
    """What `tool` names: a tool, a prompt, a resource URI or template."""
    behaviours: int = 0
    """Behaviours the run has seen so far (what the status line shows, with the next three)."""
    lines: int = 0
    """Lines of the server's own code covered so far (0 without coverage)."""
    arcs: int = 0
    corpus: int = 0
    """Entries in the run's live corpus."""


@dataclass(frozen=True, slots=True)
class FeedbackReady:
    """Which signal guides the run, and what the corpus started from."""

    signal: str
    note: str
    loaded: int
    cold: str | None
    """Why the run started cold (no corpus yet, an unreadable one), None when it loaded entries."""
    skipped: tuple[str, ...] = ()
    """Corpus files that could not be read, each with its reason."""


@dataclass(frozen=True, slots=True)
class CorpusReplayed:
    replayed: int
    kept: int
    skipped: int
    seconds: float


@dataclass(frozen=True, slots=True)
class ServerRestarted:
    reason: str
    generation: int
    warm: bool = False
    """The new server was a warm spare, started before it was needed (`engine.spare`)."""


@dataclass(frozen=True, slots=True)
class FuzzingStopped:
    reason: str


@dataclass(frozen=True, slots=True)
class TriageStarted:
    findings: int
    replays: int


@dataclass(frozen=True, slots=True)
class FindingTriaged:
    finding: Finding
    dropped: bool = False
    explained_by: Finding | None = None
    """For a dropped finding, the finding of another call (seen alone or reproduced) whose evidence it
    showed."""
    moved_to: Finding | None = None
    """For a dropped crash, the crash of the call before it, which killed the server."""


@dataclass(frozen=True, slots=True)
class BaselineReplayed:
    fingerprint: str
    still_failing: bool


@dataclass(frozen=True, slots=True)
class RunFinished:
    report: RunReport


Event = (
    RunStarted
    | ServerReady
    | Discovered
    | CallFinished
    | FeedbackReady
    | CorpusReplayed
    | ServerRestarted
    | FuzzingStopped
    | TriageStarted
    | FindingTriaged
    | BaselineReplayed
    | RunFinished
)
EventSink = Callable[[Event], None]
