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
