"""The scheduler's share of the budget (plan.Scheduler) and the order of the plans (plan.select):
time-fair at a coarse grain, by case count within it, tools that stopped showing new behaviour
charged more, listing and read-only tools first."""

from __future__ import annotations

import math
from typing import Any

from fuzzgate.config.model import Config, TargetConfig, TargetKind
from fuzzgate.model.findings import Surface
from fuzzgate.plan.selection import (
    FAIR_SLACK_S,
    STALE_CALLS,
    STALE_WEIGHT,
    Scheduler,
    SelectionSettings,
    ToolPlan,
    select,
)
from fuzzgate.target.discover import Inventory, ToolInfo

SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


def tool(name: str, read_only: bool | None = None, surface: Surface = Surface.TOOL) -> ToolInfo:
    return ToolInfo(name, "", SCHEMA, None, None, read_only, surface)


def plans(*names: str) -> tuple[ToolPlan, ...]:
    return tuple(ToolPlan(tool(n), lambda: None) for n in names)  # type: ignore[arg-type,return-value]


def scheduler(*made: ToolPlan, cases: int | None = None) -> Scheduler:
    return Scheduler(made, lambda: math.inf, cases)


def picks(s: Scheduler, n: int, charge: dict[str, float] | None = None) -> list[str]:
    out = []
    for _ in range(n):
        item = s.next()
        assert item is not None
        plan, _ = item
        s.record(plan, (charge or {}).get(plan.info.name, 0.001))
        out.append(plan.info.name)
    return out


def test_round_robin_while_times_are_even() -> None:
    # Jitter of a few milliseconds does not reorder tools.
    s = scheduler(*plans("a", "b", "c"))
    assert picks(s, 9, {"a": 0.004, "b": 0.001, "c": 0.002}) == ["a", "b", "c"] * 3


def test_a_slow_tool_waits_for_the_others_to_catch_up() -> None:
    slow, fast = plans("slow", "fast")
    s = scheduler(slow, fast)
    got = []
    for _ in range(60):
        got += picks(s, 1, {"slow": 0.5, "fast": 0.1})
        # Never further apart than the slack and one call.
        assert abs(slow.used_s - fast.used_s) <= FAIR_SLACK_S + 0.5
    # Alternating at first (the times are even), then the fast tool catches up in time, not in calls.
    assert got[:4] == ["slow", "fast", "slow", "fast"]
    assert 8 <= got.count("slow") <= 12 and got.count("fast") >= 48, got


def test_a_tool_showing_nothing_new_is_charged_more() -> None:
    stale, fresh = plans("stale", "fresh")
    s = scheduler(stale, fresh)
    for _ in range(STALE_CALLS):
        s.behaved(stale, False)
    s.record(stale, 1.0)
    s.record(fresh, 1.0)
    assert (stale.used_s, fresh.used_s) == (STALE_WEIGHT, 1.0)
    s.behaved(stale, True)
    s.record(stale, 1.0)
    assert stale.used_s == STALE_WEIGHT + 1.0
    # Charged more, never starved: it still gets cases once the others catch up.
    assert "stale" in picks(s, 40, {"stale": 0.1, "fresh": 0.1})


def test_cases_limit_and_running() -> None:
    s = scheduler(*plans("a", "b"), cases=2)
    assert picks(s, 4) == ["a", "b", "a", "b"]
    assert s.next() is None and s.running()
    s.stopped = True
    assert not s.running()


def test_listing_and_read_only_tools_go_first() -> None:
    inventory = Inventory(
        tools=(
            tool("create_note"),
            tool("list_notes"),
            tool("update_note"),
            tool("getNote"),
            tool("archive", read_only=True),
            tool("get_or_make", read_only=False),
        ),
        resources=(),
        resource_templates=(),
        prompts=("summary",),
        others=(tool("summary", read_only=True, surface=Surface.PROMPT),),
    )
    config = Config(target=TargetConfig(kind=TargetKind.STDIO, command="x"))
    selection = select(inventory, SelectionSettings.of(config), 0)
    assert [p.info.name for p in selection.plans] == [
        "list_notes",
        "getNote",
        "archive",
        "create_note",
        "update_note",
        "get_or_make",
        "summary",
    ]


def test_a_tool_the_change_reaches_gets_time_in_proportion_to_its_weight() -> None:
    favoured, other = plans("favoured", "other")
    favoured.weight = 3.0
    s = scheduler(favoured, other)
    got = picks(s, 400, {"favoured": 0.1, "other": 0.1})
    # Equal call costs: the favoured tool is charged a third as much, so it runs about three times as often
    # (past the slack both start with).
    assert got.count("favoured") >= 2.5 * got.count("other"), (got.count("favoured"), got.count("other"))
    assert got.count("other") > 0


def test_within_the_slack_the_weight_decides_how_many_cases_each_tool_gets() -> None:
    favoured, other = plans("favoured", "other")
    favoured.weight = 3.0
    got = picks(scheduler(favoured, other), 40, {"favoured": 0.001, "other": 0.001})
    assert got.count("favoured") == 30 and got.count("other") == 10
