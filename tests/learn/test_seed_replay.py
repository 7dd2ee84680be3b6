"""The stored corpus replayed at a run's start (`learn.live_corpus.LiveCorpus.next_step`): a seed
whose call took longer, when it was kept, than what is left of the replay share waits for a run
with the time, and the call's duration is recorded in what is kept."""

from __future__ import annotations

from typing import Any

from fuzzgate.generate.cases import Case
from fuzzgate.generate.dictionary import Dictionary
from fuzzgate.learn.features import Observed
from fuzzgate.learn.live_corpus import LiveCorpus
from fuzzgate.model.corpus import CorpusEntry
from fuzzgate.model.findings import Step
from fuzzgate.model.outcome import CallOutcome, OutcomeStatus
from fuzzgate.plan.selection import ToolPlan
from fuzzgate.target.discover import ToolInfo


def _plan() -> ToolPlan:
    return ToolPlan(ToolInfo("operation", "", {}, None, None, True), lambda: None)  # type: ignore[arg-type,return-value]


def _replayed(live: LiveCorpus, plan: ToolPlan, left_s: float, duration_s: float = 0.5) -> list[dict[str, Any]]:
    """The arguments of every seed sent while `left_s` of the share is left, each answered at once
    and reaching something new (so it is kept again)."""
    sent = []
    while (stepped := live.next_step(left_s)) is not None:
        _, case = stepped
        sent.append(case.arguments)
        outcome = CallOutcome(OutcomeStatus.OK, duration_s, text="ok")
        observed = Observed(frozenset({f"f{len(sent)}"}), frozenset({f"f{len(sent)}"}))
        live.after_call(plan, case, outcome, observed, Step("operation", case.arguments), ())
    return sent


def test_a_seed_slower_than_what_is_left_of_the_replay_share_is_not_sent() -> None:
    plan = _plan()
    seeds = [
        CorpusEntry("operation", {"duration": 10}, duration_s=10.0),
        CorpusEntry("operation", {"duration": 1}, duration_s=0.01),
        CorpusEntry("operation", {"duration": 2}),  # kept by a fuzzgate that recorded no duration
    ]
    live = LiveCorpus([plan], seeds, seed=1, signal="behaviour", environment={}, dictionary=Dictionary())
    sent = _replayed(live, plan, left_s=4.0)
    assert sorted(a["duration"] for a in sent) == [1, 2]
    assert live.stats.replayed == 2 and live.stats.skipped == 1
    # What the run keeps records how long its call took.
    case = Case(index=7, arguments={"duration": 3}, schema_valid=True, origin="random")
    outcome = CallOutcome(OutcomeStatus.OK, 2.71828, text="ok")
    new = frozenset({"g"})
    live.after_call(plan, case, outcome, Observed(new, new), Step("operation", case.arguments), ())
    assert [(e.arguments, e.duration_s) for e in live.added()] == [({"duration": 3}, 2.718)]


def test_with_the_time_left_the_slow_seed_is_sent() -> None:
    plan = _plan()
    seeds = [CorpusEntry("operation", {"duration": 10}, duration_s=10.0)]
    live = LiveCorpus([plan], seeds, seed=1, signal="behaviour", environment={}, dictionary=Dictionary())
    assert _replayed(live, plan, left_s=30.0) == [{"duration": 10}]
