"""A report's entries (what the run did with each tool, resource and prompt) round-trip whole
through `report.json`: `merge`, `replay` and `baseline accept` read them back."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from fuzzgate.model.findings import Surface
from fuzzgate.record.results import Status, SurfaceEntry
from tests.strategies import complete, text

counts = st.integers(min_value=0, max_value=10**9)
entries = complete(
    SurfaceEntry,
    surface=st.sampled_from(Surface),
    name=text,
    status=st.sampled_from(Status),
    reason=st.none() | text,
    cases=counts,
    probes_planned=counts,
    probes_sent=counts,
    corpus_calls=counts,
)


@given(entries)
def test_an_entry_round_trips_through_json(entry: SurfaceEntry) -> None:
    assert SurfaceEntry.from_json(json.loads(json.dumps(entry.to_json()))) == entry


def test_an_entry_written_before_corpus_calls_reads_as_none() -> None:
    old = {"surface": "tool", "name": "echo", "status": "fuzzed", "reason": None, "cases": 3}
    assert SurfaceEntry.from_json(old).corpus_calls == 0
