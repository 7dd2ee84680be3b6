"""Timing symptoms seen while the coverage collector slows the server wait for a replay without it."""

from __future__ import annotations

import pytest

from fuzzgate.check.observation import Observation
from fuzzgate.engine.collector import under_collector
from fuzzgate.model.findings import Details, Kind


def _observation(kind: Kind) -> Observation:
    return Observation(kind, "message", ("sig",), Details(error=None))


@pytest.mark.parametrize("kind", [Kind.SLOW, Kind.HANG])
def test_slow_and_hung_calls_of_a_traced_server_are_ambiguous(kind: Kind) -> None:
    assert under_collector(_observation(kind), traced=True).ambiguous
    assert not under_collector(_observation(kind), traced=False).ambiguous


@pytest.mark.parametrize("kind", [Kind.CRASH, Kind.INTERNAL_ERROR, Kind.SECRET_LEAK])
def test_other_symptoms_do_not_depend_on_the_tracer(kind: Kind) -> None:
    assert not under_collector(_observation(kind), traced=True).ambiguous
