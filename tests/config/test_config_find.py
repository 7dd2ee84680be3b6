"""Where `find_config` looks, in which order, and where it stops."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgate.config import CONFIG_FILE_NAMES, find_config
from fuzzgate.model.errors import ConfigError


def touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[target]\ncommand = 'x'\n")
    return path


def test_explicit_path_wins_over_environment_and_search(tmp_path: Path) -> None:
    explicit = touch(tmp_path / "ci" / "custom.toml")
    touch(tmp_path / "fuzzgate.toml")
    env_file = touch(tmp_path / "env.toml")
    environ = {"FUZZGATE_CONFIG": str(env_file)}
    assert find_config(explicit, tmp_path, environ) == explicit


def test_relative_explicit_path_is_taken_from_cwd(tmp_path: Path) -> None:
    touch(tmp_path / "ci" / "custom.toml")
    assert find_config(Path("ci/custom.toml"), tmp_path, {}) == tmp_path / "ci" / "custom.toml"


def test_missing_explicit_path_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        find_config(Path("nope.toml"), tmp_path, {})
    assert caught.value.message.startswith("--config: no such file:")
    assert "nope.toml" in caught.value.message
    assert caught.value.hint is not None and "fuzzgate init" in caught.value.hint


def test_explicit_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--config: expected a config file, got a directory"):
        find_config(tmp_path, tmp_path, {})


def test_fuzzgate_config_variable_wins_over_wallfacer_config(tmp_path: Path) -> None:
    ours = touch(tmp_path / "a.toml")
    theirs = touch(tmp_path / "b.toml")
    touch(tmp_path / "fuzzgate.toml")
    environ = {"FUZZGATE_CONFIG": str(ours), "WALLFACER_CONFIG": str(theirs)}
    assert find_config(None, tmp_path, environ) == ours
    assert find_config(None, tmp_path, {"WALLFACER_CONFIG": str(theirs)}) == theirs


def test_environment_path_relative_to_cwd(tmp_path: Path) -> None:
    touch(tmp_path / "conf" / "w.toml")
    assert find_config(None, tmp_path, {"WALLFACER_CONFIG": "conf/w.toml"}) == tmp_path / "conf" / "w.toml"


@pytest.mark.parametrize("variable", ["FUZZGATE_CONFIG", "WALLFACER_CONFIG"])
def test_missing_environment_path_is_an_error_naming_the_variable(tmp_path: Path, variable: str) -> None:
    touch(tmp_path / "fuzzgate.toml")
    with pytest.raises(ConfigError, match=rf"^\${variable}: no such file:"):
        find_config(None, tmp_path, {variable: str(tmp_path / "gone.toml")})


def test_empty_environment_variable_counts_as_unset(tmp_path: Path) -> None:
    found = touch(tmp_path / "fuzzgate.toml")
    assert find_config(None, tmp_path, {"FUZZGATE_CONFIG": "", "WALLFACER_CONFIG": ""}) == found


def test_names_are_tried_in_order_within_a_directory(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    paths = [touch(tmp_path / name) for name in CONFIG_FILE_NAMES]
    assert CONFIG_FILE_NAMES == ("fuzzgate.toml", "fuzzgate.yaml", "fuzzgate.yml", "wallfacer.toml")
    for path in paths:
        assert find_config(None, tmp_path, {}) == path
        path.unlink()
    assert find_config(None, tmp_path, {}) is None


def test_walks_up_to_the_repository_root(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    found = touch(repo / "wallfacer.toml")
    deep = repo / "src" / "pkg"
    deep.mkdir(parents=True)
    assert find_config(None, deep, {}) == found


def test_nearest_directory_wins_over_a_better_name_further_up(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    touch(tmp_path / "fuzzgate.toml")
    nearer = touch(tmp_path / "server" / "wallfacer.toml")
    assert find_config(None, tmp_path / "server", {}) == nearer


def test_stops_at_the_directory_holding_git(tmp_path: Path) -> None:
    touch(tmp_path / "fuzzgate.toml")  # outside the repository: must not be used
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    assert find_config(None, repo / "sub", {}) is None


def test_git_file_of_a_worktree_also_marks_the_root(tmp_path: Path) -> None:
    touch(tmp_path / "fuzzgate.toml")
    repo = tmp_path / "worktree"
    repo.mkdir()
    (repo / ".git").write_text("gitdir: /elsewhere\n")
    assert find_config(None, repo, {}) is None


def test_without_git_the_walk_goes_on_to_the_root(tmp_path: Path) -> None:
    found = touch(tmp_path / "a" / "fuzzgate.yml")
    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    assert find_config(None, deep, {}) == found


def test_a_directory_named_like_a_config_is_skipped(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "fuzzgate.toml").mkdir()
    found = touch(tmp_path / "fuzzgate.yaml")
    assert find_config(None, tmp_path, {}) == found
