"""The corpus a run grows: replay what earlier runs kept, keep what reaches something new, shrink it,
and mutate it (JQF/Zest's loop, with HypoFuzz's rule that feedback from other code is re-measured).

One `LiveCorpus` per run, owned by the engine, which asks it for cases before the scheduler's:

1. **Seeds.** The entries the store loaded are replayed first, in key order, each with the calls of
   its prefix before it, until they are done or `REPLAY_SHARE` of the fuzzing time is spent. A seed
   whose call reaches a feature nothing before it reached joins the live corpus; what the entry
   says it reached is never read. Seeds of tools this run does not fuzz (excluded, blocked by the
   destructive guard) are not sent.
2. **Keeping.** A call that reaches a new feature becomes an entry (with its sequence's earlier
   steps as its prefix). It is then shrunk (`SHRINK_TRIES` smaller variants from
   `generate.mutate.shrink_candidates`, each kept when it reaches every feature the entry was first
   to reach), every other turn, and only entries larger than `SMALL`.
3. **Mutation.** Once a tool has entries, `MUTATE_SHARE` of its scheduled cases (after its first
   `FRESH_FIRST`) are preceded by a structured mutation of one of them (the generated case still
   goes out next) (`generate.mutate.mutate`: a field
   replaced with the freshly generated case's or a dictionary value, numbers and strings nudged to
   boundaries and mined constants, a field spliced from another entry, arrays grown or shrunk), or,
   one time in `EXTEND_EVERY`, the fresh case sent after another tool's entry (a sequence extended by
   a step). Entries are picked by energy: an entry whose mutants found something recently is picked
   more, one whose mutants find nothing less and less (AFLFast's power schedule, simplified). A
   mutant that repeats a request the tool already got in the server's current state is not sent, and
   halves the tool's mutation share until one of its mutants is sent (`MAX_HALVINGS`).

Everything is decided from the seed, the tool, the case index and what replies showed, never from
timing (except where the replay share ends): same seed, corpus and server behaviour, same requests.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from fuzzgate.generate.cases import Case
from fuzzgate.generate.dictionary import Dictionary
from fuzzgate.generate.mutate import mutate, shrink_candidates
from fuzzgate.learn.features import Observed, files_of
from fuzzgate.model.corpus import CorpusEntry
from fuzzgate.model.findings import Step, Surface
from fuzzgate.model.outcome import CallOutcome, OutcomeStatus
from fuzzgate.plan.selection import ToolPlan
from fuzzgate.triage.sequence import bindings, rebind

REPLAY_SHARE = 0.25
"""The most of the fuzzing time replaying the stored corpus may take."""
MUTATE_SHARE = 0.5
"""The share of a tool's scheduled cases that mutate one of its entries once it has some."""
MAX_HALVINGS = 6
"""A tool whose mutants keep repeating requests it already got has its share halved per repeat in a
row, down to 1/64 of `MUTATE_SHARE`: on a tool with few inputs (one small integer) nine mutants in
ten were such repeats, each costing a mutation and a validation and sending nothing."""
FRESH_FIRST = 4
"""A tool's first cases are always its generator's (examples, boundaries): they are the cheapest
new behaviour there is."""
EXTEND_EVERY = 8
SHRINK_TRIES = 3
"""Smaller variants tried per kept entry during the run (`fuzzgate corpus minimize` tries them all)."""
SMALL = 48
"""An entry this small (its canonical JSON, in characters) is not shrunk during the run: little to
gain for the calls it would cost."""
MAX_ENERGY = 16.0
MIN_ENERGY = 0.25
NEW_ENERGY = 4.0
MAX_PREFIX = 4
"""Steps kept before an entry's call: a longer sequence is more likely to hold steps that matter not."""
MAX_LIVE_PER_TOOL = 256

_SKIPPED_ORIGINS = ("probe:", "cost:")
"""Scope, injection and cost probes are generated again every run, placed in a workspace that
changes, or cost a hang: never corpus entries."""
_UNKEPT = (
    OutcomeStatus.CLOSED,
    OutcomeStatus.TIMEOUT,
    OutcomeStatus.ABORTED,
    OutcomeStatus.UNSENDABLE,
    OutcomeStatus.CLIENT_FAILED,
)

ToolKey = tuple[Surface, str]


def _seconds(outcome: CallOutcome) -> float:
    """A call's duration as an entry records it: milliseconds are all a replay decision needs."""
    return round(outcome.duration_s, 3)


def _key(plan: ToolPlan) -> ToolKey:
    return (plan.info.surface, plan.info.name)


def _digest(seed: int, *parts: object) -> bytes:
    return hashlib.sha256("\0".join(map(str, (seed, *parts))).encode()).digest()


def _rng(seed: int, *parts: object) -> random.Random:
    return random.Random(int.from_bytes(_digest(seed, *parts)[:8], "big"))


def _unit(seed: int, *parts: object) -> float:
    """One draw in [0, 1) from the seed and `parts`, as `_rng(...).random()` would be but without
    seeding a generator (asked for every case a tool with corpus entries draws)."""
    return (int.from_bytes(_digest(seed, *parts)[:7], "big") >> 3) / (1 << 53)


@dataclass(slots=True, eq=False)
class _Live:
    entry: CorpusEntry
    unique: frozenset[str]
    """The features it was first to reach: a smaller variant must reach them all."""
    energy: float = NEW_ENERGY
    new: bool = True
    """Kept by this run (to be saved), not replayed from the store."""
    shrinks_left: int = SHRINK_TRIES


@dataclass(slots=True, eq=False)
class _Pending:
    """Calls to send one after the other on the same server: a seed with its prefix, a mutant
    extending another entry's sequence, a shrink candidate. Only the last is judged for the corpus."""

    kind: str
    """`seed`, `extend` or `shrink`."""
    steps: deque[tuple[ToolPlan, Step]]
    final: Case
    plan: ToolPlan
    parent: _Live | None = None
    seed: CorpusEntry | None = None
    sent: list[Step] = field(default_factory=list)
    recorded: list[Step] = field(default_factory=list)
    """The prefix steps as the entry recorded them (their `produced` values are what to rebind)."""
    busy: Case | None = None


@dataclass(frozen=True, slots=True)
class Seeds:
    """What the store handed the run: its entries for this target, or why there are none."""

    entries: tuple[CorpusEntry, ...] = ()
    cold: str | None = None
    skipped: tuple[str, ...] = ()
    path: str | None = None


@dataclass(frozen=True, slots=True)
class CorpusStats:
    loaded: int = 0
    replayed: int = 0
    kept: int = 0
    """Seeds whose replay reached something new."""
    skipped: int = 0
    """Seeds not sent: their tool is not fuzzed in this run, or the replay share ran out."""
    added: int = 0
    shrunk: int = 0
    mutants: int = 0
    mutant_finds: int = 0
    replay_s: float = 0.0


class LiveCorpus:
    def __init__(
        self,
        plans: Sequence[ToolPlan],
        seeds: Sequence[CorpusEntry],
        *,
        seed: int,
        signal: str,
        environment: Mapping[str, str],
        dictionary: Dictionary,
    ) -> None:
        self._plans = {_key(plan): plan for plan in plans}
        self._seed = seed
        self._signal = signal
        self._environment = dict(environment)
        self._dictionary = dictionary
        self._live: dict[ToolKey, list[_Live]] = {}
        self._order: list[_Live] = []
        self._queue: deque[_Pending] = deque()
        self._seeds: deque[CorpusEntry] = deque(sorted(seeds, key=lambda e: e.key))
        self._pending: _Pending | None = None
        self._turn = 0
        self._mutated_at: dict[ToolKey, int] = {}
        """The case index a tool's last mutant went before: that case itself goes next."""
        self._parents: dict[int, tuple[Case, _Live]] = {}
        """The entry each mutant in flight came from (by the case's identity)."""
        self._repeats: dict[ToolKey, int] = {}
        """A tool's mutants in a row that were not sent (`unsent`): each halves its mutation share."""
        self._stats = CorpusStats(loaded=len(seeds))
        self.replaying = bool(self._seeds)

    # --- what to send ------------------------------------------------------------------------------

    def next_step(self, replay_left_s: float) -> tuple[ToolPlan, Case] | None:
        """The next call of a seed, a shrink or an extended sequence; None when none waits (or the
        one under way waits for its reply). `replay_left_s` is what is left of the replay share: a
        seed whose call took longer when it was kept waits for a run with the time (a 10 s
        operation replayed in a 20 s run's 4 s share took most of its fuzzing)."""
        if self._pending is not None:
            if self._pending.busy is not None:
                return None
            return self._advance(self._pending)
        if self._seeds and replay_left_s <= 0:
            self._stats = replace(self._stats, skipped=self._stats.skipped + len(self._seeds))
            self._seeds.clear()
        while self._seeds:
            entry = self._seeds.popleft()
            pending = None if (entry.duration_s or 0.0) > replay_left_s else self._seed_pending(entry)
            if pending is not None:
                self._pending = pending
                return self._advance(pending)
            self._stats = replace(self._stats, skipped=self._stats.skipped + 1)
        self.replaying = False
        if self._queue:
            # Shrinks and extended sequences take every other turn: the generator's cases keep
            # going out meanwhile (early in a run nearly every call is new, and kept).
            self._turn += 1
            if self._turn % 2 == 0:
                return None
            self._pending = self._queue.popleft()
            return self._advance(self._pending)
        return None

    def _advance(self, pending: _Pending) -> tuple[ToolPlan, Case] | None:
        if pending.steps:
            plan, step = pending.steps.popleft()
            arguments = self._rebound(pending, step.arguments)
            origin = f"corpus-prefix:{pending.kind}"
            case = Case(index=0, arguments=arguments, schema_valid=step.schema_valid, origin=origin)
            pending.busy = case
            return plan, case
        final = replace(pending.final, arguments=self._rebound(pending, pending.final.arguments))
        pending.final = final
        pending.busy = final
        return pending.plan, final

    def _rebound(self, pending: _Pending, arguments: dict[str, Any]) -> dict[str, Any]:
        """`arguments` with the ids the recorded prefix got replaced by those this server handed out."""
        result: dict[str, Any] = rebind(arguments, bindings(pending.recorded, pending.sent))
        return result

    def _seed_pending(self, entry: CorpusEntry) -> _Pending | None:
        plan = self._plans.get((entry.surface, entry.tool))
        if plan is None or plan.skip_reason is not None:
            return None
        steps: deque[tuple[ToolPlan, Step]] = deque()
        for step in entry.prefix:
            before = self._plans.get((step.surface, step.tool))
            if before is None:
                return None
            steps.append((before, step))
        final = Case(index=0, arguments=entry.arguments, schema_valid=True, origin=f"corpus:{entry.key}")
        return _Pending("seed", steps, final, plan, seed=entry, recorded=list(entry.prefix))

    def wants_mutant(self, plan: ToolPlan, case: Case) -> bool:
        """Whether a mutant of one of the tool's entries goes before the scheduled `case` (which
        the engine then hands out again: mutants come on top of the generator's cases, never
        instead of them, so its boundaries and examples all still go out)."""
        if case.index < FRESH_FIRST or case.origin.startswith(_SKIPPED_ORIGINS):
            return False
        key = _key(plan)
        if not self._live.get(key) or self._mutated_at.get(key) == case.index:
            return False
        draw = _unit(self._seed, "mutate?", plan.info.surface.value, plan.info.name, case.index)
        wanted = draw < MUTATE_SHARE / (1 << min(self._repeats.get(key, 0), MAX_HALVINGS))
        if wanted:
            self._mutated_at[key] = case.index
        return wanted

    def mutant(self, plan: ToolPlan, case: Case) -> Case | None:
        """A mutant of one of the tool's entries (`case` is the fresh case it may take values
        from), or `case` itself when no mutation applies. An extended sequence (`case` sent after
        another tool's entry) is queued instead and None returned: its steps come from `next_step`."""
        live = self._live.get(_key(plan)) or []
        if not live:
            return case
        rng = _rng(self._seed, "mutant", plan.info.surface.value, plan.info.name, case.index)
        parent = _pick(live, rng)
        others = [item for k, items in self._live.items() if k != _key(plan) for item in items]
        if others and rng.randrange(EXTEND_EVERY) == 0 and self._pending is None:
            before = _pick(others, rng)
            steps: deque[tuple[ToolPlan, Step]] = deque()
            for step in (*before.entry.prefix, _as_step(before.entry))[-MAX_PREFIX:]:
                owner = self._plans.get((step.surface, step.tool))
                if owner is None:
                    return case
                steps.append((owner, step))
            final = replace(case, origin=f"mutate:extend:{before.entry.tool}")
            recorded = [step for _, step in steps]
            self._queue.append(_Pending("extend", steps, final, plan, parent=before, recorded=recorded))
            return None
        sibling = _pick([item for item in live if item is not parent], rng) if len(live) > 1 else None
        dictionary = self._dictionary
        schema = plan.info.input_schema

        def offer(arguments: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
            return dictionary.offer(schema, arguments, rng.randrange(1 << 30), plan.info.name)

        self._parents[id(case)] = (case, parent)
        made = mutate(
            parent.entry.arguments,
            schema,
            rng,
            fresh=case.arguments,
            other=sibling.entry.arguments if sibling is not None else None,
            constants=self._dictionary.constants(),
            dictionary=offer,
        )
        self._parents.pop(id(case), None)
        if made is None:
            return case
        arguments, origin = made
        self._stats = replace(self._stats, mutants=self._stats.mutants + 1)
        mutated = replace(case, arguments=arguments, origin=origin)
        self._parents[id(mutated)] = (mutated, parent)
        return mutated

    # --- what came back ----------------------------------------------------------------------------

    def after_call(
        self, plan: ToolPlan, case: Case, outcome: CallOutcome, observed: Observed, step: Step, prefix: Sequence[Step]
    ) -> None:
        """Learn from a call: keep it when it reached something new; credit the entry it came from.
        `step` is the call as sent (with the values its reply brought); `prefix` the steps of the
        sequence it belongs to (the feed's), for a call that is a sequence step."""
        pending = self._pending
        if pending is not None and pending.busy is case:
            pending.busy = None
            if case is not pending.final:
                pending.sent.append(step)
                if outcome.status in _UNKEPT:
                    self._pending = None
                return
            self._pending = None
            self._finished(pending, plan, case, outcome, observed, step)
            return
        parent = self._parent_of(plan, case)
        if parent is not None:
            self._repeats.pop(_key(plan), None)
            self._credit(parent, bool(observed.new))
        if case.origin.startswith(_SKIPPED_ORIGINS) or outcome.status in _UNKEPT:
            return
        if observed.new:
            self._keep(plan, case, observed, tuple(prefix)[-MAX_PREFIX:], outcome)

    def _finished(
        self, pending: _Pending, plan: ToolPlan, case: Case, outcome: CallOutcome, observed: Observed, step: Step
    ) -> None:
        if pending.kind == "seed":
            self._stats = replace(self._stats, replayed=self._stats.replayed + 1)
            if observed.new and pending.seed is not None and outcome.status not in _UNKEPT:
                reseeded = replace(
                    pending.seed,
                    prefix=tuple(pending.sent),
                    files=files_of(observed.features),
                    duration_s=_seconds(outcome),
                )
                live = _Live(reseeded, observed.new, new=False)
                self._add(plan, live)
                self._stats = replace(self._stats, kept=self._stats.kept + 1)
            return
        if pending.kind == "shrink":
            parent = pending.parent
            if parent is None or outcome.status in _UNKEPT or not parent.unique <= observed.features:
                return
            if len(_dumps(case.arguments)) < len(_dumps(parent.entry.arguments)):
                parent.entry = replace(parent.entry, arguments=case.arguments)
                parent.new = True
                self._stats = replace(self._stats, shrunk=self._stats.shrunk + 1)
                self._queue_shrinks(plan, parent)
            return
        # An extended sequence: kept with its prefix when it reached something new.
        if pending.parent is not None:
            self._credit(pending.parent, bool(observed.new))
        if observed.new and outcome.status not in _UNKEPT:
            self._keep(plan, case, observed, tuple(pending.sent)[-MAX_PREFIX:], outcome)

    def _parent_of(self, plan: ToolPlan, case: Case) -> _Live | None:
        held = self._parents.pop(id(case), None)
        return held[1] if held is not None and held[0] is case else None

    def _credit(self, parent: _Live, found: bool) -> None:
        if found:
            parent.energy = min(MAX_ENERGY, parent.energy * 2 + 1)
            self._stats = replace(self._stats, mutant_finds=self._stats.mutant_finds + 1)
        else:
            parent.energy = max(MIN_ENERGY, parent.energy * 0.95)

    def _keep(
        self, plan: ToolPlan, case: Case, observed: Observed, prefix: tuple[Step, ...], outcome: CallOutcome
    ) -> None:
        entry = CorpusEntry(
            tool=plan.info.name,
            arguments=case.arguments,
            surface=plan.info.surface,
            prefix=tuple(replace(step, produced=step.produced) for step in prefix),
            origin=case.origin,
            signal=self._signal,
            features=len(observed.new),
            environment=self._environment,
            files=files_of(observed.features),
            duration_s=_seconds(outcome),
        )
        live = _Live(entry, observed.new)
        if not self._add(plan, live):
            return
        self._stats = replace(self._stats, added=self._stats.added + 1)
        if not prefix:
            self._queue_shrinks(plan, live)

    def _add(self, plan: ToolPlan, live: _Live) -> bool:
        items = self._live.setdefault(_key(plan), [])
        if len(items) >= MAX_LIVE_PER_TOOL or any(item.entry.key == live.entry.key for item in items):
            return False
        items.append(live)
        self._order.append(live)
        return True

    def _queue_shrinks(self, plan: ToolPlan, live: _Live) -> None:
        if live.shrinks_left <= 0 or live.entry.prefix or live.entry.size <= SMALL:
            return
        for arguments, op in shrink_candidates(live.entry.arguments, plan.info.input_schema):
            if live.shrinks_left <= 0:
                break
            live.shrinks_left -= 1
            case = Case(index=0, arguments=arguments, schema_valid=True, origin=f"shrink:{op}")
            self._queue.append(_Pending("shrink", deque(), case, plan, parent=live))
            # One candidate at a time: the next comes from the smaller entry, if this one is kept.
            break

    def validated(self, case: Case, valid: bool) -> Case:
        """`case` (handed out by `next_step` or `mutant`) with its schema validity set: the case to
        send, which `after_call` will recognize."""
        if case.schema_valid is valid:
            return case
        checked = replace(case, schema_valid=valid)
        pending = self._pending
        if pending is not None and pending.busy is case:
            pending.busy = checked
            if pending.final is case:
                pending.final = checked
        held = self._parents.pop(id(case), None)
        if held is not None and held[0] is case:
            self._parents[id(checked)] = (checked, held[1])
        return checked

    def holds(self, case: Case) -> bool:
        """Whether `case` is a mutant `mutant` handed out that has not been sent yet."""
        held = self._parents.get(id(case))
        return held is not None and held[0] is case

    def withdraw(self, case: Case) -> None:
        """`case`, a mutant `mutant` handed out, is taken back unsent: its entry is forgotten, and
        nothing is counted against its tool (it was no repeat)."""
        if self.holds(case):
            del self._parents[id(case)]

    def unsent(self, plan: ToolPlan, case: Case) -> None:
        """`case`, a mutant `mutant` handed out, will not be sent: a request the tool already got
        while the server's state stayed the same, or a value that crashed the server before. Its
        entry is forgotten, and the tool's mutation share halves until one of its mutants is sent."""
        self.withdraw(case)
        key = _key(plan)
        self._repeats[key] = self._repeats.get(key, 0) + 1

    def dropped(self, case: Case) -> None:
        """`case`, a step `next_step` handed out, will not be sent: the sequence it belongs to ends."""
        if self._pending is not None and self._pending.busy is case:
            self._pending = None

    def repeated(self, case: Case) -> None:
        """`case`, a step `next_step` handed out, is a request the tool already got while the
        server's state stayed the same: not sent, as if it had been; a repeated last step ends its
        sequence."""
        pending = self._pending
        if pending is None or pending.busy is not case:
            return
        pending.busy = None
        if case is pending.final:
            self._pending = None
            if pending.kind == "seed":
                self._stats = replace(self._stats, replayed=self._stats.replayed + 1)

    def restarted(self) -> None:
        """The server was restarted: a sequence under way lost its state."""
        if self._pending is not None and self._pending.kind != "shrink":
            self._pending = None

    # --- results -------------------------------------------------------------------------------------

    @property
    def stats(self) -> CorpusStats:
        return self._stats

    def size(self) -> int:
        return len(self._order)

    def added(self) -> tuple[CorpusEntry, ...]:
        """The entries this run kept (shrunk as far as it got), in the order it kept them."""
        return tuple(live.entry for live in self._order if live.new)

    def note_replay(self, seconds: float) -> None:
        self._stats = replace(self._stats, replay_s=seconds)


def _as_step(entry: CorpusEntry) -> Step:
    return Step(entry.tool, entry.arguments, True, entry.surface)


def _pick(items: Sequence[_Live], rng: random.Random) -> _Live:
    weights = [item.energy for item in items]
    return rng.choices(list(items), weights=weights, k=1)[0]


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=True, default=str)
