"""Hypothesis strategies for what fuzzgate persists: every field of `Finding`, `Repro`, `Step` and
`Details` drawn, so a round-trip test covers the whole of each.

`complete` refuses a strategy that does not name every field of its dataclass: a field added to
one of them without a strategy here fails every test that imports this module (and
`tests/model/test_findings_codec.py` says which), instead of silently never being round-tripped.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, TypeVar

from hypothesis import strategies as st

from fuzzgate.model.findings import Cause, Details, Finding, Kind, Repro, Severity, Step, Surface
from fuzzgate.model.outcome import AfterTimeout

_T = TypeVar("_T")

COVERED: dict[type, frozenset[str]] = {}
"""The fields each strategy below draws, by dataclass."""


def complete(cls: type[_T], **strategies: st.SearchStrategy[Any]) -> st.SearchStrategy[_T]:
    """`st.builds(cls, **strategies)`, with a strategy for every field of `cls`."""
    declared = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    missing, unknown = declared - set(strategies), set(strategies) - declared
    if missing or unknown:
        raise AssertionError(f"{cls.__name__}: no strategy for {sorted(missing)}; not fields: {sorted(unknown)}")
    COVERED[cls] = frozenset(strategies)
    return st.builds(cls, **strategies)


text = st.text(max_size=20)
json_values: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
arguments = st.dictionaries(st.text(max_size=8), json_values, max_size=4)

steps = complete(
    Step,
    tool=text,
    arguments=arguments,
    schema_valid=st.booleans(),
    surface=st.sampled_from(Surface),
    produced=st.lists(json_values, max_size=3).map(tuple),
)
repros = complete(
    Repro,
    seed=st.integers(min_value=0, max_value=2**64),
    case_index=st.integers(min_value=0, max_value=10**6),
    arguments=arguments,
    transport=st.sampled_from(["stdio", "http"]),
    schema_valid=st.booleans(),
    prefix=st.lists(steps, max_size=3).map(tuple),
    tool=st.none() | text,
    workspace=st.none() | text,
    surface=st.sampled_from(Surface),
    redacted=st.booleans(),
    original_arguments=st.none() | arguments,
)
details = complete(
    Details,
    error=st.none() | text,
    stderr=st.none() | text,
    frames=st.lists(text, max_size=3).map(tuple),
    location=st.none() | st.tuples(text, st.integers(min_value=1, max_value=10**5)),
    after_timeout=st.none() | st.sampled_from(AfterTimeout),
)
findings = complete(
    Finding,
    kind=st.sampled_from(Kind),
    severity=st.sampled_from(Severity),
    surface=st.sampled_from(Surface),
    name=text,
    message=text,
    fingerprint=st.from_regex(r"[0-9a-f]{8,16}", fullmatch=True),
    repro=repros,
    details=details,
    count=st.integers(min_value=1, max_value=100),
    replays=st.integers(min_value=0, max_value=10),
    reproduced=st.integers(min_value=0, max_value=10),
    flaky=st.booleans(),
    unconfirmed=st.booleans(),
    signature=st.none() | st.lists(text, max_size=3).map(tuple),
    cause=st.sampled_from(Cause),
)
