from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzgate.model.errors import UsageError
from fuzzgate.plan.seed import choose_seed, parse_seed, sha_to_seed

HEAD = "a" * 40
MERGE = "b" * 40


def test_flag_wins(tmp_path: Path) -> None:
    choice = choose_seed("42", 7, {"FUZZGATE_SEED": "9", "GITHUB_SHA": MERGE}, tmp_path)
    assert (choice.seed, choice.source) == (42, "--seed")


def test_env_then_config(tmp_path: Path) -> None:
    assert choose_seed(None, 7, {"FUZZGATE_SEED": "9"}, tmp_path).seed == 9
    assert choose_seed(None, 7, {}, tmp_path).source == "config file"


def test_pull_request_head_beats_merge_sha(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"head": {"sha": HEAD}}}))
    choice = choose_seed(None, None, {"GITHUB_EVENT_PATH": str(event), "GITHUB_SHA": MERGE}, tmp_path)
    assert choice.seed == sha_to_seed(HEAD) and "pull request head" in choice.source


def test_github_sha_on_push(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"after": HEAD}))
    choice = choose_seed(None, None, {"GITHUB_EVENT_PATH": str(event), "GITHUB_SHA": MERGE}, tmp_path)
    assert choice.seed == sha_to_seed(MERGE)


@pytest.mark.parametrize("text", ["[]", '{"pull_request": []}', '{"pull_request": {"head": "x"}}', "[" * 100000])
def test_an_event_file_of_another_shape_falls_back_to_the_sha(tmp_path: Path, text: str) -> None:
    # A list, a field of another type, or JSON nested past the recursion limit ended the run with
    # a traceback before anything started.
    event = tmp_path / "event.json"
    event.write_text(text + "]" * text.count("[") if text.startswith("[[") else text)
    choice = choose_seed(None, None, {"GITHUB_EVENT_PATH": str(event), "GITHUB_SHA": MERGE}, tmp_path)
    assert choice.seed == sha_to_seed(MERGE)


def test_git_head_then_zero(tmp_path: Path) -> None:
    import subprocess

    choice = choose_seed(None, None, {}, tmp_path)
    assert (choice.seed, choice.source) == (0, "default") and choice.warning
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(tmp_path),
            "-c",
            "user.email=a@b",
            "-c",
            "user.name=a",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ],
        check=True,
    )
    choice = choose_seed(None, None, {}, tmp_path)
    assert choice.source.startswith("git HEAD") and choice.warning is None


@given(st.integers(min_value=0, max_value=2**64 - 1))
def test_parse_numbers_round_trip(n: int) -> None:
    assert parse_seed(str(n), what="x") == n
    assert parse_seed(hex(n), what="x") == n


def test_parse_sha_and_garbage() -> None:
    assert parse_seed(HEAD, what="x") == sha_to_seed(HEAD)
    with pytest.raises(UsageError, match="--seed"):
        parse_seed("banana", what="--seed")
