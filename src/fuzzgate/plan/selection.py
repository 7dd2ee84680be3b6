"""Which tools a run fuzzes, blocks and skips, and the fair share of the time budget each gets.

Deciding costs nothing: `select` only filters names and annotations (and, under `--shard I/N`,
keeps the tools whose stable hash falls in share I: `plan.shards`). A tool's case generator is
built on first use (`ToolPlan.prepare`, off the event loop, under a deadline), so a server with
hundreds of tools starts being fuzzed at once and a schema too costly to generate for is skipped
with its reason instead of stalling the run.
"""

from __future__ import annotations

import fnmatch
import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from fuzzgate.config.model import Config, GenerationMode, Shard
from fuzzgate.generate import CaseGenerator, UnsupportedSchema
from fuzzgate.generate._worker import GenerationAbandoned, GenerationError
from fuzzgate.generate.cases import Case
from fuzzgate.generate.cost import cost_probes
from fuzzgate.generate.hints import enrich
from fuzzgate.generate.probes import PROBES_AFTER, ProbeCase, ProbeSlots, pace, ride
from fuzzgate.model.commands import subject_label
from fuzzgate.model.errors import UsageError
from fuzzgate.model.findings import Surface
from fuzzgate.plan.safety import DestructiveGuard, looks_read_only
from fuzzgate.plan.shards import in_shard, shard_reason
from fuzzgate.record.results import Status, SurfaceEntry
from fuzzgate.target.discover import Inventory, ToolInfo

NOT_CONTAINED = "no sandbox was started for it"
"""Why the sandbox does not hold, until whoever contains the servers says it does."""
FAIR_SLACK_S = 1.0
FAIR_SLACK_SHARE = 0.1
"""Tools whose charged time is within this much of the least (seconds, or this share of it) are
even: among them the next case goes to the one that had fewest, so the order of tools does not
hinge on a millisecond's jitter (the dictionary and sequences make a tool's requests depend on the
others' replies)."""
STALE_CALLS = 50
STALE_WEIGHT = 3.0
"""A tool whose last `STALE_CALLS` calls showed nothing it had not shown before is charged its time
this many times over: tools still finding new behaviour get more of the budget, none is starved."""


@dataclass(slots=True)
class ToolPlan:
    info: ToolInfo
    make_generator: Callable[[], CaseGenerator]
    next_case: int = 0
    """The next case index to hand out."""
    calls: int = 0
    """Cases whose call finished (a call the deadline cut off is not one; nor is a case the tool
    was skipped at): what the report counts, so `--cases` with it sends at least the same requests."""
    corpus_calls: int = 0
    """Calls of its corpus entries (a seed's replay, its prefix, a shrink candidate) that reached the
    server, not counted in `calls`: a resource read once when its entry was replayed is tested, and
    the same request is not sent again while the server's state is unchanged."""
    used_s: float = 0.0
    generator: CaseGenerator | None = None
    probe_source: Callable[[ToolInfo, dict[str, Any]], list[ProbeCase]] | None = None
    """Builds the tool's probes, the fields each sets over the base `{}` (`fuzzgate.generate.probes`);
    None: none of those (cost probes, `fuzzgate.generate.cost`, go in any case)."""
    probes: list[ProbeCase] | None = None
    """The tool's probes, planned once with its generator: cost probes, then the containment ones."""
    max_cases: int | None = None
    """The most cases it ever gets (a resource without arguments: 1); None: as many as time allows."""
    skip_reason: str | None = None
    """Set when the generator could not be built or failed: the tool gets no more cases."""
    unchanged_calls: int = 0
    """Calls in a row whose behaviour the tool had shown before (`Scheduler.behaved`)."""
    weight: float = 1.0
    """How much of the fuzzing time it gets relative to the others (`fuzzgate.plan.focus`): the
    scheduler divides the time it charges the tool by it."""
    accepted: dict[str, Any] | None = None
    """The arguments of the tool's last call it accepted (an OK reply to a schema-valid case that
    was no probe): the base its probes ride on, so the other fields get the server as far as the
    probed one. Before there is one, probes ride on the tool's first case."""
    calls_s: float = 0.0
    """The time its calls took, generation and restarts not counted: what paces its probes."""
    probes_sent: set[str] = field(default_factory=set)
    """The origins of the probes that reached the server."""
    expected: float | None = None
    """The cases the tool can expect in all, as the scheduler estimated when it paced the probes."""
    paced: bool = False
    _slots: ProbeSlots | None = None
    note: str | None = None
    """Why a tool the destructive guard blocks is fuzzed all the same (`guarded_in_sandbox`)."""
    _building: threading.Lock = field(default_factory=threading.Lock)
    _slotting: threading.Lock = field(default_factory=threading.Lock)
    _on_top: bool = False

    def case(self, index: int) -> Case | None:
        """Case `index`, building the generator first if needed; None once the tool is skipped.
        Blocking (it may wait on the generation worker): call it from a thread."""
        try:
            with self._building:
                if self.skip_reason is not None:
                    return None
                if self.generator is None:
                    self.generator = self.make_generator()
                    self.probes = self._probes()
                    self._slots = ProbeSlots(len(self.probes))
            generator, probes = self.generator, self.probes or []
            is_probe, position = self._slot(index)
            if is_probe:
                probe = probes[position]
                base = self.accepted if self.accepted is not None else generator.case(0).arguments
                arguments = ride(probe, base)
                valid = generator.is_valid(arguments)
                return Case(index=index, arguments=arguments, schema_valid=valid, origin=probe.origin)
            return replace(generator.case(position), index=index)
        except UnsupportedSchema as exc:
            self.skip_reason = f"input schema not supported: {exc}"
        except GenerationAbandoned:
            pass
        except GenerationError as exc:
            # The schema came from the server; whatever it does to the generator skips this tool
            # (with the reason in the report), never the run.
            self.skip_reason = f"generation failed: {exc}"
        return None

    def regular(self, position: int) -> Case | None:
        """The tool's regular case `position` (never a probe, whatever the schedule), for a base
        of a sequence step; None once the tool is skipped. Blocking: call it from a thread."""
        generator = self.prepare()
        if generator is None:
            return None
        try:
            return generator.case(position)
        except (UnsupportedSchema, GenerationAbandoned, GenerationError):
            # `case` reports what this means for the tool the next time it is asked.
            return None

    def prepare(self) -> CaseGenerator | None:
        """The tool's generator, built first if needed; None once the tool is skipped. Blocking
        (building may wait on the generation worker): call it from a thread."""
        if self.generator is None and self.skip_reason is None:
            self.case(0)
        return self.generator if self.skip_reason is None else None

    def ready(self, index: int) -> bool:
        """Whether `case(index)` would return at once (its generator built, its case drawn): then
        the engine need not call it from a thread."""
        generator, probes = self.generator, self.probes
        if generator is None or probes is None or self.skip_reason is not None:
            return False
        is_probe, position = self._slot(index)
        return is_probe or generator.ready(position)

    def set_pace(self, expected: float | None, *, on_top: bool = False) -> None:
        """Pace the tool's probes for `expected` cases in all (None: not known); `on_top`: the
        probes come on top of `expected` regular cases (`--cases`)."""
        with self._slotting:
            self.paced, self.expected, self._on_top = True, expected, on_top

    def answered(self, case: Case, duration_s: float, reached: bool, accepted: bool) -> None:
        """After a call of `case` that took `duration_s`: whether it `reached` the server, and
        whether the tool `accepted` it (an OK reply)."""
        self.calls_s += duration_s
        probe = case.origin.startswith("probe:")
        if probe and reached:
            self.probes_sent.add(case.origin)
        if accepted and case.schema_valid and not probe:
            self.accepted = dict(case.arguments)

    def probe_counts(self) -> tuple[int, int]:
        """(probes sent, probes planned)."""
        return len(self.probes_sent), len(self.probes or ())

    def _slot(self, index: int) -> tuple[bool, int]:
        slots = self._slots
        if slots is None:
            return False, index
        with self._slotting:
            if slots.pace is None and self.paced and not slots.decided(index):
                expected = self.expected
                if self._on_top and expected is not None:
                    expected += slots.probes
                slots.pace = pace(slots.probes, expected)
            return slots.slot(index)

    def _probes(self) -> list[ProbeCase]:
        # Planned once, over the base `{}`: each probe rides, when sent, on the call the tool last
        # accepted (`ride`), so the other arguments get the server as far as the probed one.
        contained = [] if self.probe_source is None else self.probe_source(self.info, {})
        # Cost probes need no containment: what they show is a hang or a crash. They go first: they
        # are few (only fields that read like expressions, patterns, queries or sizes get them), and
        # a server that hangs on `9**9**9` must be caught within a short budget, not after the
        # dozens of scope and injection probes a tool's string fields get.
        cost = cost_probes(self.info.name, self.info.input_schema, {}, self.info.description)
        return cost + contained


@dataclass(frozen=True, slots=True)
class Selection:
    plans: tuple[ToolPlan, ...]
    entries: tuple[SurfaceEntry, ...]
    """Blocked and skipped tools, with reasons (fuzzed ones are added with their case counts at the end)."""


@dataclass(frozen=True, slots=True)
class SelectionSettings:
    """What deciding which tools a run calls reads: include and exclude, the destructive guard,
    `max_tools` and the shard, and how cases are generated. Built by the CLI (`SelectionSettings.of`)."""

    include: tuple[str, ...]
    exclude: tuple[str, ...]
    destructive_patterns: tuple[str, ...]
    allow_destructive: tuple[str, ...]
    destructive_replace_defaults: bool
    max_tools: int | None
    shard: Shard | None
    mode: GenerationMode
    max_string: int
    fuzz_guarded_in_sandbox: bool = False
    """The opt-in: tools the destructive guard blocks are fuzzed where the sandbox holds (`unheld`)."""
    unheld: str | None = NOT_CONTAINED
    """Why the sandbox does not hold for the server starts these settings govern; None when it does
    (jailed, its own loopback-only network, a throwaway layer: `Containment.unheld`). Set by whoever
    contains the servers (`held_by`); until then guarded tools stay blocked."""

    def held_by(self, unheld: str | None) -> SelectionSettings:
        """These settings for servers whose sandbox holds (`unheld` None) or does not, and why."""
        return replace(self, unheld=unheld)

    @classmethod
    def of(cls, config: Config) -> SelectionSettings:
        return cls(
            include=config.include,
            exclude=config.exclude,
            destructive_patterns=config.destructive_patterns,
            allow_destructive=config.allow_destructive,
            destructive_replace_defaults=config.destructive_replace_defaults,
            max_tools=config.max_tools,
            shard=config.shard,
            mode=config.mode,
            max_string=config.max_string,
            fuzz_guarded_in_sandbox=config.fuzz_guarded_in_sandbox,
        )


def guard_for(settings: SelectionSettings) -> DestructiveGuard:
    return DestructiveGuard.from_settings(
        settings.destructive_patterns, settings.allow_destructive, settings.destructive_replace_defaults
    )


def _filter_reason(name: str, settings: SelectionSettings) -> str | None:
    if settings.include and not any(fnmatch.fnmatchcase(name, p) for p in settings.include):
        return "not matched by include patterns"
    if any(fnmatch.fnmatchcase(name, p) for p in settings.exclude):
        return "matched by an exclude pattern"
    return None


def _refusal(tool: ToolInfo, settings: SelectionSettings, guard: DestructiveGuard) -> tuple[str, Status] | None:
    """Why no call of `tool` may be sent (include, exclude, the destructive guard), or None."""
    reason = _filter_reason(tool.name, settings)
    if reason is not None:
        return reason, Status.SKIPPED
    # A resource's name is its URI or template: `db://drop/{table}` reads like an action.
    reason = guard.blocks(tool.name, tool.destructive_hint, tool.read_only_hint)
    if reason is None or guarded_in_sandbox(tool, settings, guard) is not None:
        return None
    if settings.fuzz_guarded_in_sandbox:
        reason += f"; fuzz_guarded_in_sandbox is on, but the sandbox does not hold for this server ({settings.unheld})"
    elif settings.unheld is None:
        # The safer way to test it than allowing it everywhere: its writes would land in a throwaway layer.
        reason += ", or fuzz it in the sandbox, which holds here, with --fuzz-guarded-in-sandbox"
    return reason, Status.BLOCKED


def guarded_in_sandbox(tool: ToolInfo, settings: SelectionSettings, guard: DestructiveGuard) -> str | None:
    """What a tool the guard blocks is called for, when it is called only because the sandbox holds
    and `fuzz_guarded_in_sandbox` is on (the note a listing and a report show); None otherwise."""
    if not settings.fuzz_guarded_in_sandbox or settings.unheld is not None:
        return None
    why = guard.why_destructive(tool.name, tool.destructive_hint, tool.read_only_hint)
    if why is None or guard.blocks(tool.name, tool.destructive_hint, tool.read_only_hint) is None:
        return None
    return f"guarded ({why}), fuzzed in the sandbox: fuzz_guarded_in_sandbox"


class NotSelected(UsageError):
    """A call to send (a corpus entry's, a repro's, `replay --tool`) names a tool the selection
    refuses; nothing of it was sent."""

    title = "not sent"

    def __init__(self, reason: str) -> None:
        super().__init__(reason, hint="include, exclude and the destructive guard apply to every call fuzzgate sends")
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Admission:
    """Which stored calls may be sent to a server: those of tools `select` would let a run call
    (include, exclude, the destructive guard). Every sender of a stored call asks it first: the
    run's corpus replay (through the plans `select` made), replays of findings and baseline entries
    (`engine.replay.replay_once`), the corpus tools (`engine.measure.Measurer`). A tool the server lists is judged
    by its listing (its annotations too); one it does not list, by its name. Sharding and
    `max_tools` share out effort, they are no safety: they do not refuse."""

    settings: SelectionSettings
    listed: Mapping[tuple[Surface, str], ToolInfo]

    @classmethod
    def of(cls, settings: SelectionSettings, inventory: Inventory) -> Admission:
        tools = (*inventory.tools, *inventory.others)
        return cls(settings, {(tool.surface, tool.name): tool for tool in tools})

    def refusal(self, calls: Iterable[tuple[Surface, str]]) -> str | None:
        """Why these calls (a sequence's, in order) must not be sent, naming the first refused
        one; None when every one may be."""
        guard = guard_for(self.settings)
        for surface, name in calls:
            if surface is Surface.SERVER:
                continue  # a protocol probe's raw message: no tool of the server's
            tool = self.listed.get((surface, name)) or ToolInfo(name, "", {}, None, None, None, surface)
            refused = _refusal(tool, self.settings, guard)
            if refused is not None:
                return f"{subject_label(surface, name)} is {refused[1].value}: {refused[0]}"
        return None

    def check(self, calls: Iterable[tuple[Surface, str]]) -> None:
        """Raise `NotSelected` when `refusal` names a reason."""
        reason = self.refusal(calls)
        if reason is not None:
            raise NotSelected(reason)


def select(
    inventory: Inventory,
    settings: SelectionSettings,
    seed: int,
    *,
    generation_timeout_s: float | None = None,
    probe_source: Callable[[ToolInfo, dict[str, Any]], list[ProbeCase]] | None = None,
) -> Selection:
    """Decide, without calling anything or building generators, what happens to every tool, and
    to every resource, resource template and prompt (`Inventory.others`): the same include and
    exclude patterns, and the destructive guard, which for a resource reads its URI or template (a
    read that deletes something is as destructive as a tool that does)."""
    guard = guard_for(settings)
    plans: list[ToolPlan] = []
    entries: list[SurfaceEntry] = []
    tools = 0
    for tool in (*inventory.tools, *inventory.others):
        refused = _refusal(tool, settings, guard)
        reason, status = refused if refused is not None else (None, Status.SKIPPED)
        counted = tool.surface is Surface.TOOL
        if reason is None and counted and settings.max_tools is not None and tools >= settings.max_tools:
            reason, status = f"over max_tools ({settings.max_tools})", Status.SKIPPED
        if reason is None and settings.shard is not None and not in_shard(tool.surface, tool.name, settings.shard):
            # Decided after max_tools, which counts every share's tools: the shares of a sharded
            # run together fuzz exactly what the unsharded run would.
            tools += counted
            reason, status = shard_reason(tool.surface, tool.name, settings.shard), Status.SKIPPED
        if reason is None:
            factory = _generator_factory(tool, settings, seed, generation_timeout_s)
            fixed = tool.surface is Surface.RESOURCE and "{" not in tool.name
            # A plain resource takes no arguments: one read says all there is to say.
            note = guarded_in_sandbox(tool, settings, guard)
            plans.append(ToolPlan(tool, factory, probe_source=probe_source, max_cases=1 if fixed else None, note=note))
            tools += counted
            continue
        entries.append(SurfaceEntry(tool.surface, tool.name, status, reason))
    # Listing and read-only tools first: what they return feeds the others' fields (`feed`).
    plans.sort(
        key=lambda p: not (p.info.surface is Surface.TOOL and looks_read_only(p.info.name, p.info.read_only_hint))
    )
    return Selection(tuple(plans), tuple(entries))


def _generator_factory(
    tool: ToolInfo, settings: SelectionSettings, seed: int, timeout_s: float | None
) -> Callable[[], CaseGenerator]:
    def make() -> CaseGenerator:
        extra = {} if timeout_s is None else {"timeout_s": timeout_s}
        # Values the descriptions name become examples, which the generator tries first; examples
        # are annotations, so what is valid stays what the tool's own schema says.
        schema = enrich(tool.input_schema, tool.description)
        return CaseGenerator(
            schema, master_seed=seed, name=tool.name, mode=settings.mode, max_string=settings.max_string, **extra
        )

    return make


@dataclass(slots=True)
class Scheduler:
    """Hands out (tool, case index) pairs so every tool gets a fair share of the time budget.

    The next case goes to the tool that has used the least time so far (within `FAIR_SLACK_S`, the
    one that had fewest cases): a slow or hanging tool cannot starve the others, and time a fast
    tool leaves unused flows to the rest. Which case a tool runs next is its own counter. A tool that
    stopped showing new behaviour is charged more for its time (`STALE_WEIGHT`), and one the change
    reaches (`ToolPlan.weight`, `fuzzgate.plan.focus`) less. `deadline` is
    asked every time: the run moves it earlier as findings that need confirming accumulate.
    """

    plans: tuple[ToolPlan, ...]
    deadline: Callable[[], float]
    cases: int | None
    concurrency: int = 1
    """Calls in flight at once: the cases a tool can expect grow with it (`expected`)."""
    stopped: bool = False
    waiting: set[tuple[Surface, str]] = field(default_factory=set)
    """Tools whose slow call others are sent beside (`engine.calls`): their next case waits for it,
    since a second call to a tool that is taking that long mostly takes as long."""
    _order: dict[tuple[Surface, str], int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._order = {(p.info.surface, p.info.name): i for i, p in enumerate(self.plans)}

    def next(self) -> tuple[ToolPlan, int] | None:
        if self.stopped or time.monotonic() >= self.deadline():
            return None
        open_plans = [p for p in self.plans if p.skip_reason is None and p.next_case < self._limit(p)]
        if not open_plans:
            return None
        if self.waiting:
            open_plans = [p for p in open_plans if (p.info.surface, p.info.name) not in self.waiting] or open_plans
        if self.cases is not None:
            # Every tool gets its `--cases` anyway: round-robin, so the order never reads the clock
            # (a generator built slowly on a loaded machine would otherwise reorder the tools).
            even = open_plans
        else:
            least = min(p.used_s for p in open_plans)
            even = [p for p in open_plans if p.used_s <= least + max(FAIR_SLACK_S, FAIR_SLACK_SHARE * least)]
        # Fewest cases first, counted against the tool's weight: within the slack too, a tool the
        # change reaches gets its larger share.
        plan = min(even, key=lambda p: (p.next_case / p.weight, self._order[(p.info.surface, p.info.name)]))
        index = plan.next_case
        plan.next_case += 1
        # Charge a little up front so concurrent workers spread over tools before any call returns.
        plan.used_s += 1e-6
        # The probes are paced once the tool's first call says how long its calls take (under
        # `--cases`, at its second case whatever the clock says: the cases stay the seed's).
        if not plan.paced and index >= PROBES_AFTER and (self.cases is not None or plan.calls or index > PROBES_AFTER):
            plan.set_pace(self.expected(plan), on_top=self.cases is not None)
        return plan, index

    def expected(self, plan: ToolPlan) -> float | None:
        """The cases `plan` can expect in all: `--cases` (or its own limit) when set, else the
        cases handed out so far and those its share of the time left allows at the pace its calls
        took so far, building its generator not counted (another tool's when none of its own
        returned yet); None when no call returned."""
        if self.cases is not None or plan.max_cases is not None:
            # `--cases` counts the regular cases: the probes come on top (`ToolPlan.set_pace`).
            limits = [n for n in (self.cases, plan.max_cases) if n is not None]
            return float(min(limits))
        timed = [p for p in self.plans if p.calls]
        mine = [plan] if plan.calls else timed
        if not mine:
            return None
        latency = sum(p.calls_s for p in mine) / sum(p.calls for p in mine)
        open_plans = sum(1 for p in self.plans if p.skip_reason is None and p.next_case < self._limit(p))
        left = max(0.0, self.deadline() - time.monotonic())
        return plan.next_case + left * max(1, self.concurrency) / (max(1, open_plans) * max(latency, 1e-6))

    def again(self, plan: ToolPlan, index: int) -> bool:
        """Hand out case `index` of `plan` again next (it was set aside for a corpus mutant, or drawn
        ahead and not sent); False when a later case of the tool was handed out since."""
        if plan.next_case != index + 1:
            return False
        plan.next_case = index
        return True

    def _limit(self, plan: ToolPlan) -> float:
        """The most cases `plan` gets: `--cases` generated ones, and its probes on top of them (as
        corpus entries and their mutants are), or its own limit."""
        limits: list[float] = []
        if self.cases is not None:
            limits.append(self.cases + len(plan.probes or ()))
        if plan.max_cases is not None:
            limits.append(plan.max_cases)
        return min(limits, default=math.inf)

    def running(self) -> bool:
        """Whether cases may still be sent (not stopped, the deadline not passed)."""
        return not self.stopped and time.monotonic() < self.deadline()

    def record(self, plan: ToolPlan, duration_s: float) -> None:
        stale = plan.unchanged_calls >= STALE_CALLS
        plan.used_s += duration_s * (STALE_WEIGHT if stale else 1.0) / plan.weight

    def behaved(self, plan: ToolPlan, new: bool) -> None:
        """Whether a call of `plan` showed behaviour the tool had not shown before."""
        plan.unchanged_calls = 0 if new else plan.unchanged_calls + 1
