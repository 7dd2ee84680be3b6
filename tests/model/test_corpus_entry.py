"""A corpus entry round-trips whole through its JSON form, every field included, and conforms to its
published schema (docs/schemas/corpus.schema.json)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzgate.model.corpus import CorpusEntry, CorpusFormatError
from fuzzgate.model.findings import Step, Surface
from tests.report_schema import CORPUS, assert_conforms
from tests.strategies import complete

_text = st.text(max_size=12)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | _text, lambda inner: st.lists(inner, max_size=3), max_leaves=6
)
_arguments = st.dictionaries(_text, _json, max_size=3)


entries = complete(
    CorpusEntry,
    tool=_text,
    arguments=_arguments,
    surface=st.sampled_from(Surface),
    prefix=st.lists(st.builds(Step, _text, _arguments), max_size=2).map(tuple),
    origin=_text,
    signal=st.sampled_from(["coverage", "behaviour"]),
    features=st.integers(0, 10**6),
    environment=st.dictionaries(_text, _text, max_size=3),
    files=st.lists(_text.filter(bool), max_size=4, unique=True).map(lambda f: tuple(sorted(f))),
    duration_s=st.none() | st.floats(min_value=0, max_value=86_400, allow_nan=False),
)


@given(entries)
def test_every_field_survives_json(entry: CorpusEntry) -> None:
    written = json.loads(json.dumps(entry.to_json()))
    assert_conforms(written, "a corpus entry", CORPUS)
    assert CorpusEntry.from_json(written) == entry


@pytest.mark.parametrize("duration", [-1, "3s", True, float("inf"), [1]])
def test_a_duration_that_is_not_seconds_is_refused(duration: object) -> None:
    data = {"format": 1, "tool": "t", "arguments": {}, "feedback": {"duration_s": duration}}
    with pytest.raises(CorpusFormatError, match="duration_s"):
        CorpusEntry.from_json(data)


def test_an_entry_without_files_reads_as_before() -> None:
    data = {"format": 1, "tool": "t", "arguments": {}, "feedback": {"signal": "coverage", "features": 2}}
    assert CorpusEntry.from_json(data).files == ()
