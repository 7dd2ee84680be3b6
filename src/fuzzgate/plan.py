"""Which tools a run fuzzes, blocks and skips, and the fair share of the time budget each gets."""

from __future__ import annotations

import fnmatch
import time
from dataclasses import dataclass, field

from fuzzgate.config.model import Config
from fuzzgate.discover import Inventory, ToolInfo
from fuzzgate.findings import Surface
from fuzzgate.generate import CaseGenerator, UnsupportedSchema
from fuzzgate.results import Status, SurfaceEntry
from fuzzgate.safety import DestructiveGuard


@dataclass(slots=True)
class ToolPlan:
    info: ToolInfo
    generator: CaseGenerator
    next_case: int = 0
    used_s: float = 0.0


@dataclass(frozen=True, slots=True)
class Selection:
    plans: tuple[ToolPlan, ...]
    entries: tuple[SurfaceEntry, ...]
    """Blocked and skipped tools, with reasons (fuzzed ones are added with their case counts at the end)."""


def guard_for(config: Config) -> DestructiveGuard:
    return DestructiveGuard.from_settings(
        config.destructive_patterns, config.allow_destructive, config.destructive_replace_defaults
    )


def _filter_reason(name: str, config: Config) -> str | None:
    if config.include and not any(fnmatch.fnmatchcase(name, p) for p in config.include):
        return "not matched by include patterns"
    if any(fnmatch.fnmatchcase(name, p) for p in config.exclude):
        return "matched by an exclude pattern"
    return None


def select(inventory: Inventory, config: Config, seed: int) -> Selection:
    """Decide, without calling anything, what happens to every tool the server lists."""
    guard = guard_for(config)
    plans: list[ToolPlan] = []
    entries: list[SurfaceEntry] = []
    for tool in inventory.tools:
        reason = _filter_reason(tool.name, config)
        status = Status.SKIPPED
        if reason is None:
            reason = guard.blocks(tool.name, tool.destructive_hint, tool.read_only_hint)
            status = Status.BLOCKED
        if reason is None and config.max_tools is not None and len(plans) >= config.max_tools:
            reason, status = f"over max_tools ({config.max_tools})", Status.SKIPPED
        if reason is None:
            try:
                generator = CaseGenerator(
                    tool.input_schema,
                    master_seed=seed,
                    name=tool.name,
                    mode=config.mode,
                    max_string=config.max_string,
                )
            except UnsupportedSchema as exc:
                reason, status = f"input schema not supported: {exc}", Status.SKIPPED
            else:
                plans.append(ToolPlan(tool, generator))
                continue
        entries.append(SurfaceEntry(Surface.TOOL, tool.name, status, reason))
    return Selection(tuple(plans), tuple(entries))


@dataclass(slots=True)
class Scheduler:
    """Hands out (tool, case index) pairs so every tool gets a fair share of the time budget.

    The next case goes to the tool that has used the least time so far: a slow or hanging tool
    cannot starve the others, and time a fast tool leaves unused flows to the rest. Which case a tool
    runs next is its own counter, so the requests per tool never depend on timing.
    """

    plans: tuple[ToolPlan, ...]
    deadline: float
    cases: int | None
    stopped: bool = False
    _order: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._order = {p.info.name: i for i, p in enumerate(self.plans)}

    def next(self) -> tuple[ToolPlan, int] | None:
        if self.stopped or time.monotonic() >= self.deadline:
            return None
        open_plans = [p for p in self.plans if self.cases is None or p.next_case < self.cases]
        if not open_plans:
            return None
        plan = min(open_plans, key=lambda p: (p.used_s, self._order[p.info.name]))
        index = plan.next_case
        plan.next_case += 1
        # Charge a little up front so concurrent workers spread over tools before any call returns.
        plan.used_s += 1e-6
        return plan, index

    def record(self, plan: ToolPlan, duration_s: float) -> None:
        plan.used_s += duration_s
