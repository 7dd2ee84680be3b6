"""The flags a run repeats in the commands it prints (`Config.follow_up_flags`): read back by the
real command line, they set what the run was given; the rest of a run's flags stay out."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzgate.cli.main import _overrides, build_parser
from fuzzgate.config import Overrides, load_config
from fuzzgate.config._overrides import follow_up_flags
from fuzzgate.model.errors import ConfigError

_TEXT = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=20)
_PATH = st.from_regex(r"[a-z][a-z0-9_./-]{0,15}", fullmatch=True)
_STRING_FIELDS = ("name", "timeout", "startup_timeout", "memory_limit", "slow", "max_string", "protocol", "sandbox")
_CHOICES = {"protocol": ("auto", "legacy", "2026-07-28"), "sandbox": ("auto", "required", "off")}


@st.composite
def _overrides_of_follow_up(draw: st.DrawFn) -> Overrides:
    values: dict[str, object] = {
        name: draw(st.none() | (st.sampled_from(_CHOICES[name]) if name in _CHOICES else _TEXT))
        for name in _STRING_FIELDS
    }
    values["fuzz_guarded_in_sandbox"] = draw(st.none() | st.booleans())
    values["out"] = draw(st.none() | _PATH)
    values["baseline"] = draw(st.none() | _PATH)
    return Overrides(**values)  # type: ignore[arg-type]


def _read_back(flags: tuple[str, ...]) -> Overrides:
    return _overrides(build_parser().parse_args(["replay", "--tool", "t", *flags]))


def _given(value: object) -> object:
    """What the command line holds for a value given as a flag: nothing for an empty list or False."""
    if value in ((), False):
        return None
    return value


@given(_overrides_of_follow_up())
def test_the_real_command_line_reads_the_flags_back_as_given(overrides: Overrides) -> None:
    back = _read_back(follow_up_flags(overrides))
    for name in (*_STRING_FIELDS, "fuzz_guarded_in_sandbox"):
        assert _given(getattr(back, name)) == _given(getattr(overrides, name)), name
    for name, default in (("out", ".fuzzgate/out"), ("baseline", ".fuzzgate/baseline")):
        given_path = getattr(overrides, name)
        if given_path is None or os.path.normpath(given_path) == default:
            assert getattr(back, name) is None, name
        else:
            assert Path(getattr(back, name)) == Path(given_path), name


def test_the_target_secret_patterns_and_what_shapes_fuzzing_stay_out() -> None:
    overrides = Overrides(
        command="python", args=("server.py", "--token=t0k3n"), url=None, headers=None, secret_patterns=("t0k3n",),
        budget="5m", seed="7", include=("a*",), cases=3, corpus=Path("c"), feedback="behaviour", replays=5,
        shard="1/2", out=Path("./.fuzzgate/out"), timeout="2s",
    )  # fmt: skip
    assert follow_up_flags(overrides) == ("--timeout=2s",)
    http = Overrides(url="http://user:pw@127.0.0.1:1/mcp?key=k", headers=("Authorization: Bearer x",))
    assert follow_up_flags(http) == ()


def test_a_config_carries_the_flags_it_was_given_over_its_file(tmp_path: Path) -> None:
    overrides = Overrides(command="python", args=("server.py",), timeout="3s", baseline=Path("known"))
    config = load_config(None, overrides, {}, warn=lambda message: None)
    assert config.follow_up_flags == ("--timeout=3s", "--baseline=known")
    assert load_config(None, Overrides(command="python"), {}, warn=lambda m: None).follow_up_flags == ()


@pytest.mark.parametrize(
    "overrides",
    [
        Overrides(url="http://127.0.0.1:1/mcp", headers=("Authorization: Bearer [REDACTED]",)),
        Overrides(command="python", args=("server.py", "--token=[REDACTED]")),
        Overrides(url="http://user:[REDACTED]@127.0.0.1:1/mcp"),
    ],
)
def test_a_target_flag_holding_the_marker_of_a_secret_is_refused(overrides: Overrides) -> None:
    with pytest.raises(ConfigError, match=r"holds \[REDACTED\], which stands for a secret") as error:
        load_config(None, overrides, {}, warn=lambda message: None)
    assert error.value.hint == "put the value the run was given in its place"
