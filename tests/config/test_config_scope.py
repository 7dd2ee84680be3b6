"""`[target] scope` (existing directories, relative to the file like `cwd`) and `[target] sandbox`
with its `--sandbox` flag."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from fuzzgate.cli.main import _overrides, build_parser
from fuzzgate.config import Config, Overrides
from fuzzgate.config.model import SandboxMode, TargetKind
from fuzzgate.model.errors import ConfigError

Loader = Callable[..., tuple[Config, list[str]]]

STDIO = '[target]\ncommand = "srv"\n'


def test_defaults_infer_the_scope_and_sandbox_where_it_works(load: Loader) -> None:
    config, warnings = load(STDIO)
    assert config.target.scope == ()
    assert config.target.sandbox is SandboxMode.AUTO
    assert warnings == []


def test_scope_is_relative_to_the_config_file_and_resolved(load: Loader, tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "repo" / "src").mkdir(parents=True)
    elsewhere = tmp_path.parent / f"{tmp_path.name}-elsewhere"
    elsewhere.mkdir()
    text = STDIO + f'scope = ["data", "./repo/src/..", "{elsewhere}"]\n'
    config, warnings = load(text)
    assert config.target.scope == (tmp_path / "data", tmp_path / "repo", elsewhere)
    assert all(path.is_absolute() for path in config.target.scope)
    assert warnings == []


def test_scope_from_a_file_in_another_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fuzzgate.config import load_config

    project = tmp_path / "project"
    (project / "work").mkdir(parents=True)
    (project / "fuzzgate.toml").write_text(STDIO + 'scope = ["work"]\n')
    monkeypatch.chdir(tmp_path)
    config = load_config(project / "fuzzgate.toml", Overrides(), {}, warn=lambda _: None)
    assert config.target.scope == (project / "work",)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            '["missing"]',
            "fuzzgate.toml: [target] scope[0]: expected an existing directory, got {tmp}/missing, which does not exist",
        ),
        (
            '[".", "file.txt"]',
            "fuzzgate.toml: [target] scope[1]: expected an existing directory, got {tmp}/file.txt, which is a file",
        ),
        ('"."', 'fuzzgate.toml: [target] scope: expected a list of strings (a directory each), got "."'),
        ("[1]", "fuzzgate.toml: [target] scope[0]: expected a directory, got 1"),
        ('[""]', 'fuzzgate.toml: [target] scope[0]: expected a non-empty string, got ""'),
    ],
)
def test_a_bad_scope_names_the_file_section_and_key(load: Loader, tmp_path: Path, value: str, message: str) -> None:
    (tmp_path / "file.txt").write_text("")
    with pytest.raises(ConfigError) as caught:
        load(STDIO + f"scope = {value}\n")
    assert caught.value.message == message.format(tmp=tmp_path)


def test_the_sandbox_mode_comes_from_the_file_or_the_flag(load: Loader) -> None:
    for mode in ("auto", "required", "off"):
        config, _ = load(STDIO + f'sandbox = "{mode}"\n')
        assert config.target.sandbox is SandboxMode(mode)
    config, _ = load(STDIO + 'sandbox = "required"\n', overrides=Overrides(sandbox="off"))
    assert config.target.sandbox is SandboxMode.OFF


def test_a_bad_sandbox_mode_is_an_error(load: Loader) -> None:
    with pytest.raises(ConfigError) as caught:
        load(STDIO + 'sandbox = "yes"\n')
    assert caught.value.message == (
        'fuzzgate.toml: [target] sandbox: expected one of "auto", "required", "off", got "yes"'
    )
    with pytest.raises(ConfigError) as caught:
        load(STDIO, overrides=Overrides(sandbox="never"))
    assert caught.value.message == '--sandbox: expected one of "auto", "required", "off", got "never"'


def test_a_misspelt_key_suggests_the_right_one(load: Loader) -> None:
    _, warnings = load(STDIO + 'sandbx = "off"\n')
    assert warnings == ["fuzzgate.toml: [target] sandbx: unknown key, ignored (did you mean 'sandbox'?)"]


def test_an_http_target_with_a_command_has_them_too(load: Loader, tmp_path: Path) -> None:
    (tmp_path / "srv").mkdir()
    text = '[target]\nkind = "http"\nurl = "http://127.0.0.1:8000/mcp"\ncommand = "serve"\n'
    config, _ = load(text + 'scope = ["srv"]\nsandbox = "off"\n')
    assert config.target.kind is TargetKind.HTTP
    assert config.target.scope == (tmp_path / "srv",)
    assert config.target.sandbox is SandboxMode.OFF


def test_the_cli_flag_reaches_the_overrides() -> None:
    ns = build_parser().parse_args(["run", "--command", "srv", "--sandbox", "required"])
    assert _overrides(ns).sandbox == "required"
    assert _overrides(build_parser().parse_args(["tools", "--command", "srv"])).sandbox is None
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--sandbox", "sometimes"])
