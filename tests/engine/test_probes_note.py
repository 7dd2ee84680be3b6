"""The note a run writes when tools could not send all their probes (engine.result.probes_note)."""

from __future__ import annotations

from fuzzgate.engine.result import probes_note
from fuzzgate.generate.probes import Probe, ProbeCase, ProbeClass
from fuzzgate.plan.selection import ToolPlan
from fuzzgate.target.discover import ToolInfo


def _plan(name: str, planned: int, sent: int) -> ToolPlan:
    plan = ToolPlan(ToolInfo(name, "", {}, None, None, True), lambda: None)  # type: ignore[arg-type,return-value]
    probes = [Probe(name, "f", ProbeClass.SHELL, f"p{i}", "x") for i in range(planned)]
    plan.probes = [ProbeCase({"f": "x"}, probe) for probe in probes]
    plan.probes_sent = {case.origin for case in plan.probes[:sent]}
    return plan


def test_no_note_when_every_probe_was_sent() -> None:
    assert probes_note([_plan("a", 3, 3), _plan("b", 0, 0)]) is None


def test_the_note_counts_the_probes_and_names_the_tools_that_ran_short() -> None:
    plans = [_plan("a", 16, 16), *(_plan(f"t{i}", 16, 4) for i in range(7))]
    note = probes_note(plans)
    assert note is not None
    assert note.startswith("probes: 44 of 128 sent; 7 of 8 tools ran out of budget before all their probes: ")
    assert "t0 (4 of 16), t1 (4 of 16)" in note and "and 2 more" in note and "a (" not in note
    skipped = _plan("s", 16, 0)
    skipped.skip_reason = "input schema not supported"
    assert probes_note([skipped]) is None


def _silent_run_notes(*, discovered_in_time: bool) -> tuple[str, ...]:
    """The notes of a run in which no tool got a call."""
    from fuzzgate.engine.result import run_notes
    from fuzzgate.plan.selection import Selection

    never = _plan("a", 0, 0)
    return run_notes(
        (),
        corpus=None,
        cut_off=(),
        observe=0.0,
        calls=0,
        unsendable=0,
        client_failed=0,
        client_failure=None,
        selection=Selection((never,), ()),
        discovered_in_time=discovered_in_time,
    )


def test_a_run_that_sent_nothing_says_whether_the_budget_went_before_discovery_or_after() -> None:
    # A run whose listing came in time spent its budget on what follows (generation at a huge
    # max_string): it said start-up and discovery took it.
    after = _silent_run_notes(discovered_in_time=True)[0]
    assert after.startswith("the budget was spent before any call was sent, after the server's start-up and discovery")
    assert "generating the first cases" in after
    before = _silent_run_notes(discovered_in_time=False)[0]
    assert before == "the budget was spent before fuzzing began (server start-up and discovery took it)"
