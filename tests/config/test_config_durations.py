"""Durations and sizes as people write them."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzgate.config import format_duration, parse_duration, parse_size
from fuzzgate.model.errors import ConfigError


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("60s", 60.0),
        ("2m", 120.0),
        ("1h30m", 5400.0),
        ("1h 30m 15s", 5415.0),
        ("1 h", 3600.0),
        ("500ms", 0.5),
        ("1.5s", 1.5),
        (".5s", 0.5),
        ("2m500ms", 120.5),
        ("90", 90.0),
        (" 90 ", 90.0),
        ("0.25", 0.25),
        ("0s", 0.0),
        (90, 90.0),
        (1.5, 1.5),
    ],
)
def test_parse_duration(text: str | float, seconds: float) -> None:
    assert parse_duration(text, what="--budget") == seconds


@pytest.mark.parametrize(
    "text",
    [
        "",
        "fast",
        "1x",
        "s",
        "-5s",
        "1m1m",
        "30m1h",
        "1ms1s",
        "1e3s",
        "1H",
        "1.s",
        True,
        -1,
        math.inf,
        math.nan,
        None,
        [],
    ],
)
def test_parse_duration_rejects(text: object) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_duration(text, what="--budget")  # type: ignore[arg-type]
    assert caught.value.message.startswith('--budget: expected a duration like "60s" or "2m", got ')
    assert caught.value.hint is not None


@given(
    st.integers(0, 1000),
    st.integers(0, 59),
    st.integers(0, 59),
    st.integers(0, 999),
    st.lists(st.booleans(), min_size=4, max_size=4),
)
def test_parse_duration_adds_up_its_parts(
    hours: int, minutes: int, seconds: int, millis: int, keep: list[bool]
) -> None:
    parts = [(hours, "h"), (minutes, "m"), (seconds, "s"), (millis, "ms")]
    chosen = [(value, unit) for (value, unit), wanted in zip(parts, keep, strict=True) if wanted] or [(seconds, "s")]
    text = "".join(f"{value}{unit}" for value, unit in chosen)
    expected = sum(value * {"h": 3600, "m": 60, "s": 1, "ms": 0.001}[unit] for value, unit in chosen)
    assert math.isclose(parse_duration(text, what="x"), expected, abs_tol=1e-9)


@given(st.integers(min_value=0, max_value=10**10))
def test_format_duration_round_trips(millis: int) -> None:
    text = format_duration(millis / 1000)
    assert round(parse_duration(text, what="x") * 1000) == millis


@given(st.integers(min_value=0, max_value=10**12))
def test_bare_decimal_seconds(millis: int) -> None:
    text = f"{millis // 1000}.{millis % 1000:03d}"
    assert math.isclose(parse_duration(text, what="x"), millis / 1000)


def test_format_duration_examples() -> None:
    assert [format_duration(s) for s in (0, 0.5, 60, 90, 5400, 3725.25)] == [
        "0s",
        "500ms",
        "1m",
        "1m30s",
        "1h30m",
        "1h2m5s250ms",
    ]


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("64KiB", 65536),
        ("1MiB", 1048576),
        ("2GiB", 2 * 1024**3),
        ("65536", 65536),
        ("10kb", 10000),
        ("10KB", 10000),
        ("3 MB", 3_000_000),
        ("1.5KiB", 1536),
        ("12B", 12),
        ("0", 0),
        (65536, 65536),
        ("123456789012345678901234567890", 123456789012345678901234567890),
    ],
)
def test_parse_size(text: str | int, size: int) -> None:
    assert parse_size(text, what="--max-string") == size


@pytest.mark.parametrize(
    "text", ["", "big", "64 kilobytes", "1.5", "0.3KB1", "-1", -1, "1.0001KiB", "KiB", True, 1.5, None]
)
def test_parse_size_rejects(text: object) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_size(text, what="--max-string")  # type: ignore[arg-type]
    assert caught.value.message.startswith('--max-string: expected a size like "64KiB" or 65536, got ')


@given(
    st.integers(0, 2**40),
    st.sampled_from([("", 1), ("KiB", 1024), ("MiB", 1024**2), ("kb", 1000), ("GB", 1000**3)]),
)
def test_parse_size_multiplies(count: int, unit: tuple[str, int]) -> None:
    assert parse_size(f"{count}{unit[0]}", what="x") == count * unit[1]
