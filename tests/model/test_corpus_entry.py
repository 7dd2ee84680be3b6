"""A corpus entry round-trips whole through its JSON form, every field included."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from fuzzgate.model.corpus import CorpusEntry
from fuzzgate.model.findings import Step, Surface

_text = st.text(max_size=12)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | _text, lambda inner: st.lists(inner, max_size=3), max_leaves=6
)
_arguments = st.dictionaries(_text, _json, max_size=3)


@given(
    tool=_text,
    arguments=_arguments,
    surface=st.sampled_from(Surface),
    prefix=st.lists(st.builds(Step, _text, _arguments), max_size=2).map(tuple),
    origin=_text,
    signal=st.sampled_from(["coverage", "behaviour"]),
    features=st.integers(0, 10**6),
    environment=st.dictionaries(_text, _text, max_size=3),
    files=st.lists(_text.filter(bool), max_size=4, unique=True).map(lambda f: tuple(sorted(f))),
)
def test_every_field_survives_json(
    tool: str,
    arguments: dict[str, object],
    surface: Surface,
    prefix: tuple[Step, ...],
    origin: str,
    signal: str,
    features: int,
    environment: dict[str, str],
    files: tuple[str, ...],
) -> None:
    entry = CorpusEntry(tool, arguments, surface, prefix, origin, signal, features, environment, files)  # type: ignore[arg-type]
    assert CorpusEntry.from_json(json.loads(json.dumps(entry.to_json()))) == entry


def test_an_entry_without_files_reads_as_before() -> None:
    data = {"format": 1, "tool": "t", "arguments": {}, "feedback": {"signal": "coverage", "features": 2}}
    assert CorpusEntry.from_json(data).files == ()
