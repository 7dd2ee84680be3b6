"""`has_lone_surrogate`: whether a request's arguments hold a string UTF-8 cannot encode."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from fuzzgate.check import has_lone_surrogate

# Every code point, surrogates included, so about one string in a few holds one.
texts = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()), max_size=40)
values = st.recursive(
    st.none() | st.booleans() | st.integers() | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)


def _unencodable(value: Any) -> bool:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_unencodable(k) or _unencodable(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_unencodable(v) for v in value)
    return False


@given(values)
def test_it_is_true_exactly_when_some_key_or_string_cannot_be_encoded(value: Any) -> None:
    assert has_lone_surrogate(value) == _unencodable(value)


def test_the_edges_of_the_surrogate_range() -> None:
    assert has_lone_surrogate({"a": ["x", "\ud800"]}) and has_lone_surrogate({"\udfff": 1})
    assert not has_lone_surrogate({"a": ["\ud7ff", "\ue000", "\U0001f600"]})
