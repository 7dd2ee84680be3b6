"""Durations ("1h30m", "500ms", "90") and sizes ("64KiB", "10kb", 65536) as people write them."""

from __future__ import annotations

import math
import re
from fractions import Fraction

from fuzzgate.config._messages import describe
from fuzzgate.model.errors import ConfigError

DURATION_EXPECTED = 'a duration like "60s" or "2m"'
DURATION_HINT = 'write a number followed by h, m, s or ms ("1h30m", "90s", "500ms"); a bare number is seconds'
SIZE_EXPECTED = 'a size like "64KiB" or 65536'
SIZE_HINT = 'write a whole number of bytes or a number with a unit: B, KB, KiB, MB, MiB, GB, GiB ("64KiB")'

_NUMBER = r"\d+(?:\.\d+)?|\.\d+"
_DURATION_PART = re.compile(rf"\s*({_NUMBER})\s*(ms|h|m|s)")
_UNIT_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
# Each unit may appear once, largest first, so "1h30m" parses and "30m1h" or "1s1s" do not.
_UNIT_ORDER = ("h", "m", "s", "ms")

_SIZE = re.compile(rf"\s*({_NUMBER})\s*([a-z]*)\s*")
_UNIT_BYTES = {
    "": 1,
    "b": 1,
    "kb": 1000,
    "kib": 1024,
    "mb": 1000**2,
    "mib": 1024**2,
    "gb": 1000**3,
    "gib": 1024**3,
}


def _duration_error(text: object, what: str) -> ConfigError:
    return ConfigError(f"{what}: expected {DURATION_EXPECTED}, got {describe(text)}", hint=DURATION_HINT)


def parse_duration(text: str | float | int, *, what: str) -> float:
    """Seconds from "60s", "2m", "1h30m", "500ms", "1.5s" or a bare number of seconds ("90", 90).

    `what` names where the value came from (a flag or "file: [section] key") for the error message.
    """
    if isinstance(text, bool) or not isinstance(text, str | int | float):
        raise _duration_error(text, what)
    seconds = float(text) if isinstance(text, int | float) else _parse_duration_text(text, what)
    if not math.isfinite(seconds) or seconds < 0:
        raise _duration_error(text, what)
    return seconds


def _parse_duration_text(text: str, what: str) -> float:
    stripped = text.strip()
    if re.fullmatch(_NUMBER, stripped):
        return float(stripped)
    total = 0.0
    position = 0
    last_unit = -1
    while position < len(stripped):
        match = _DURATION_PART.match(stripped, position)
        if match is None:
            raise _duration_error(text, what)
        unit_rank = _UNIT_ORDER.index(match.group(2))
        if unit_rank <= last_unit:
            raise _duration_error(text, what)
        last_unit = unit_rank
        total += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
        position = match.end()
    if last_unit < 0:
        raise _duration_error(text, what)
    return total


def format_duration(seconds: float) -> str:
    """The shortest string `parse_duration` reads back as `seconds` (to the millisecond)."""
    millis = round(seconds * 1000)
    if millis == 0:
        return "0s"
    parts = []
    for unit, size in (("h", 3_600_000), ("m", 60_000), ("s", 1000), ("ms", 1)):
        count, millis = divmod(millis, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)


def parse_size(text: str | int, *, what: str) -> int:
    """Bytes from "64KiB", "1MiB", "10kb", "65536" or 65536.

    KB, MB and GB are powers of 1000, KiB, MiB and GiB powers of 1024; units ignore case.
    """
    error = ConfigError(f"{what}: expected {SIZE_EXPECTED}, got {describe(text)}", hint=SIZE_HINT)
    if isinstance(text, bool):
        raise error
    if isinstance(text, int):
        if text < 0:
            raise error
        return text
    if not isinstance(text, str):
        raise error
    match = _SIZE.fullmatch(text.lower())
    if match is None or match.group(2) not in _UNIT_BYTES:
        raise error
    value = Fraction(match.group(1)) * _UNIT_BYTES[match.group(2)]
    if value.denominator != 1:
        raise error
    return int(value)
