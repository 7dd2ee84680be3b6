"""The scheduler's share of the budget (plan.Scheduler) and the order of the plans (plan.select):
time-fair at a coarse grain, by case count within it, tools that stopped showing new behaviour
charged more, listing and read-only tools first."""

from __future__ import annotations

import math
import time
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
def _handed(s: Scheduler, plan: ToolPlan, seconds: float) -> int:
    item = s.next()
    assert item is not None and item[0] is plan
    plan.calls += 1
    plan.calls_s += seconds
    s.record(plan, seconds)
    return item[1]


def test_probes_are_paced_at_a_tools_second_case_by_the_cases_it_can_expect() -> None:
    (plan,) = plans("t")
    s = Scheduler((plan,), lambda: time.monotonic() + 10.0, None)
    assert _handed(s, plan, 2.0) == 0
    assert not plan.paced, "no call had returned when the first case was handed out"
    _handed(s, plan, 2.0)
    assert plan.paced
    # About 10 s left at 2 s a call: a handful of cases.
    assert plan.expected is not None and 5 <= plan.expected <= 7
    quick = plans("q")[0]
    s = Scheduler((quick,), lambda: time.monotonic() + 10.0, None)
    _handed(s, quick, 0.001)
    _handed(s, quick, 0.001)
    assert quick.expected is not None and quick.expected > 1000


def test_under_cases_the_pace_reads_no_clock() -> None:
    a, b = plans("a", "b")
    s = Scheduler((a, b), lambda: math.inf, 40)
    for _ in range(4):
        item = s.next()
        assert item is not None
    assert a.paced and b.paced and a.expected == b.expected == 40.0
    # A building generator's time is no call's: it does not make the tool look slow.
    c = plans("c")[0]
    c.calls, c.calls_s, c.used_s = 1, 0.01, 30.0
    s = Scheduler((c,), lambda: time.monotonic() + 10.0, None, concurrency=2)
    assert (s.expected(c) or 0) > 1000


def test_a_probe_rides_on_the_last_call_the_tool_accepted() -> None:
    from fuzzgate.generate.cases import Case
    from fuzzgate.generate.probes import OUTSIDE, Probe, ProbeCase, ProbeClass
    from tests.learn.test_feed import StandIn

    schema = {"type": "object", "properties": {"repo": {"type": "string"}, "target": {"type": "string"}}}
    probe = Probe("git", "target", ProbeClass.OPTION, "--output=", f"--output={OUTSIDE}/x")

    def source(info: ToolInfo, base: dict[str, Any]) -> list[ProbeCase]:
        return [ProbeCase({**base, "target": probe.value}, probe)] * 3

    plan = ToolPlan(ToolInfo("git", "", schema, None, None, True), lambda: StandIn(schema), probe_source=source)  # type: ignore[arg-type,return-value]
    plan.set_pace(None)
    made = [plan.case(k) for k in range(4)]
    assert [c is not None and c.origin.startswith("probe:") for c in made] == [False, True, True, True]
    # Before any accepted call: the tool's first case is the base.
    assert made[1] is not None and made[1].arguments == {"repo": "repo-0", "target": probe.value}
    plan.answered(Case(9, {"repo": "/srv/r", "target": "a"}, True, "random"), 0.1, True, True)
    plan.answered(Case(10, {"repo": "nope", "target": "b"}, True, "random"), 0.1, True, False)
    plan.answered(Case(11, {"repo": "x", "target": "y"}, False, "random"), 0.1, True, True)
    third = plan.case(3)
    assert third is not None and third.arguments == {"repo": "/srv/r", "target": probe.value}
    assert plan.probe_counts() == (0, 3)
    plan.answered(third, 0.1, True, True)
    assert plan.probe_counts() == (1, 3)
    assert plan.accepted == {"repo": "/srv/r", "target": "a"}, "a probe's reply is no base"


def test_a_tool_whose_slow_call_others_go_beside_waits_for_it() -> None:
    hanging, other = plans("hanging", "other")
    s = scheduler(hanging, other)
    s.waiting.add((Surface.TOOL, "hanging"))
    # Its time is not charged until the call ends, so it would otherwise be picked again and again.
    assert picks(s, 4) == ["other"] * 4
    # Alone open, it is picked all the same: waiting never stops the run.
    only = scheduler(*plans("hanging"))
    only.waiting.add((Surface.TOOL, "hanging"))
    assert picks(only, 2) == ["hanging"] * 2
    s.waiting.clear()
    assert picks(s, 2) == ["hanging", "hanging"]
