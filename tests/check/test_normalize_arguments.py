"""A prompt's or resource's error message that quotes the request's values bare keeps one signature."""

from __future__ import annotations

import pytest

from fuzzgate.check.normalize import normalize_message


@pytest.mark.parametrize("value", ["NaN", "R", "a", "/w/x/outside/fzgprobe-94f95f4c9317c092", "two words"])
def test_values_quoted_bare_are_taken_out_as_whole_words(value: str) -> None:
    text = f"Invalid resourceType: {value}. Must be Text or Blob."
    assert normalize_message(text, {"resourceType": value, "resourceId": "1"}) == (
        "Invalid resourceType: <arg>. Must be Text or Blob."
    )


def test_a_short_value_inside_a_word_stays() -> None:
    # "a" is a whole word nowhere here: "Invalid" and "Blob" keep their letters.
    assert normalize_message("Invalid type. Must be Blob.", {"t": "a"}) == "Invalid type. Must be Blob."


def test_without_arguments_the_normalization_is_as_it_was() -> None:
    assert normalize_message("Invalid resourceType: NaN.") == "Invalid resourceType: NaN."
