"""The corpus tools, Fuchsia's verbs: `fuzzgate corpus list | merge | minimize | cleanse`.

- `merge DIR...`: the union of other corpora (shards, machines, an older cache) and the current
  one, each entry measured once on the live server, reduced to a smallest set that keeps every
  feature any of them reaches (greedy set cover: most features not yet kept first, ties to the
  smaller entry, then the key), written with `CorpusStore.replace`.
- `minimize`: each entry, in key order, replaced by a smaller variant
  (`generate.mutate.shrink_candidates`, or one step of its prefix left out) that reaches every
  feature the entry reaches itself, again from the smaller one until no variant does.
- `cleanse`: the same with `generate.mutate.cleanse_candidates`, each part of the input replaced by
  the simplest value that keeps the entry's features.

Each is deterministic (entries and candidates are tried in a fixed order; the first that keeps the
features wins) and bounded by `--budget`: what the budget leaves untried stays as it was. The corpus
stays whole when interrupted: merge writes once at the end (kept entries first, then deletions),
minimize and cleanse write per finished entry (the new one, then the old one deleted). Feedback is
never taken from what an entry says it reached: everything is measured on the live server
(`fuzzgate.engine.measure`), which starts contained like a run's.
"""

from __future__ import annotations

import heapq
import json
import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from fuzzgate.check.secrets import redactor_for
from fuzzgate.cli import interrupt
from fuzzgate.config.model import Config, FeedbackMode
from fuzzgate.config.views import ServerSettings
from fuzzgate.engine.settings import EngineSettings
from fuzzgate.model.commands import subject_label
from fuzzgate.model.corpus import CorpusEntry
from fuzzgate.model.errors import ExitCode, TargetError, UsageError
from fuzzgate.model.files import check_output_directory
from fuzzgate.model.findings import JSONValue, Surface
from fuzzgate.model.outcome import CallOutcome, uniform_error
from fuzzgate.plan.budget import TimeBox, process_start
from fuzzgate.plan.seed import choose_seed
from fuzzgate.store.corpus_store import CorpusLoad, CorpusStore, targets

MAX_TRIES_PER_ENTRY = 500
"""Candidates measured for one entry at most (minimize, cleanse): a bound that does not depend on
the clock, so a large budget gives the same result on a fast machine and a slow one."""

Features = frozenset[str]
Arguments = dict[str, JSONValue]
Candidates = Callable[[Arguments, dict[str, Any]], list[tuple[Arguments, str]]]
"""`shrink_candidates` / `cleanse_candidates`: variants of `arguments` under a tool's input schema,
each with the operation that made it, in the order to try them."""


class Measurer(Protocol):
    """What the tools need of a live server (`fuzzgate.engine.measure.measuring` yields one)."""

    @property
    def note(self) -> str:
        """One line: which feedback signal the server gives and why."""
        ...

    async def features(self, entry: CorpusEntry) -> Features | None:
        """The features the entry's call reaches (its prefix sent first); None if not measurable."""
        ...

    def schema(self, surface: Surface, tool: str) -> dict[str, Any] | None:
        """The input schema of `tool` as the live server lists it; None if it offers no such tool."""
        ...

    def refusal(self, entry: CorpusEntry) -> str | None:
        """Why the selection refuses a call of the entry (include, exclude, the destructive guard);
        None when it may be sent."""
        ...


class Budget(Protocol):
    def remaining(self) -> float: ...


# --- merge ----------------------------------------------------------------------------------------


def cover(measured: Iterable[tuple[CorpusEntry, Features]]) -> list[CorpusEntry]:
    """A smallest set of entries reaching every feature any of `measured` reaches (greedy set cover).

    Picks the entry reaching the most features not yet covered, ties to the smaller `size`, then
    the smaller key; deterministic whatever the input order. Lazy: an entry's gain is recomputed
    only when it reaches the top of the heap, which gives the same picks as recomputing all."""
    items = sorted(measured, key=lambda item: item[0].key)
    heap = [(-len(features), entry.size, entry.key, i) for i, (entry, features) in enumerate(items)]
    heapq.heapify(heap)
    covered: set[str] = set()
    chosen: list[CorpusEntry] = []
    while heap:
        _, size, key, i = heapq.heappop(heap)
        gain = len(items[i][1] - covered)
        if gain == 0:
            continue
        current = (-gain, size, key, i)
        if heap and current > heap[0]:
            heapq.heappush(heap, current)
            continue
        chosen.append(items[i][0])
        covered |= items[i][1]
    return chosen


@dataclass(frozen=True, slots=True)
class MergeResult:
    keep: tuple[CorpusEntry, ...]
    union: int
    """Distinct entries in all the corpora together."""
    measured: int
    unmeasurable: int
    """Entries the server could not measure: kept if the current corpus had them, else left out."""
    refused: tuple[str, ...]
    """Why each entry the selection refuses was not sent (kept if the current corpus had it, else
    left out), in key order."""
    features: int
    budget_ended: bool


async def merge_entries(
    current: Sequence[CorpusEntry], others: Sequence[CorpusEntry], measurer: Measurer, budget: Budget
) -> MergeResult:
    """The entries a merge keeps (see the module docstring). What the budget leaves unmeasured or the
    server cannot measure is kept when the current corpus holds it and left out otherwise: a merge
    never loses an entry it could not judge, nor imports one."""
    union: dict[str, CorpusEntry] = {}
    for entry in (*current, *others):
        union.setdefault(entry.key, entry)
    own = {entry.key for entry in current}
    measured: list[tuple[CorpusEntry, Features]] = []
    unjudged: list[CorpusEntry] = []
    unmeasurable = 0
    refused: list[str] = []
    budget_ended = False
    for key in sorted(union):
        entry = union[key]
        features = None
        if not budget_ended and budget.remaining() <= 0:
            budget_ended = True
        refusal = measurer.refusal(entry)
        if refusal is not None:
            refused.append(f"{key}: {refusal}")
        elif not budget_ended:
            features = await measurer.features(entry)
            unmeasurable += features is None
        if features is None:
            unjudged.append(entry)
        else:
            measured.append((entry, features))
    keep = cover(measured) + [entry for entry in unjudged if entry.key in own]
    reached = frozenset().union(*(features for _, features in measured))
    return MergeResult(
        keep=tuple(sorted(keep, key=lambda e: e.key)),
        union=len(union),
        measured=len(measured),
        unmeasurable=unmeasurable,
        refused=tuple(refused),
        features=len(reached),
        budget_ended=budget_ended,
    )


# --- minimize and cleanse -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Reduced:
    """One entry after minimize or cleanse."""

    old: CorpusEntry
    new: CorpusEntry | None
    """The entry to keep in its place, None when it was left as it is."""
    reason: str
    """What happened, in words: `2 steps`, `no schema: ...`, `could not be measured`, ..."""
    tries: int


def _shortlex(entry: CorpusEntry) -> tuple[int, str]:
    body = [entry.arguments, [step.arguments for step in entry.prefix]]
    return entry.size, json.dumps(body, sort_keys=True, ensure_ascii=True, separators=(",", ":"), default=str)


async def reduce_entry(
    entry: CorpusEntry,
    measurer: Measurer,
    candidates: Candidates,
    budget: Budget,
    *,
    shrink: bool,
) -> Reduced:
    """`entry` reduced step by step: each step takes the first candidate that reaches every feature
    the entry reaches itself, and the next candidates are drawn from it; it ends when none does, after
    `MAX_TRIES_PER_ENTRY` measurements, or when the budget ends. With `shrink`, a candidate must be
    smaller (shorter canonical JSON, or as long and before it in order), and one step of the
    prefix may be left out; otherwise (cleanse) any candidate not tried yet is a step."""
    schema = measurer.schema(entry.surface, entry.tool)
    if schema is None:
        return Reduced(entry, None, f"no schema: the server offers no {subject_label(entry.surface, entry.tool)}", 0)
    refusal = measurer.refusal(entry)
    if refusal is not None:
        return Reduced(entry, None, f"not sent: {refusal}", 0)
    if budget.remaining() <= 0:
        return Reduced(entry, None, "budget ended", 0)
    wanted = await measurer.features(entry)
    if wanted is None:
        return Reduced(entry, None, "could not be measured", 1)
    current, steps, tries = entry, 0, 1
    tried = {entry.identity}
    stopped = ""
    while not stopped:
        found = None
        for candidate in _variants(current, candidates, schema, shrink=shrink):
            if candidate.identity in tried or (shrink and _shortlex(candidate) >= _shortlex(current)):
                continue
            if tries >= MAX_TRIES_PER_ENTRY:
                stopped = f"stopped after {tries} tries"
                break
            if budget.remaining() <= 0:
                stopped = "budget ended"
                break
            tried.add(candidate.identity)
            tries += 1
            features = await measurer.features(candidate)
            if features is not None and wanted <= features:
                found = candidate
                break
        if found is None:
            break
        current, steps = found, steps + 1
    reason = f"{steps} step{'' if steps == 1 else 's'}" + (f", {stopped}" if stopped else "")
    return Reduced(entry, current if current.identity != entry.identity else None, reason, tries)


def _variants(entry: CorpusEntry, candidates: Candidates, schema: dict[str, Any], *, shrink: bool) -> list[CorpusEntry]:
    found: list[CorpusEntry] = []
    if shrink:
        # A sequence without one of its earlier calls, first: the biggest step there is.
        found += [replace(entry, prefix=entry.prefix[:i] + entry.prefix[i + 1 :]) for i in range(len(entry.prefix))]
    found += [replace(entry, arguments=arguments) for arguments, _ in candidates(dict(entry.arguments), schema)]
    return found


async def reduce_entries(
    entries: Sequence[CorpusEntry],
    measurer: Measurer,
    candidates: Candidates,
    budget: Budget,
    *,
    shrink: bool,
    done: Callable[[Reduced], None],
) -> None:
    """Every entry reduced in key order; `done` is called after each (to write it) before the next."""
    for entry in sorted(entries, key=lambda e: e.key):
        done(await reduce_entry(entry, measurer, candidates, budget, shrink=shrink))


# --- the commands ---------------------------------------------------------------------------------


def list_corpus(console: Console, *, root: Path, target: str | None) -> int:
    """`fuzzgate corpus list`: every target under `root` (or only `target`), tool by tool."""
    stores = [CorpusStore(root, target)] if target is not None else [CorpusStore(root, t) for t in targets(root)]
    if not stores:
        console.print(escape(f"the corpus at {root} is empty"), soft_wrap=True)
        return ExitCode.OK
    for store in stores:
        _print_target(console, store, store.load())
    return ExitCode.OK


def _print_target(console: Console, store: CorpusStore, load: CorpusLoad) -> None:
    total = sum(entry.size for entry in load.entries)
    counted = _count(len(load.entries), "entry", "entries")
    console.print(escape(f"{store.target}: {counted}, {total} bytes of input ({store.path})"), soft_wrap=True)
    if load.cold:
        console.print(escape(f"  {load.cold}"), soft_wrap=True)
    for line in load.skipped:
        console.print(f"  [yellow]skipped[/] {escape(line)}", soft_wrap=True)
    if not load.entries:
        return
    groups: dict[tuple[Surface, str], list[CorpusEntry]] = {}
    for entry in load.entries:
        groups.setdefault((entry.surface, entry.tool), []).append(entry)
    table = Table()
    for column in ("tool, prompt or resource", "entries", "input bytes", "signals", "fuzzgate", "servers"):
        table.add_column(column, justify="right" if column in ("entries", "input bytes") else "left")
    order = list(Surface)
    for (surface, tool), group in sorted(groups.items(), key=lambda item: (order.index(item[0][0]), item[0][1])):
        signals = Counter(entry.signal for entry in group)
        table.add_row(
            escape(subject_label(surface, tool)),
            str(len(group)),
            str(sum(entry.size for entry in group)),
            escape(", ".join(f"{signal} {n}" for signal, n in sorted(signals.items()))),
            escape(_seen(group, "fuzzgate")),
            escape(_seen(group, "server")),
        )
    console.print(table)


def _seen(entries: Sequence[CorpusEntry], key: str) -> str:
    return ", ".join(sorted({entry.environment[key] for entry in entries if key in entry.environment})) or "-"


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def store_of(config: Config) -> CorpusStore:
    """The configured target's corpus: `<corpus>/<slug of the target's display name>`, the name its
    reports carry (a run keeps its entries there too)."""
    return CorpusStore(config.corpus, config.target.display_name)


def _checked(config: Config) -> None:
    if config.target.feedback is FeedbackMode.OFF:
        raise UsageError(
            "feedback is off for this target: the corpus tools measure feedback on the live server",
            hint="pass --feedback behaviour (or auto), or set [target] feedback",
        )


def _start(config: Config, console: Console, seed_flag: str | None) -> tuple[int, TimeBox]:
    _checked(config)
    box = TimeBox(config.budget_s, start=process_start(), starts_servers=config.target.command is not None)
    choice = choose_seed(seed_flag, config.seed, os.environ, Path.cwd())
    if choice.warning:
        console.print(f"[yellow]warning:[/] {escape(choice.warning)}", soft_wrap=True)
    return choice.seed, box


def sources(dirs: Sequence[Path], target: str) -> list[tuple[Path, CorpusLoad]]:
    """The corpus of `target` in each of `dirs`: a corpus root holding target directories, or a
    target directory itself (one holding entry files). Raises `UsageError` for a missing one."""
    found = []
    for directory in dirs:
        if not directory.is_dir():
            raise UsageError(f"{directory}: no such directory", hint="name corpus directories to merge")
        if any(directory.glob("*.json")):
            store = CorpusStore.at(directory)
        else:
            store = CorpusStore(directory, target)
            if not store.path.is_dir():
                there = ", ".join(targets(directory)) or "none"
                found.append(
                    (directory, CorpusLoad((), (), f"no corpus of {target} in {directory} (targets: {there})"))
                )
                continue
        found.append((directory, store.load()))
    return found


def merge_command(config: Config, console: Console, dirs: Sequence[Path], *, seed_flag: str | None) -> int:
    """`fuzzgate corpus merge DIR...`."""
    # Here, not at the top: `corpus list` starts no server and need not import what starts one.
    from fuzzgate.engine.measure import measuring

    others_loads = sources(dirs, config.target.display_name)
    seed, box = _start(config, console, seed_flag)
    store = store_of(config)
    # Before a server starts: measuring is the slow part, and its result must have a place to go.
    check_output_directory(store.path, what="corpus directory (--corpus)")
    own = store.load()
    loads = [(store.path, own), *others_loads]
    for directory, load in loads:
        for line in load.skipped:
            console.print(f"[yellow]skipped[/] {escape(line)}", soft_wrap=True)
        if load.cold and directory != store.path:
            console.print(escape(load.cold), soft_wrap=True)
    others = [entry for _, load in loads[1:] for entry in load.entries]

    answers: list[tuple[str, CallOutcome]] = []

    async def measure() -> MergeResult:
        async with measuring(EngineSettings.of(config), seed, box) as measurer:
            console.print(escape(f"feedback: {measurer.note}"), soft_wrap=True)
            try:
                return await merge_entries(own.entries, others, measurer, box)
            finally:
                answers.extend(measurer.answers)

    result = interrupt.run(measure)
    degraded = uniform_error((subject, [outcome]) for subject, outcome in answers)
    if degraded is not None:
        shown = redactor_for(ServerSettings.of(config), {}).text(degraded)
        raise TargetError(
            f"every entry measured answered the same error, {shown}: the server "
            f"looks degraded (not configured, or failing at start-up); {store.path} unchanged",
            hint="fix the server's configuration or environment, then merge again",
        )
    for line in result.refused:
        console.print(f"[yellow]not sent[/] {escape(line)}", soft_wrap=True)
    with interrupt.deferred():
        written, deleted = store.replace(result.keep)
    console.print(
        escape(
            f"merged {result.union} entries from {len(loads)} corpora into {len(result.keep)} "
            f"({result.features} features) in {store.path}: {written} written, {deleted} deleted"
        ),
        soft_wrap=True,
    )
    if result.unmeasurable:
        console.print(
            f"{result.unmeasurable} could not be measured: kept if they were in the corpus, else left out",
            soft_wrap=True,
        )
    if result.budget_ended:
        console.print(
            f"the budget ended after measuring {result.measured + result.unmeasurable} of {result.union}: "
            "the rest were kept if they were in the corpus, else left out (pass a larger --budget)",
            soft_wrap=True,
        )
    return ExitCode.OK


def reduce_command(config: Config, console: Console, action: str, *, seed_flag: str | None) -> int:
    """`fuzzgate corpus minimize` (shrink) and `fuzzgate corpus cleanse`."""
    from fuzzgate.engine.measure import measuring
    from fuzzgate.generate.mutate import cleanse_candidates, shrink_candidates

    shrink = action == "minimize"
    candidates: Candidates = shrink_candidates if shrink else cleanse_candidates
    seed, box = _start(config, console, seed_flag)
    store = store_of(config)
    load = store.load()
    for line in load.skipped:
        console.print(f"[yellow]skipped[/] {escape(line)}", soft_wrap=True)
    if not load.entries:
        console.print(escape(f"nothing to {action}: {load.cold}"), soft_wrap=True)
        return ExitCode.OK
    check_output_directory(store.path, what="corpus directory (--corpus)")
    finished: list[Reduced] = []

    def done(result: Reduced) -> None:
        if result.new is not None:
            store.move(result.old, result.new)
        finished.append(result)
        what = f"{result.old.key} -> {result.new.key}" if result.new is not None else f"{result.old.key} unchanged"
        console.print(escape(f"{what} ({result.reason}, {result.tries} measured)"), soft_wrap=True)

    async def work() -> None:
        async with measuring(EngineSettings.of(config), seed, box) as measurer:
            console.print(escape(f"feedback: {measurer.note}"), soft_wrap=True)
            await reduce_entries(load.entries, measurer, candidates, box, shrink=shrink, done=done)

    past = "minimized" if shrink else "cleansed"
    try:
        interrupt.run(work)
    except interrupt.Interrupted:
        console.print(
            escape(f"{_summary(finished, past)}; interrupted: the other entries are unchanged"), soft_wrap=True
        )
        raise
    console.print(escape(f"{_summary(finished, past)} in {store.path}"), soft_wrap=True)
    return ExitCode.OK


def _summary(finished: Sequence[Reduced], past: str) -> str:
    changed = [r for r in finished if r.new is not None]
    saved = sum(r.old.size - r.new.size for r in changed if r.new is not None)
    return f"{past} {len(changed)} of {_count(len(finished), 'entry', 'entries')} ({saved} bytes saved)"
