"""Drawing values through Hypothesis (`fuzzgate.generate._draw`): the same seed draws the same
values, and no draw pays for the test-source digest that only a Hypothesis database would read."""

from __future__ import annotations

from typing import Any

import hypothesis.core
import pytest
from hypothesis import strategies as st

from fuzzgate.generate._draw import draw_values, simplest

STRATEGY = st.fixed_dictionaries({"a": st.text()}, optional={"n": st.one_of(st.none(), st.integers())})


def test_the_same_seed_draws_the_same_values_and_another_seed_others() -> None:
    first = draw_values(STRATEGY, seed_value=11, count=40)
    assert len(first) == 40
    assert draw_values(STRATEGY, seed_value=11, count=40) == first
    assert draw_values(STRATEGY, seed_value=12, count=40) != first
    assert simplest(st.integers()) == 0


def test_no_draw_works_out_the_database_key(monkeypatch: pytest.MonkeyPatch) -> None:
    digests: list[Any] = []
    real = hypothesis.core.function_digest

    def counted(function: Any) -> bytes:
        digests.append(function)
        return real(function)

    monkeypatch.setattr(hypothesis.core, "function_digest", counted)
    assert len(draw_values(STRATEGY, seed_value=3, count=40)) == 40
    # Hypothesis reads the test's source and tokenizes it for the key: a tenth of the worker's time.
    assert digests == []
