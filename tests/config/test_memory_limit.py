"""`[fuzzgate] memory_limit` and `--memory-limit`: a size of at least 64MiB or `off`, 2GiB by
default, carried to every server start (`ServerSettings`) and into the commands a run prints."""

from __future__ import annotations

import pytest

from fuzzgate.config import Overrides
from fuzzgate.config.model import DEFAULT_MEMORY_LIMIT
from fuzzgate.config.views import ServerSettings
from fuzzgate.model.errors import ConfigError
from tests.config.conftest import Loader

TARGET = '[target]\ncommand = "python"\n'


def test_two_gibibytes_by_default(load: Loader) -> None:
    config, _ = load(TARGET)
    assert config.memory_limit == DEFAULT_MEMORY_LIMIT == 2 << 30
    assert ServerSettings.of(config).memory_limit == 2 << 30


@pytest.mark.parametrize(
    ("written", "limit"), [('"512MiB"', 512 << 20), ("100000000", 100_000_000), ('"off"', None), ('"OFF"', None)]
)
def test_a_size_or_off_from_the_file(load: Loader, written: str, limit: int | None) -> None:
    config, _ = load(f"{TARGET}[fuzzgate]\nmemory_limit = {written}\n")
    assert config.memory_limit == limit
    assert ServerSettings.of(config).memory_limit == limit


def test_the_flag_wins_and_is_repeated_in_follow_up_commands(load: Loader) -> None:
    config, _ = load(f'{TARGET}[fuzzgate]\nmemory_limit = "1GiB"\n', overrides=Overrides(memory_limit="off"))
    assert config.memory_limit is None
    assert "--memory-limit=off" in config.follow_up_flags
    config, _ = load(TARGET, overrides=Overrides(memory_limit="300MiB"))
    assert config.memory_limit == 300 << 20
    assert "--memory-limit=300MiB" in config.follow_up_flags


@pytest.mark.parametrize("written", ['"10MiB"', '"lots"', "true", "-1", "1.5"])
def test_anything_else_is_an_error_naming_the_key(load: Loader, written: str) -> None:
    with pytest.raises(
        ConfigError, match=r'\[fuzzgate\] memory_limit: expected a size of at least 64MiB like "2GiB", or "off"'
    ):
        load(f"{TARGET}[fuzzgate]\nmemory_limit = {written}\n")


def test_a_wrong_flag_is_an_error_naming_the_flag(load: Loader) -> None:
    with pytest.raises(ConfigError, match=r"--memory-limit: expected a size of at least 64MiB"):
        load(TARGET, overrides=Overrides(memory_limit="1KiB"))
