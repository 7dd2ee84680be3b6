"""Verification's tallies and what they come to: the count each finding and each baseline entry
keeps of its replays (`Tally`, `BaselineTally`), and the labels and notes the run reports from them
once the replays are over or the deadline came (`label`).

The verifier (`engine.verify`) schedules the replays and fills the tallies; this module only reads
them. What the deadline cut short is said in a note, never hidden (the rules are `engine.verify`'s
docstring).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace

from fuzzgate.config.model import TargetConfig
from fuzzgate.engine.base_check import BaseTally, base_notes
from fuzzgate.model.findings import Finding, Kind, Severity
from fuzzgate.triage.minimize import CallShrinker

__all__ = ["BaseChecks", "BaselineTally", "Explainer", "Tally", "Verification", "label"]

OWN_TIMING = frozenset({Kind.HANG, Kind.SLOW})
"""Kinds about a call's own time, not evidence a server leaves on a stream all calls share: never
explained by another call's finding (`Explainer`)."""


@dataclass(slots=True, eq=False)
class Tally:
    """A finding's replays so far."""

    finding: Finding
    ambiguous: bool
    generation: int = 0
    """Bumped when the repro changes: results of replays of an older repro are discarded."""
    attempts: int = 0
    reproduced: int = 0
    unreachable: bool = False
    """A replay could not reach a server (an HTTP server a crash took down): no more attempts."""
    settled: bool = False
    """Whether a sequence repro was tried alone, then whole, then shrunk (`fuzzgate.triage.sequence`)."""
    shrinker: CallShrinker | None = None
    """The shrinking of the failing call, once every replay reproduced (`triage.minimize`)."""
    moved_to: Finding | None = None
    """The crash of the call before this one's, when the server died without this call too, right
    after answering that one (`Verifier._died_after_earlier_call`): this one is not reported."""


@dataclass(slots=True, eq=False)
class BaselineTally:
    """The replays of a baseline entry fuzzing did not meet again."""

    entry: Finding
    attempts: int = 0
    failing: bool = False
    done: bool = False
    refused: str | None = None
    """Why the run's selection refuses a call of its repro: not replayed, it stays known."""
    unstarted: bool = False
    """No fresh server could be started for it: not replayed, so not shown fixed."""
    unobserved: str | None = None
    """Why its evidence cannot be seen in this run (`containment.unobserved`: an `ssrf` entry where
    the server has no SSRF listener, an `out_of_memory` one without the memory watch): not
    replayed, it stays known."""


@dataclass(frozen=True, slots=True)
class Verification:
    findings: tuple[Finding, ...]
    """Confirmed, flaky or unconfirmed findings (dropped ones left out), by fingerprint."""
    triaged: tuple[tuple[Finding, bool], ...] = ()
    """Every candidate as labelled, with whether it was dropped, for the console."""
    baseline_failing: frozenset[str] = frozenset()
    baseline_unverified: frozenset[str] = frozenset()
    """Baseline entries whose replays did not finish in time: they stay known."""
    notes: tuple[str, ...] = ()
    """What the deadline cut short, in words for the report and the summary."""
    pre_existing: frozenset[str] = frozenset()
    """New findings that failed the same way on the base revision (`fuzzgate.engine.base_check`)."""
    explained: Mapping[str, Finding] = field(default_factory=dict)
    """Dropped findings whose evidence is another call's (`Explainer`), with that call's finding."""
    moved: Mapping[str, Finding] = field(default_factory=dict)
    """Dropped crashes of calls the server died during only because the call before them had killed
    it (`Tally.moved_to`), with that call's crash."""


class Explainer:
    """Which findings only ever seen beside other calls are another call's symptom: a finding of
    another tool, prompt or resource, seen alone at least once or reproduced on a fresh server, has
    the same kind and signature.

    Beside a slow call, the helper's calls run on the same server, and what the server writes to
    the streams every call shares (a line that is not JSON on stdout, a traceback on stderr, its
    death) is evidence for every call in flight: `tail_log` printing to stdout while `wait_for_job`
    hangs gave `wait_for_job` a protocol error of `tail_log`'s. Such a finding needs no replay of its
    own to be weighed: the same evidence seen alone names its call. One that did reproduce alone is
    its own bug, and kept. A hang or a slow call is the call's own time (`OWN_TIMING`), never
    explained by another's.
    """

    def __init__(self, tallies: Mapping[str, Tally]) -> None:
        self._alone: dict[tuple[Kind, tuple[str, ...]], Finding] = {}
        for fingerprint in sorted(tallies):
            tally = tallies[fingerprint]
            signature = tally.finding.signature
            if signature is not None and (not tally.ambiguous or tally.reproduced > 0):
                self._alone.setdefault((tally.finding.kind, signature), tally.finding)

    def by(self, tally: Tally) -> Finding | None:
        """The finding seen alone (or reproduced) whose evidence `tally`'s is, or None: `tally` was
        seen alone too, reproduced on a replay, is about its own time, or kept no signature (one
        that would quote a secret is not kept, and two such are not the same evidence)."""
        finding = tally.finding
        if not tally.ambiguous or tally.reproduced > 0 or finding.kind in OWN_TIMING or finding.signature is None:
            return None
        other = self._alone.get((finding.kind, finding.signature))
        if other is None or (other.surface, other.name) == (finding.surface, finding.name):
            return None
        return other


@dataclass(frozen=True, slots=True)
class BaseChecks:
    """The base check's replays (`fuzzgate.engine.base_check`), for a run with a base revision."""

    tallies: Mapping[str, BaseTally]
    known: Collection[str]
    """The baseline's fingerprints: never checked on the base."""
    error: str | None = None
    """Why no base server could be started, if none could."""


def label(
    candidates: Sequence[tuple[Finding, bool]],
    tallies: Mapping[str, Tally],
    baseline: Sequence[BaselineTally],
    *,
    replays: int,
    target: TargetConfig,
    fail_on: Severity = Severity.MEDIUM,
    start_error: str | None = None,
    base: BaseChecks | None = None,
) -> Verification:
    """Fuzzing's final `candidates` labelled by their `tallies`, the `baseline` entries' outcome, and
    the notes on what the deadline (or a server that would not start, `start_error`) cut short."""
    if replays <= 0:
        unreplayed = tuple(sorted((f for f, _ in candidates), key=lambda f: f.fingerprint))
        return Verification(unreplayed, tuple((f, False) for f in unreplayed))
    kept, triaged, notes, explained = _findings(candidates, tallies, replays, target, fail_on)
    moved = {fp: _moved_to(t, tallies) for fp, t in sorted(tallies.items()) if t.moved_to is not None}
    failing, kept_known, baseline_notes = _baseline(baseline, start_error)
    notes += baseline_notes
    pre_existing: frozenset[str] = frozenset()
    if base is not None:
        kept_fingerprints = {f.fingerprint for f in kept}
        checks = [t for fp, t in sorted(base.tallies.items()) if fp in kept_fingerprints]
        checks += [BaseTally(f) for f in kept if f.fingerprint not in base.known and f.fingerprint not in base.tallies]
        checked = any(t.attempts for t in checks)
        notes.extend(base_notes(checks, base.error, checked))
        pre_existing = frozenset(t.finding.fingerprint for t in checks if t.failing)
    return Verification(
        tuple(kept),
        tuple(triaged),
        failing,
        kept_known,
        tuple(notes),
        pre_existing=pre_existing,
        explained=explained,
        moved=moved,
    )


def _moved_to(tally: Tally, tallies: Mapping[str, Tally]) -> Finding:
    """The crash a moved one ends up as: the call it moved to may have moved on in its turn."""
    assert tally.moved_to is not None
    target, seen = tally.moved_to, {tally.finding.fingerprint}
    while target.fingerprint not in seen:
        seen.add(target.fingerprint)
        onward = tallies.get(target.fingerprint)
        if onward is None or onward.moved_to is None:
            break
        target = onward.moved_to
    return target


def _findings(
    candidates: Sequence[tuple[Finding, bool]],
    tallies: Mapping[str, Tally],
    replays: int,
    target: TargetConfig,
    fail_on: Severity,
) -> tuple[list[Finding], list[tuple[Finding, bool]], list[str], dict[str, Finding]]:
    """The findings kept, every candidate as labelled (with whether it was dropped), the notes, and
    the dropped findings another call's explains (`Explainer`)."""
    kept: list[Finding] = []
    triaged: list[tuple[Finding, bool]] = []
    explained: dict[str, Finding] = {}
    explainer = Explainer(tallies)
    partial = unconfirmed = unreached = weak = noise = 0
    moved = 0
    for finding, _ in sorted(candidates, key=lambda c: c[0].fingerprint):
        tally = tallies[finding.fingerprint]
        labelled, dropped = _labelled(tally, replays)
        if tally.moved_to is not None:
            moved += 1
            triaged.append((labelled, True))
            continue
        other = explainer.by(tally)
        if other is not None:
            explained[finding.fingerprint] = other
            triaged.append((labelled, True))
            continue
        if tally.ambiguous and tally.attempts == 0 and not tally.unreachable and labelled.severity.rank < fail_on.rank:
            # Only ever seen beside other calls (or slow under the collector), and never replayed:
            # what a replay alone would have weighed is all the evidence there is, and it gates nothing.
            weak += 1
            triaged.append((labelled, True))
            continue
        if dropped:
            # Not reported: the notes below count what the report holds, and this one in its own.
            noise += 1
            triaged.append((labelled, True))
            continue
        if tally.unreachable:
            unreached += 1
        elif tally.attempts < replays:
            unconfirmed += tally.attempts == 0
            partial += tally.attempts > 0
        triaged.append((labelled, False))
        kept.append(labelled)
    notes: list[str] = []
    if unconfirmed:
        notes.append(
            f"{unconfirmed} finding(s) could not be replayed within the budget: reported as unconfirmed"
            " (an unconfirmed new finding at or above fail-on fails the gate)"
        )
    if weak:
        notes.append(
            f"{weak} finding(s) below fail-on, seen only beside other calls or slow under the coverage collector,"
            " could not be replayed within the budget: not reported"
        )
    if explained:
        notes.append(
            f"{len(explained)} finding(s) seen only beside other calls showed the same evidence (kind and signature)"
            " as a finding of another call seen alone or reproduced: counted as that call's symptom, not reported"
        )
    if noise:
        notes.append(
            f"{noise} finding(s) seen only beside other calls failed on no replay alone: not reported"
            " (most likely another call's symptom)"
        )
    if moved:
        notes.append(
            f"{moved} crash(es) came from the call before: the server died without the failing call too,"
            " right after answering the one before it, so each is reported as that call's crash"
        )
    if partial:
        notes.append(f"{partial} finding(s) got fewer than {replays} replays within the budget")
    if unreached:
        notes.append(_unreached_note(unreached, replays, target))
    return kept, triaged, notes, explained


def _baseline(
    baseline: Sequence[BaselineTally], start_error: str | None
) -> tuple[frozenset[str], frozenset[str], list[str]]:
    """The baseline entries still failing, those that stay known without a replay that proves a fix,
    and the notes on why."""
    notes: list[str] = []
    refused = [b for b in baseline if b.refused is not None]
    if refused:
        entries, its, stay = _kept(len(refused))
        why = refused[0].refused
        notes.append(f"{entries} not replayed: a call of {its} repro is not selected ({why}); {stay} known")
    unverified = frozenset(b.entry.fingerprint for b in baseline if not b.done and b.refused is None)
    if unverified:
        entries, _, stay = _kept(len(unverified))
        notes.append(f"{entries} not replayed within the budget; {stay} known")
    unobserved = frozenset(b.entry.fingerprint for b in baseline if b.unobserved is not None)
    for why in dict.fromkeys(b.unobserved for b in baseline if b.unobserved is not None):
        alike = [b for b in baseline if b.unobserved == why]
        entries, its, stay = _kept(len(alike))
        notes.append(f"{entries} not replayed: {why.replace('its evidence', f'{its} evidence', 1)}; {stay} known")
    unverified |= unobserved
    unstarted = frozenset(b.entry.fingerprint for b in baseline if b.unstarted)
    if unstarted:
        entries, _, stay = _kept(len(unstarted))
        why = f"a fresh server could not be started ({start_error})"
        notes.append(f"{entries} not replayed because {why}; {stay} known")
    unverified |= unstarted
    redacted = frozenset(b.entry.fingerprint for b in baseline if b.done and not b.failing and b.entry.repro.redacted)
    if redacted:
        entries, its, stay = _kept(len(redacted))
        notes.append(
            f"{entries} replayed from {its} redacted repro and did not fail again (which proves no fix); {stay} known"
        )
        unverified |= redacted
    failing = frozenset(b.entry.fingerprint for b in baseline if b.failing)
    return failing, unverified | {b.entry.fingerprint for b in refused}, notes


def _kept(count: int) -> tuple[str, str, str]:
    """How a note names `count` baseline entries that stay known: the count with its noun and verb,
    the possessive, and the verb of staying ("1 baseline entry was", "its", "it stays")."""
    if count == 1:
        return "1 baseline entry was", "its", "it stays"
    return f"{count} baseline entries were", "their", "they stay"


def _labelled(tally: Tally, replays: int) -> tuple[Finding, bool]:
    """The finding labelled by its replays, and whether it is dropped: only ever seen while other
    calls were in flight and never failing alone, it was most likely another call's symptom. One no
    replay could reach a server for (a crash took down an HTTP server fuzzgate cannot restart) is
    unconfirmed, like one the budget left no time to replay: seen, but never confirmed or dropped."""
    attempts, reproduced = tally.attempts, tally.reproduced
    dropped = tally.ambiguous and attempts > 0 and reproduced == 0
    labelled = replace(
        tally.finding,
        replays=attempts,
        reproduced=reproduced,
        flaky=attempts > 0 and reproduced < attempts,
        unconfirmed=attempts == 0,
    )
    return labelled, dropped


def _unreached_note(count: int, replays: int, target: TargetConfig) -> str:
    if target.launched:
        why = "a fresh server could not be started"
    else:
        why = (
            "the HTTP server could not be reached (fuzzgate restarts only a server it starts:"
            " name the command that serves the URL under [target])"
        )
    return (
        f"{count} finding(s) got fewer than {replays} replays because {why}; one never replayed is reported"
        " as unconfirmed (an unconfirmed new finding at or above fail-on fails the gate)"
    )
