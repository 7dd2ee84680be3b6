"""Typed readers for single config values, each raising a `ConfigError` that says where and why.

`where` is how the value is named in the message: `fuzzgate.toml: [fuzzgate] budget` for a file
value, `--budget` for a flag. Flag values may arrive as the strings a command line holds, so
readers given `from_flag=True` also accept digit strings where a number is expected.
"""

from __future__ import annotations

import datetime
import re
from enum import StrEnum
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit

from fuzzgate.config._durations import (
    DURATION_EXPECTED,
    DURATION_HINT,
    SIZE_EXPECTED,
    SIZE_HINT,
    parse_duration,
    parse_size,
)
from fuzzgate.config._messages import describe
from fuzzgate.config.model import Shard
from fuzzgate.model.errors import ConfigError

_E = TypeVar("_E", bound=StrEnum)

_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


def mismatch(where: str, expected: str, value: object, *, secret: bool = False, hint: str | None = None) -> ConfigError:
    return ConfigError(f"{where}: expected {expected}, got {describe(value, secret=secret)}", hint=hint)


def as_str(value: object, where: str, *, secret: bool = False) -> str:
    if not isinstance(value, str):
        hint = 'quote it, e.g. "8080"' if isinstance(value, int | float) and not isinstance(value, bool) else None
        raise mismatch(where, "a string", value, secret=secret, hint=hint)
    return value


def as_nonempty_str(value: object, where: str) -> str:
    text = as_str(value, where)
    if not text.strip():
        raise mismatch(where, "a non-empty string", value)
    return text


def as_bool(value: object, where: str) -> bool:
    if not isinstance(value, bool):
        raise mismatch(where, "true or false", value)
    return value


def _int_expected(low: int, high: int | None) -> str:
    return f"an integer from {low} to {high}" if high is not None else f"an integer of at least {low}"


def as_int(value: object, where: str, *, low: int, high: int | None = None, from_flag: bool = False) -> int:
    expected = _int_expected(low, high)
    number: int
    if isinstance(value, bool):
        raise mismatch(where, expected, value)
    if isinstance(value, int):
        number = value
    elif from_flag and isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
        number = int(value)
    else:
        raise mismatch(where, expected, value)
    if number < low or (high is not None and number > high):
        raise mismatch(where, expected, value)
    return number


def as_choice(value: object, where: str, choices: type[_E]) -> _E:
    options = ", ".join(f'"{choice.value}"' for choice in choices)
    if isinstance(value, str):
        for choice in choices:
            if choice.value == value.strip().lower():
                return choice
    # TOML and YAML both read an unquoted 2026-07-28 as a date.
    hint = 'quote it: "2026-07-28"' if isinstance(value, datetime.date) else None
    raise mismatch(where, f"one of {options}", value, hint=hint)


def as_str_list(value: object, where: str, *, item: str = "a string", from_flag: bool = False) -> tuple[str, ...]:
    """A list of strings; an element's error names it `where[index]` (or just the flag)."""
    if not isinstance(value, list | tuple):
        hint = f"write a list, e.g. [{describe(value)}]" if isinstance(value, str) else None
        raise mismatch(where, f"a list of strings ({item} each)", value, hint=hint)
    for index, element in enumerate(value):
        if not isinstance(element, str):
            raise mismatch(where if from_flag else f"{where}[{index}]", item, element)
    return tuple(value)


def as_regex_list(value: object, where: str, *, secret: bool = False, from_flag: bool = False) -> tuple[str, ...]:
    """A list of regular expressions, each compiled once here so a bad one fails at load time.

    With `secret`, a bad pattern is not echoed (secret patterns sometimes are the secret itself).
    """
    patterns = as_str_list(value, where, item="a regular expression", from_flag=from_flag)
    for index, pattern in enumerate(patterns):
        try:
            re.compile(pattern)
        except re.error as exc:
            shown = "an invalid one" if secret else describe(pattern)
            raise ConfigError(
                f"{where if from_flag else f'{where}[{index}]'}: expected a regular expression, "
                f"got {shown} ({exc.msg} at position {exc.pos})",
                hint="patterns use Python's re syntax; escape ( [ . * and the like with a backslash",
            ) from None
    return patterns


def as_table(value: object, where: str, *, secret: bool = False) -> dict[str, object]:
    if not isinstance(value, dict):
        raise mismatch(where, "a table", value, secret=secret)
    for key in value:
        if not isinstance(key, str):
            raise mismatch(where, "a table with string keys", key, hint="quote the key")
    return value


def as_str_map(value: object, where: str, *, secret: bool) -> dict[str, str]:
    """A table of string values; with `secret`, no value is ever echoed, only its key."""
    table = as_table(value, where, secret=secret)
    for key, element in table.items():
        as_str(element, f"{where} {key}", secret=secret)
    return {key: str(element) for key, element in table.items()}


def as_env(value: object, where: str) -> dict[str, str]:
    env = as_str_map(value, where, secret=True)
    for name in env:
        if not name or "=" in name or "\0" in name:
            raise mismatch(where, "environment variable names without '=' or NUL", name)
    return env


def as_headers(value: object, where: str) -> dict[str, str]:
    headers = as_str_map(value, where, secret=True)
    for name, text in headers.items():
        check_header(name, text, where)
    return headers


def check_header(name: str, text: str, where: str) -> None:
    if not _HEADER_NAME.fullmatch(name):
        raise mismatch(where, "header names made of letters, digits and -", name)
    if "\r" in text or "\n" in text:
        raise ConfigError(f"{where} {name}: expected a header value on one line, got a value with a line break")


def as_url(value: object, where: str) -> str:
    # The URL may carry a token in its query, so it is described, never echoed.
    if not isinstance(value, str):
        raise mismatch(where, "an http:// or https:// URL", value)
    try:
        parts = urlsplit(value.strip())
        _ = parts.port  # raises for a port that is not a number from 0 to 65535
    except ValueError as exc:
        raise ConfigError(
            f"{where}: expected an http:// or https:// URL, got one that does not parse ({exc})",
            hint='write the full endpoint, e.g. "http://127.0.0.1:8000/mcp" (an IPv6 host in brackets: http://[::1]:8000/mcp)',
        ) from None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        if "://" not in value:
            found = "a string without http:// or https://"
        elif parts.scheme not in ("http", "https"):
            found = f'a URL with scheme "{parts.scheme}"'
        else:
            found = "a URL without a host"
        raise ConfigError(
            f"{where}: expected an http:// or https:// URL, got {found}",
            hint='write the full endpoint, e.g. "http://127.0.0.1:8000/mcp"',
        )
    return value.strip()


def as_path(value: object, where: str) -> Path:
    return Path(as_nonempty_str(value, where)).expanduser()


def beside(path: Path, config_file: Path | None) -> Path:
    """A path written in the config file: a relative one is taken from the file's directory, so the
    file means the same wherever fuzzgate is started (the lookup finds it from any subdirectory)."""
    if config_file is None or path.is_absolute():
        return path
    return config_file.parent / path


def as_millis(value: object, where: str) -> int:
    """A duration (string like "2s", or a number of seconds) as whole milliseconds, at least 1 ms."""
    if not isinstance(value, str | int | float):
        raise mismatch(where, DURATION_EXPECTED, value, hint=DURATION_HINT)
    millis = round(parse_duration(value, what=where) * 1000)
    if millis < 1:
        raise mismatch(where, "a duration of at least 1ms", value, hint=DURATION_HINT)
    return millis


def as_size(value: object, where: str, *, low: int = 1, high: tuple[int, str, str] | None = None) -> int:
    """A size in bytes, at least `low`; `high` is (the most, how it is written, why no more)."""
    if not isinstance(value, str | int):
        raise mismatch(where, SIZE_EXPECTED, value, hint=SIZE_HINT)
    size = parse_size(value, what=where)
    if size < low:
        raise mismatch(where, f"a size of at least {low} byte{'s' if low != 1 else ''}", value, hint=SIZE_HINT)
    if high is not None and size > high[0]:
        raise mismatch(where, f"a size of at most {high[1]}", value, hint=high[2])
    return size


def as_seed(value: object, where: str) -> int:
    expected = 'a non-negative integer or a hex string like "0x2a"'
    if isinstance(value, bool):
        raise mismatch(where, expected, value)
    if isinstance(value, int):
        if value < 0:
            raise mismatch(where, expected, value)
        return value
    if isinstance(value, str):
        text = value.strip().lower().replace("_", "")
        if re.fullmatch(r"0x[0-9a-f]+", text):
            return int(text, 16)
        if re.fullmatch(r"\d+", text):
            return int(text)
    raise mismatch(where, expected, value, hint="seeds are whole numbers; a commit hash works as 0x<hex>")


_SHARD = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")
MAX_SHARDS = 256


def as_shard(value: object, where: str) -> Shard:
    """`"I/N"` with 1 <= I <= N <= 256 (a matrix index is 1-based in the flag, as people count)."""
    expected = f'"I/N" with 1 <= I <= N <= {MAX_SHARDS}, like "2/4"'
    match = _SHARD.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise mismatch(where, expected, value, hint="in a GitHub matrix: --shard ${{ matrix.shard }}/4")
    index, count = int(match[1]), int(match[2])
    if not 1 <= index <= count <= MAX_SHARDS:
        raise mismatch(where, expected, value)
    return Shard(index, count)
