"""What one fuzzing call showed, before it becomes findings: the oracles' observations of its outcome
(a traced server's slow or hung calls ambiguous, `under_collector`) and the repro they carry."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from fuzzgate.check import Oracles
from fuzzgate.check.observation import Observation
from fuzzgate.engine.collector import under_collector
from fuzzgate.engine.steps import StepResult, observe, written_for
from fuzzgate.generate.cases import Case
from fuzzgate.model.findings import Repro, Step
from fuzzgate.model.outcome import CallOutcome
from fuzzgate.plan.selection import ToolPlan
from fuzzgate.target.connection import Connection
from fuzzgate.triage.sequence import prefix_of


def verdict(
    oracles: Oracles,
    seed: int,
    connection: Connection,
    plan: ToolPlan,
    case: Case,
    step: StepResult,
    outcome: CallOutcome,
    history: Sequence[Step],
    read_only: Collection[str],
) -> tuple[list[Observation], Repro]:
    """The observations of `outcome` (the call of `case` sent as `step`, after the calls `history`
    on `connection`), and the repro of that call: its prefix is what `prefix_of` keeps of `history`
    (and nothing when the call showed nothing: most calls do, and no repro of theirs is kept)."""
    surface = plan.info.surface
    observations = observe(oracles, plan.info.name, case.schema_valid, step, outcome, surface)
    history = prefix_of(history, read_only) if observations else ()
    layer = connection.layer
    repro = Repro(
        seed=seed,
        case_index=case.index,
        arguments=step.arguments,
        transport=connection.transport,
        schema_valid=case.schema_valid,
        prefix=history,
        # Only when the calls name it: a per-run directory in every repro would make a baseline
        # file of the same bug differ from run to run.
        workspace=written_for(layer, step.arguments, history) if observations else None,
        surface=surface,
    )
    traced = connection.coverage is not None
    return [under_collector(observation, traced=traced) for observation in observations], repro
