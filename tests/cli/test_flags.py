"""Flags are exact: no command takes a prefix of one of its flags for the flag."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from fuzzgate.cli.main import build_parser

Parsers = list[tuple[tuple[str, ...], argparse.ArgumentParser]]


def _parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Parsers:
    found = [(path, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.extend(_parsers(sub, (*path, name)))
    return found


def _long_flags(parser: argparse.ArgumentParser) -> list[str]:
    return [s for a in parser._actions for s in a.option_strings if s.startswith("--") and len(s) > 4]


def test_every_command_refuses_every_prefix_of_its_flags() -> None:
    checked = 0
    for path, parser in _parsers(build_parser()):
        flags = _long_flags(parser)
        for flag in flags:
            prefix = flag[:-1]
            if prefix in flags:
                continue
            with pytest.raises(SystemExit) as raised:
                build_parser().parse_args([*path, prefix, "x"])
            assert raised.value.code == 2, (path, prefix)
            checked += 1
    assert checked > 50, "the walk reached the commands' flags"


def test_a_prefix_of_baseline_is_a_usage_error_from_the_real_cli() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "fuzzgate", "run", "--command", "true", "--basel", "somewhere"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert "unrecognized arguments: --basel somewhere" in run.stderr
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize("command", [["run"], ["tools"], ["replay"], ["baseline", "list"], ["corpus", "list"]])
def test_verbose_is_taken_before_or_after_the_command(command: list[str]) -> None:
    assert build_parser().parse_args([*command, "-v"]).verbose is True
    assert build_parser().parse_args([*command, "--verbose"]).verbose is True
    assert build_parser().parse_args(["-v", *command]).verbose is True
    assert build_parser().parse_args(command).verbose is False


def test_a_server_flag_given_to_arg_without_the_equals_sign_says_how_to_write_it() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "fuzzgate", "tools", "--command", "mcp-server-git", "--arg", "--repository", "."],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert "argument --arg: expected one argument" in run.stderr
    assert "written --arg=VALUE" in run.stderr and "Traceback" not in run.stderr
