"""Which target and tools a worker fuzzes next: those the store says need effort most.

HypoFuzz's rule, over the statistics every worker wrote for the current environment (the same
fuzzgate, server version and commit: statistics of other code say nothing about this one, while
inputs from every environment are still replayed as seeds):

1. a tool no worker fuzzed yet comes first;
2. then the tool that found something new most per second spent: the most features one cycle
   reached on it (any worker's) divided by the seconds all workers spent on it, so a tool that keeps
   finding new behaviour keeps its turn and a saturated one falls back as effort piles up on it.
   Seconds, not calls: a tool whose every call waits for a timeout (a hang already found) costs
   seconds per call, and counted by calls it looked like the neediest tool of all and took every
   cycle (tried by hand on the example server: 8 calls in a 20 s cycle);
3. then the one whose last new feature is most recent, then the one that got the fewest seconds.

Ties go a different way for each worker (a hash of the worker id and the tool), so workers that
read the same statistics at the same moment spread over equally needy tools. A target this worker
has not fuzzed yet comes before every other: its first cycle fuzzes all its selected tools, which
tells the worker what the target offers.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from fuzzgate.store.shared import Environment, StatsSnapshot


@dataclass(frozen=True, slots=True)
class ToolNeed:
    """What the store says about one tool, summed over the workers of one environment."""

    label: str
    calls: int = 0
    found: int = 0
    """The most features any worker's cycle reached on the tool."""
    last_new: float | None = None
    seconds: float = 0.0
    """The time all workers spent on the tool (its calls, generation included)."""

    def rank(self, worker: str) -> tuple[bool, float, float, float, str]:
        """Smaller needs effort more."""
        # A floor of a millisecond per call: statistics written without seconds still rank.
        spent = max(self.seconds, self.calls * 0.001)
        rate = self.found / spent if spent > 0 else 0.0
        tie = hashlib.sha256(f"{worker}\0{self.label}".encode()).hexdigest()
        return self.calls > 0, -rate, -(self.last_new or 0.0), spent, tie


def same_environment(ours: Environment, theirs: Environment) -> bool:
    """Whether statistics written in `theirs` speak of the code this worker fuzzes. A server this
    worker has not started yet (`ours.server` None) matches any server."""
    if ours.fuzzgate != theirs.fuzzgate or ours.commit != theirs.commit:
        return False
    return ours.server is None or ours.server == theirs.server


def needs(snapshots: Iterable[StatsSnapshot], environment: Environment) -> dict[str, ToolNeed]:
    """Each tool's need, from the latest snapshot of every worker in `environment`."""
    merged: dict[str, ToolNeed] = {}
    for snapshot in snapshots:
        if not same_environment(environment, snapshot.environment):
            continue
        for label, stats in snapshot.tools.items():
            held = merged.get(label, ToolNeed(label))
            last = max((t for t in (held.last_new, stats.last_new) if t is not None), default=None)
            merged[label] = ToolNeed(
                label, held.calls + stats.calls, max(held.found, stats.behaviours), last, held.seconds + stats.seconds
            )
    return merged


@dataclass(frozen=True, slots=True)
class Candidate:
    """A target the worker may fuzz."""

    index: int
    """Its position among the worker's configs."""
    target: str
    tools: Mapping[str, str] | None
    """Label -> name of the tools this worker saw fuzzed there; None before its first cycle."""


@dataclass(frozen=True, slots=True)
class Pick:
    index: int
    target: str
    names: tuple[str, ...] | None
    """The tools (prompts, resources) to fuzz by name; None for every tool the config selects."""
    labels: tuple[str, ...] = ()


def _spread(ranked: Sequence[ToolNeed], tools: int, worker: str) -> list[ToolNeed]:
    """`tools` of the ranked tools: the neediest half for every worker, the rest drawn from the next
    ones in an order of this worker's own. Workers read the same statistics, and without this every
    worker started together fuzzed the same tools cycle after cycle (measured: four workers, one
    list), differing only by seed."""
    if len(ranked) <= tools:
        return list(ranked)
    fixed = max(1, tools // 2)
    window = ranked[fixed : fixed + 2 * tools]
    order = sorted(window, key=lambda need: hashlib.sha256(f"{worker}\0spread\0{need.label}".encode()).digest())
    chosen = {need.label for need in (*ranked[:fixed], *order[: tools - fixed])}
    return [need for need in ranked if need.label in chosen]


def pick(
    candidates: Sequence[Candidate], needs_of: Mapping[str, Mapping[str, ToolNeed]], *, worker: str, tools: int
) -> Pick:
    """The target and at most `tools` of its tools to fuzz next (more when more were never fuzzed)."""
    if not candidates:
        raise ValueError("no target to pick from")
    for candidate in candidates:
        if candidate.tools is None:
            return Pick(candidate.index, candidate.target, None)
    best: tuple[tuple[bool, float, float, float, str], Candidate, list[ToolNeed]] | None = None
    for candidate in candidates:
        assert candidate.tools is not None
        known = needs_of.get(candidate.target, {})
        ranked = sorted(
            (known.get(label, ToolNeed(label)) for label in candidate.tools), key=lambda need: need.rank(worker)
        )
        if not ranked:
            continue
        if best is None or ranked[0].rank(worker) < best[0]:
            best = (ranked[0].rank(worker), candidate, ranked)
    if best is None:
        # No tool fuzzed anywhere yet (every one skipped): try the whole selection again.
        first = candidates[0]
        return Pick(first.index, first.target, None)
    _, chosen, ranked = best
    never = [need for need in ranked if need.calls == 0]
    taken = ranked[: max(tools, len(never))] if never else _spread(ranked, tools, worker)
    assert chosen.tools is not None
    return Pick(
        chosen.index,
        chosen.target,
        tuple(chosen.tools[need.label] for need in taken),
        tuple(need.label for need in taken),
    )
