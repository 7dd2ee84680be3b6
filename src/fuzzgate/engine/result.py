"""What a run returns: the `EngineResult`, and what is built for it around fuzzing: the target as
reports show it, the table of what was fuzzed, the feedback and corpus summaries, and the notes that
say in words what the run cut short or never did."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from fuzzgate.check.secrets import Redactor, redactor_for
from fuzzgate.config.model import TargetKind
from fuzzgate.config.views import ServerSettings
from fuzzgate.learn.features import Feedback, SignalKind
from fuzzgate.learn.live_corpus import REPLAY_SHARE, CorpusStats, LiveCorpus, Seeds
from fuzzgate.learn.sampling import CoverageSampling
from fuzzgate.model.corpus import CorpusEntry
from fuzzgate.model.findings import Finding, Surface
from fuzzgate.plan.selection import Selection, ToolPlan
from fuzzgate.record.results import (
    SHARD_REASON_PREFIX,
    CorpusSummary,
    FeedbackSummary,
    MemorySummary,
    Status,
    SurfaceEntry,
    TargetSummary,
    mostly_untested,
)
from fuzzgate.target.connection import Connection
from fuzzgate.target.discover import Inventory


@dataclass(frozen=True, slots=True)
class EngineResult:
    target: TargetSummary
    entries: tuple[SurfaceEntry, ...]
    inventory: Inventory
    findings: tuple[Finding, ...]
    calls: int
    """Requests the server received; those that never reached it are `unsendable` and `client_failed`."""
    duration_s: float
    unsendable: int = 0
    """Requests fuzzgate's own client could not encode (a lone surrogate over HTTP): never sent."""
    client_failed: int = 0
    """Requests lost because fuzzgate's own side of the connection had failed."""
    baseline_failing: frozenset[str] = frozenset()
    baseline_unverified: frozenset[str] = frozenset()
    pre_existing: frozenset[str] = frozenset()
    """New findings that failed the same way on the base revision (`--base`)."""
    notes: tuple[str, ...] = ()
    """What the time box cut short, in words."""
    timing: dict[str, float] = field(default_factory=dict)
    """Seconds since the run began at which each phase ended."""
    containment: str | None = None
    """How the server was contained (`Containment.summary`), None when fuzzgate did not start it."""
    feedback: FeedbackSummary | None = None
    corpus: CorpusSummary | None = None
    corpus_added: tuple[CorpusEntry, ...] = ()
    """The entries this run kept, for the store."""
    cut_off: tuple[str, ...] = ()
    """Calls in flight at fuzzing's deadline that the time box stopped before they could be
    observed to their end (`tool case N`): a crash or hang they caused is not reported."""
    memory: MemorySummary | None = None
    """The peak resident memory of the servers fuzzgate started, beside the limit (`Engine._memory`)."""
    accepting: frozenset[tuple[Surface, str]] = frozenset()
    """The tools, resources and prompts that answered a schema-valid call with success at least
    once: whatever error they failed with, it was not all they could do (`triage.alike`)."""


def target_summary(
    server: ServerSettings, connection: Connection | None = None, redact: Redactor | None = None
) -> TargetSummary:
    """The target as reports show it. The command line and URL may hold `${VAR}` expansions and the
    server's name and version are its own words: all redacted."""
    target = server.target
    info = connection.server_info if connection else None
    r = redact if redact is not None else redactor_for(server, {})
    return TargetSummary(
        name=r.text(target.display_name),
        kind=target.kind.value,
        command=r(target.command) if target.command is not None else None,
        args=tuple(r.text(a) for a in target.args) if target.command is not None else (),
        url=r(target.url) if target.kind is TargetKind.HTTP else None,
        protocol_version=r(connection.protocol_version) if connection else None,
        server_name=r(info.name) if info else None,
        server_version=r(info.version) if info else None,
        header_names=tuple(r.text(name) for name in target.headers) if target.kind is TargetKind.HTTP else (),
    )


def surface_entries(
    inventory: Inventory, decided: tuple[SurfaceEntry, ...], plans: tuple[ToolPlan, ...]
) -> tuple[SurfaceEntry, ...]:
    """Every tool, resource and prompt in the inventory's order: those planned with their calls,
    beside those the selection decided against."""
    ran = tuple(_ran(p) for p in plans)
    order = {(t.surface, t.name): i for i, t in enumerate((*inventory.tools, *inventory.others))}
    return tuple(sorted((*ran, *decided), key=lambda e: order.get((e.surface, e.name), 0)))


def _ran(plan: ToolPlan) -> SurfaceEntry:
    status = Status.FUZZED if plan.skip_reason is None else Status.SKIPPED
    # A fuzzed tool's reason is its note (a guarded tool fuzzed in the sandbox says why).
    reason = plan.note if plan.skip_reason is None else plan.skip_reason
    sent, planned = plan.probe_counts()
    return SurfaceEntry(plan.info.surface, plan.info.name, status, reason, plan.calls, planned, sent, plan.corpus_calls)


def feedback_summary(feedback: Feedback, sampling: CoverageSampling | None = None) -> FeedbackSummary:
    fb = feedback
    summary = sampling.summary() if sampling is not None else None
    return FeedbackSummary(
        fb.signal.kind.value, fb.signal.note, fb.behaviours, fb.lines, fb.arcs, fb.constants, summary
    )


def corpus_summary(feedback: Feedback, live: LiveCorpus | None, seeds: Seeds) -> CorpusSummary | None:
    if feedback.signal.kind is SignalKind.OFF:
        return None
    stats = live.stats if live is not None else CorpusStats(loaded=len(seeds.entries))
    return CorpusSummary(
        path=seeds.path,
        loaded=stats.loaded,
        skipped=seeds.skipped,
        cold=seeds.cold,
        replayed=stats.replayed,
        kept=stats.kept,
        not_replayed=stats.skipped + max(0, stats.loaded - stats.replayed - stats.skipped),
        replay_s=stats.replay_s,
        added=stats.added,
    )


def run_notes(
    verified: Sequence[str],
    *,
    corpus: CorpusSummary | None,
    cut_off: Sequence[str],
    observe: float,
    calls: int,
    unsendable: int,
    client_failed: int,
    client_failure: str | None,
    selection: Selection,
    discovered_in_time: bool = False,
) -> tuple[str, ...]:
    """The run's notes: verification's, then the corpus entries not replayed and the calls cut off;
    led by what makes the run inconclusive or says why tools got no case. `discovered_in_time`: the
    server's listing was read before fuzzing's deadline, so what spent the budget came after it."""
    notes = list(verified)
    if corpus is not None and corpus.not_replayed:
        share = f"{REPLAY_SHARE:.0%}"
        notes.append(
            f"{corpus.not_replayed} of {corpus.loaded} corpus entries were not replayed "
            f"(their tool is not fuzzed in this run, or replaying took its {share} share of the fuzzing time, "
            "or their call took longer than what was left of it)"
        )
    if cut_off:
        notes.append(cut_off_note(cut_off, observe))
    if unsendable or client_failed:
        notes.insert(0, unsent_note(calls, unsendable, client_failed, client_failure))
    if (short := probes_note(selection.plans)) is not None:
        notes.insert(0, short)
    never = [p for p in selection.plans if p.calls == 0 and p.corpus_calls == 0 and p.skip_reason is None]
    if not selection.plans and calls == 0:
        notes.insert(0, nothing_selected_note(selection.entries))
    elif never and calls == 0 and not (unsendable or client_failed):
        if discovered_in_time:
            spent = (
                "the budget was spent before any call was sent, after the server's start-up and discovery "
                "(the protocol probes, the coverage collector's start or generating the first cases took it; "
                "a longer --budget, or a smaller --max-string, leaves fuzzing time)"
            )
        else:
            spent = "the budget was spent before fuzzing began (server start-up and discovery took it)"
        notes.insert(0, spent)
    elif never:
        text = f"{len(never)} of {len(selection.plans)} tools got no case within the budget"
        fuzzed = [p for p in selection.plans if p.skip_reason is None]
        if mostly_untested(len(never), len(fuzzed)):
            # Said whatever the verdict: a run that also found a bug fails, and still tested little.
            text = (
                f"most of what the run was to fuzz got no call ({calls} calls reached the server), which leaves a "
                f"run without a new finding inconclusive: {text}; a longer --budget, fewer tools per run "
                "(--include, --shard), or a shorter --timeout when calls time out, tests them"
            )
        notes.insert(0, text)
    return tuple(notes)


def probes_note(plans: Sequence[ToolPlan]) -> str | None:
    """The note for tools that could not send all their probes within the budget: a scope or
    injection bug behind an unsent probe went untested, which a run that exits 0 must say."""
    short = [p for p in plans if p.skip_reason is None and p.probe_counts()[0] < p.probe_counts()[1]]
    if not short:
        return None
    sent = sum(p.probe_counts()[0] for p in plans)
    planned = sum(p.probe_counts()[1] for p in plans)
    named = [f"{p.info.name} ({p.probe_counts()[0]} of {p.probe_counts()[1]})" for p in short]
    shown = ", ".join(named[:5]) + (f" and {len(named) - 5} more" if len(named) > 5 else "")
    return (
        f"probes: {sent} of {planned} sent; {len(short)} of {len(plans)} tools ran out of budget before all their "
        f"probes: {shown}; the bugs only those probes reach went untested (a longer --budget, or fewer tools "
        "per run with --include or --shard, sends them all)"
    )


def cut_off_note(cut_off: Sequence[str], observe: float) -> str:
    shown = ", ".join(cut_off[:5]) + (f" and {len(cut_off) - 5} more" if len(cut_off) > 5 else "")
    return (
        f"{len(cut_off)} calls in flight at fuzzing's deadline were cut off before they could be observed to "
        f"their end (the grace for them is up to {observe:g}s, within the budget's margin): {shown}; a crash "
        "or hang they caused is not reported"
    )


def nothing_selected_note(entries: Sequence[SurfaceEntry]) -> str:
    """Why a run sent no call when it selected nothing to fuzz: which makes it inconclusive, unless
    every entry is another shard's (`RunReport.fuzzed_nothing`)."""
    if not entries:
        return "nothing was fuzzed: the server offers no tool, resource or prompt"
    if all((e.reason or "").startswith(SHARD_REASON_PREFIX) for e in entries):
        return f"nothing was fuzzed in this shard: each of the server's {len(entries)} tools lies in another share"
    return (
        f"nothing was fuzzed: each of the server's {len(entries)} tools, resources and prompts is excluded, "
        "blocked or skipped (see the table); widen include/exclude, or allowlist what the guard blocks"
    )


def unsent_note(calls: int, unsendable: int, client_failed: int, failure: str | None) -> str:
    """The note for requests the server never received; it leads the notes when they outnumber the
    calls that reached it, which makes the run inconclusive (`RunReport.inconclusive`)."""
    parts = []
    if unsendable:
        parts.append(f"{unsendable} could not be encoded by fuzzgate's own client (a lone surrogate over HTTP)")
    if client_failed:
        parts.append(f"{client_failed} were lost when fuzzgate's side of the connection failed")
    text = f"{unsendable + client_failed} requests never reached the server ({'; '.join(parts)}); not counted as calls"
    if failure and client_failed:
        text += f"; first failure: {failure}"
    if unsendable + client_failed > calls:
        text = f"inconclusive: most requests never reached the server ({calls} did): {text}"
    return text
