"""Paths mean the same wherever fuzzgate starts: `out`, `baseline` and the stdio server's working
directory are taken from the config file's directory when they come from the file (or are its
defaults), and from the current directory when they come from a flag."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgate.config import Config, Overrides, find_config, load_config

STDIO = '[target]\ncommand = "python"\nargs = ["server.py"]\n'


def _load(path: Path | None, overrides: Overrides | None = None) -> Config:
    warnings: list[str] = []
    config = load_config(path, overrides or Overrides(), {}, warn=warnings.append)
    assert warnings == []
    return config


@pytest.fixture
def repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with its config at the root, and the current directory two levels below it."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    sub = root / "src" / "pkg"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    return root


def test_from_a_subdirectory_the_defaults_are_beside_the_found_file(repository: Path) -> None:
    (repository / "fuzzgate.toml").write_text(STDIO)
    path = find_config(None, Path.cwd(), {})
    assert path == repository / "fuzzgate.toml"
    config = _load(path)
    assert config.out_dir == repository / ".fuzzgate/out"
    assert config.baseline_dir == repository / ".fuzzgate/baseline"
    assert config.target.cwd == repository


def test_relative_file_values_are_taken_from_the_files_directory(repository: Path) -> None:
    (repository / "fuzzgate.toml").write_text(STDIO + '[fuzzgate]\nout = "reports/fuzz"\nbaseline = "../shared"\n')
    config = _load(find_config(None, Path.cwd(), {}))
    assert config.out_dir == repository / "reports/fuzz"
    assert config.baseline_dir == repository / "../shared"


def test_absolute_file_values_are_kept(repository: Path, tmp_path: Path) -> None:
    text = STDIO + f'[fuzzgate]\nout = "{tmp_path / "o"}"\nbaseline = "{tmp_path / "b"}"\n'
    (repository / "fuzzgate.toml").write_text(text)
    config = _load(repository / "fuzzgate.toml")
    assert (config.out_dir, config.baseline_dir) == (tmp_path / "o", tmp_path / "b")


def test_flags_stay_relative_to_the_current_directory(repository: Path) -> None:
    (repository / "fuzzgate.toml").write_text(STDIO + '[fuzzgate]\nout = "file-out"\nbaseline = "file-baseline"\n')
    config = _load(repository / "fuzzgate.toml", Overrides(out=Path("flag-out"), baseline="flag-baseline"))
    assert config.out_dir == Path("flag-out")
    assert config.baseline_dir == Path("flag-baseline")


def test_without_a_file_the_defaults_are_relative_to_the_current_directory() -> None:
    config = _load(None, Overrides(command="python", args=("server.py",)))
    assert config.out_dir == Path(".fuzzgate/out")
    assert config.baseline_dir == Path(".fuzzgate/baseline")
    assert config.target.cwd is None


def test_a_command_line_from_flags_runs_in_the_current_directory(repository: Path) -> None:
    (repository / "fuzzgate.toml").write_text(STDIO)
    path = repository / "fuzzgate.toml"
    assert _load(path, Overrides(command="node", args=("dist/index.js",))).target.cwd is None
    assert _load(path, Overrides(args=("other.py",))).target.cwd is None
    assert _load(path).target.cwd == repository


def test_the_files_cwd_wins_over_the_default(repository: Path) -> None:
    (repository / "fuzzgate.toml").write_text(STDIO + 'cwd = "server"\n')
    assert _load(repository / "fuzzgate.toml").target.cwd == repository / "server"
    # The file's cwd also applies to a command line from flags, as it did before.
    assert _load(repository / "fuzzgate.toml", Overrides(command="node")).target.cwd == repository / "server"


def test_an_http_target_has_no_working_directory(repository: Path) -> None:
    (repository / "fuzzgate.toml").write_text('[target]\nurl = "http://127.0.0.1:8000/mcp"\n')
    config = _load(repository / "fuzzgate.toml")
    assert config.target.cwd is None
    assert config.out_dir == repository / ".fuzzgate/out"
