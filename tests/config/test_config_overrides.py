"""Flags win over the file, are validated the same way, and errors name the flag."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from pathlib import Path

import pytest

from fuzzgate.config import (
    OVERRIDE_FLAGS,
    Config,
    GenerationMode,
    Overrides,
    ProtocolMode,
    TargetKind,
    load_config,
)
from fuzzgate.model.errors import ConfigError
from fuzzgate.model.findings import Severity

Loader = Callable[..., tuple[Config, list[str]]]

FILE = """\
[target]
command = "python"
args = ["server.py"]
env = { LOG_LEVEL = "debug" }
cwd = "srv"
timeout_ms = 4000

[fuzzgate]
name = "from-file"
budget = "10s"
cases = 10
mode = "conform"
concurrency = 2
include = ["a_*"]
exclude = ["a_delete"]
max_tools = 3
seed = 1
fail_on = "low"
out = "file-out"
baseline = "file-baseline"
secret_patterns = ["file-[0-9]+"]
slow = "1s"
max_string = "1KiB"
replays = 1
protocol = "legacy"
startup_timeout = "5s"
"""


def test_every_flag_has_a_spelling() -> None:
    assert set(OVERRIDE_FLAGS) == {item.name for item in fields(Overrides)}
    assert all(flag.startswith("--") for flag in OVERRIDE_FLAGS.values())


def test_file_values_apply_without_flags(load: Loader) -> None:
    config, warnings = load(FILE)
    assert warnings == []
    assert (config.budget_s, config.cases, config.mode, config.seed) == (10.0, 10, GenerationMode.CONFORM, 1)
    assert config.target.name == "from-file"


def test_flags_win_over_the_file(load: Loader) -> None:
    overrides = Overrides(
        budget="2m",
        cases="50",
        mode="adversarial",
        concurrency=8,
        include=("b_*",),
        exclude=(),
        max_tools="7",
        seed="0x2A",
        fail_on="critical",
        out=Path("flag-out"),
        secret_patterns=("flag-[a-z]+",),
        slow="250ms",
        max_string="512KiB",
        replays="0",
        protocol="2026-07-28",
        startup_timeout=90,
        baseline="flag-baseline",
        name="from-flag",
        timeout="1.5s",
    )
    config, _ = load(FILE, overrides=overrides)
    assert config.budget_s == 120.0
    assert config.cases == 50
    assert config.mode is GenerationMode.ADVERSARIAL
    assert config.concurrency == 8
    assert config.include == ("b_*",)
    assert config.exclude == ()
    assert config.max_tools == 7
    assert config.seed == 42
    assert config.fail_on is Severity.CRITICAL
    assert config.out_dir == Path("flag-out")
    assert config.baseline_dir == Path("flag-baseline")
    assert config.secret_patterns == ("file-[0-9]+", "flag-[a-z]+")  # added, not replaced
    assert config.slow_ms == 250
    assert config.max_string == 512 * 1024
    assert config.replays == 0
    assert config.protocol is ProtocolMode.MODERN
    assert config.startup_timeout_ms == 90_000
    assert config.target.name == "from-flag"
    assert config.target.timeout_ms == 1500


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (Overrides(budget="fast"), '--budget: expected a duration like "60s" or "2m", got "fast"'),
        (Overrides(cases="abc"), '--cases: expected an integer of at least 1, got "abc"'),
        (Overrides(cases=0), "--cases: expected an integer of at least 1, got 0"),
        (Overrides(concurrency="100"), '--concurrency: expected an integer from 1 to 64, got "100"'),
        (Overrides(mode="wild"), '--mode: expected one of "conform", "adversarial", "mixed", got "wild"'),
        (Overrides(max_tools="-1"), '--max-tools: expected an integer of at least 1, got "-1"'),
        (
            Overrides(seed="xyz"),
            '--seed: expected a non-negative integer or a hex string like "0x2a", got "xyz"',
        ),
        (
            Overrides(fail_on="never"),
            '--fail-on: expected one of "low", "medium", "high", "critical", got "never"',
        ),
        (Overrides(out=""), '--out: expected a non-empty string, got ""'),
        (Overrides(baseline=""), '--baseline: expected a non-empty string, got ""'),
        (Overrides(slow="slowly"), '--slow: expected a duration like "60s" or "2m", got "slowly"'),
        (Overrides(max_string="huge"), '--max-string: expected a size like "64KiB" or 65536, got "huge"'),
        (Overrides(replays="99"), '--replays: expected an integer from 0 to 20, got "99"'),
        (Overrides(protocol="v2"), '--protocol: expected one of "auto", "legacy", "2026-07-28", got "v2"'),
        (
            Overrides(startup_timeout="soon"),
            '--startup-timeout: expected a duration like "60s" or "2m", got "soon"',
        ),
        (Overrides(name=""), '--name: expected a non-empty string, got ""'),
        (Overrides(include=("ok", 5)), "--include: expected a glob pattern, got 5"),  # type: ignore[arg-type]
        (Overrides(timeout="0"), '--timeout: expected a duration of at least 1ms, got "0"'),
        (Overrides(command=""), '--command: expected a non-empty string, got ""'),
        (
            Overrides(url="localhost"),
            "--url: expected an http:// or https:// URL, got a string without http:// or https://",
        ),
        (Overrides(command="a", url="http://h/mcp"), "--command and --url: expected one target, got both"),
        (
            Overrides(url="http://h/mcp", args=("x",)),
            "--arg: expected a stdio target or an http one with a command, got an http one without a command",
        ),
        (Overrides(headers=("X-A: 1",)), "--header: expected an http target, got a stdio one"),
        (
            Overrides(url="http://h/mcp", headers=("no colon",)),
            "--header: expected \"Name: value\", got a string without a name and ':'",
        ),
        (
            Overrides(url="http://h/mcp", headers=("Bad Name: v",)),
            '--header: expected header names made of letters, digits and -, got "Bad Name"',
        ),
    ],
)
def test_flag_errors_name_the_flag(load: Loader, overrides: Overrides, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load(FILE, overrides=overrides)
    assert caught.value.message == message


def test_a_bad_file_value_behind_a_flag_is_not_read(load: Loader) -> None:
    config, _ = load('[target]\ncommand = "x"\n[fuzzgate]\nbudget = "fast"\n', overrides=Overrides(budget="1m"))
    assert config.budget_s == 60.0


def test_command_flag_replaces_the_command_line_and_keeps_env_and_cwd(load: Loader, tmp_path: Path) -> None:
    config, warnings = load(FILE, overrides=Overrides(command="node", args=("dist/index.js",)))
    assert warnings == []
    target = config.target
    assert (target.kind, target.command, target.args) == (TargetKind.STDIO, "node", ("dist/index.js",))
    assert target.env == {"LOG_LEVEL": "debug"}
    assert target.cwd == tmp_path / "srv"
    assert target.timeout_ms == 4000

    config, _ = load(FILE, overrides=Overrides(command="node"))
    assert config.target.args == ()


def test_arg_flag_alone_replaces_the_file_args(load: Loader) -> None:
    config, _ = load(FILE, overrides=Overrides(args=("other.py", "--debug")))
    assert (config.target.command, config.target.args) == ("python", ("other.py", "--debug"))


def test_url_flag_turns_a_stdio_file_into_an_http_target_without_warnings(load: Loader) -> None:
    config, warnings = load(FILE, overrides=Overrides(url="http://127.0.0.1:9000/mcp"))
    assert warnings == []
    assert config.target.kind is TargetKind.HTTP
    assert config.target.url == "http://127.0.0.1:9000/mcp"
    assert config.target.env == {}
    assert config.target.command is None


def test_header_flags_are_laid_over_file_headers(load: Loader) -> None:
    text = '[target]\nurl = "http://h/mcp"\n[target.headers]\nauthorization = "old"\nX-Keep = "k"\n'
    overrides = Overrides(headers=("Authorization: Bearer new", "X-Extra:  spaced  "))
    config, _ = load(text, overrides=overrides)
    assert config.target.headers == {"X-Keep": "k", "Authorization": "Bearer new", "X-Extra": "spaced"}


def test_target_section_with_only_env_completes_a_command_flag(load: Loader) -> None:
    config, warnings = load('[target]\nenv = { A = "1" }\n', overrides=Overrides(command="srv"))
    assert warnings == []
    assert config.target.env == {"A": "1"}


def test_no_file_and_no_target_flag(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(None, Overrides(budget="1m"), {}, warn=pytest.fail)
    assert caught.value.message == "no configuration found"
    assert caught.value.hint is not None and "fuzzgate init" in caught.value.hint


def test_flags_only_config(tmp_path: Path) -> None:
    overrides = Overrides(url="https://mcp.example.test/mcp", headers=("Authorization: Bearer t",), seed=7)
    config = load_config(None, overrides, {}, warn=pytest.fail)
    assert config.target.kind is TargetKind.HTTP
    assert config.target.headers == {"Authorization": "Bearer t"}
    assert config.seed == 7
    assert config.follow_up_flags == ()
    assert config == Config(target=config.target, seed=7, follow_up_flags=config.follow_up_flags)
