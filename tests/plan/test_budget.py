"""The time box's reserve at the end of a run: stopping the servers it started and writing the
outputs, or only the outputs when it starts none."""

from __future__ import annotations

import pytest

from fuzzgate.plan.budget import OUTPUT_RESERVE_S, WRITE_RESERVE_S, TimeBox


@pytest.mark.parametrize(
    ("budget_s", "starts_servers", "reserve_s"),
    [
        (12, True, 0.05 * 12),
        (60, True, OUTPUT_RESERVE_S),
        (12, False, WRITE_RESERVE_S),
        (60, False, WRITE_RESERVE_S),
        # A tiny budget keeps at most 5 % of itself back, whatever ending takes.
        (2, False, 0.05 * 2),
    ],
)
def test_verification_ends_before_what_ending_the_run_takes(
    budget_s: float, starts_servers: bool, reserve_s: float
) -> None:
    box = TimeBox(budget_s, start=100.0, starts_servers=starts_servers)
    assert box.verify_end() == pytest.approx(100.0 + budget_s - reserve_s)


def test_a_run_that_starts_no_server_keeps_back_less() -> None:
    assert TimeBox(12, start=0.0, starts_servers=False).verify_end() > TimeBox(12, start=0.0).verify_end()
