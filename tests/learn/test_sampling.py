"""The coverage sampling decision: every call measured until a tool's plateau, then one in `every`,
the same calls for the same seed, and a call that reaches something new ends the plateau."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from fuzzgate.learn.sampling import CoverageSampling
from fuzzgate.model.findings import Surface
from fuzzgate.record.results import FeedbackSummary, RunReport, SamplingSummary
from fuzzgate.report.feedback_text import feedback_line
from tests.report.report_factory import sample_report

TOOL = (Surface.TOOL, "search")


def _decisions(sampling: CoverageSampling, calls: int, *, tool: tuple[Surface, str] = TOOL) -> list[bool]:
    """`calls` calls of `tool` that reach nothing new: whether each was measured."""
    decisions = []
    for _ in range(calls):
        measured = sampling.measures(*tool, tool[1])
        sampling.after(*tool, measured, new=False)
        decisions.append(measured)
    return decisions


def test_every_call_is_measured_until_the_plateau() -> None:
    sampling = CoverageSampling(seed=7, every=8, plateau=10)
    decisions = _decisions(sampling, 10)
    assert decisions == [True] * 10
    assert not sampling.summary().tools, "no plateau reached yet"
    after = _decisions(sampling, 800)
    assert not all(after), "on the plateau, calls are sampled"
    assert 50 <= sum(after) <= 150, "about one in eight"
    assert sampling.summary() == SamplingSummary(8, 10, ("search",), 10 + sum(after), 800 - sum(after))


@given(seed=st.integers(min_value=0, max_value=2**64), every=st.integers(min_value=2, max_value=64))
def test_the_same_seed_samples_the_same_calls(seed: int, every: int) -> None:
    first = _decisions(CoverageSampling(seed, every, plateau=3), 200)
    again = _decisions(CoverageSampling(seed, every, plateau=3), 200)
    assert first == again


def test_another_seed_samples_other_calls() -> None:
    assert _decisions(CoverageSampling(1, 8, plateau=1), 200) != _decisions(CoverageSampling(2, 8, plateau=1), 200)


def test_a_call_that_reaches_something_new_ends_the_plateau() -> None:
    sampling = CoverageSampling(seed=3, every=1000, plateau=5)
    _decisions(sampling, 5)
    assert sampling.on_plateau(*TOOL)
    measured = sampling.measures(*TOOL, "search")
    sampling.after(*TOOL, measured, new=True)
    assert not sampling.on_plateau(*TOOL)
    assert _decisions(sampling, 5) == [True] * 5, "measured again until the next plateau"
    assert sampling.on_plateau(*TOOL)


def test_each_tool_has_its_own_plateau() -> None:
    sampling = CoverageSampling(seed=3, every=8, plateau=5)
    _decisions(sampling, 5)
    other = (Surface.PROMPT, "search")
    assert sampling.on_plateau(*TOOL) and not sampling.on_plateau(*other)
    assert _decisions(sampling, 5, tool=other) == [True] * 5


def test_one_in_one_measures_every_call() -> None:
    sampling = CoverageSampling(seed=3, every=1, plateau=1)
    assert all(_decisions(sampling, 100))
    assert sampling.summary().unmeasured == 0 and not sampling.summary().tools


def test_the_report_says_what_was_sampled_and_round_trips() -> None:
    sampling = SamplingSummary(8, 100, ("search", "prompt fetch"), 140, 560)
    summary = FeedbackSummary("coverage", "coverage: Python 3.11.7", 3, 40, 50, 2, sampling)
    assert FeedbackSummary.from_json(summary.to_json()) == summary
    assert summary.to_json()["sampling"] == {
        "every": 8,
        "plateau": 100,
        "tools": ["search", "prompt fetch"],
        "measured": 140,
        "unmeasured": 560,
    }
    unsampled = FeedbackSummary("coverage", "coverage: Python 3.11.7", 3, 40, 50, 2)
    assert "sampling" not in unsampled.to_json()
    assert FeedbackSummary.from_json(unsampled.to_json()) == unsampled


def test_the_feedback_line_names_the_sampled_tools(tmp_path: Path) -> None:
    def make_report(feedback: FeedbackSummary) -> RunReport:
        return sample_report(tmp_path, feedback=feedback)

    sampled = FeedbackSummary("coverage", "coverage: why", sampling=SamplingSummary(8, 100, ("search",), 140, 560))
    line = feedback_line(make_report(feedback=sampled))
    assert line is not None
    assert line.endswith("; coverage sampled 1 in 8 after a plateau of 100 calls on search (140 of 700 calls measured)")
    quiet = FeedbackSummary("coverage", "coverage: why", sampling=SamplingSummary(8, 100, (), 700, 0))
    assert "sampled" not in (feedback_line(make_report(feedback=quiet)) or "")
