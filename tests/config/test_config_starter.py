"""The `fuzzgate init` starter files load cleanly; the reference documents every key and flag."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzgate.config import OVERRIDE_FLAGS, Config, Overrides, TargetConfig, TargetKind, load_config, starter_config
from fuzzgate.config._schema import FUZZGATE_KEYS, SECTION_KEYS, TARGET_KEYS, WALLFACER_ONLY_KINDS
from fuzzgate.config.model import Shard

Loader = Callable[..., tuple[Config, list[str]]]
KINDS: list[Literal["stdio", "http"]] = ["stdio", "http"]
DOCS = Path(__file__).parents[2] / "docs" / "configuration.md"

_COMMENTED = re.compile(r"^# ((?:[a-z_]+ = .*)|(?:\[[a-z_.]+\]))$", re.M)


def uncommented(text: str) -> str:
    return _COMMENTED.sub(r"\1", text)


def defaults_beside(directory: Path, target: TargetConfig) -> Config:
    """The defaults for a config file in `directory`: its output and baseline directories beside it."""
    return Config(
        target=target,
        out_dir=directory / ".fuzzgate/out",
        baseline_dir=directory / ".fuzzgate/baseline",
        corpus=directory / ".fuzzgate/corpus",
    )


@pytest.mark.parametrize("kind", KINDS)
def test_starter_loads_without_warnings_and_with_defaults(
    load: Loader, tmp_path: Path, kind: Literal["stdio", "http"]
) -> None:
    config, warnings = load(starter_config(kind), environ={})
    assert warnings == []
    assert config.target.kind is TargetKind(kind)
    assert config.target_line == starter_config(kind).splitlines().index("[target]") + 1
    assert replace(config, source=None, target_line=1) == defaults_beside(tmp_path, config.target)


@pytest.mark.parametrize("kind", KINDS)
def test_uncommenting_every_example_still_loads_and_shows_the_defaults(
    load: Loader, tmp_path: Path, kind: Literal["stdio", "http"]
) -> None:
    text = uncommented(starter_config(kind))
    assert text.count("\n# ") < starter_config(kind).count("\n# ")
    config, warnings = load(text, environ={})
    assert warnings == []
    # keys without a default show an example
    examples = {"cases": 100, "max_tools": 20, "seed": 42, "shard": Shard(1, 4), "store": "redis://127.0.0.1:6379/0"}
    defaults = defaults_beside(tmp_path, config.target)
    cleared = replace(
        config, source=None, target_line=1, cases=None, max_tools=None, seed=None, shard=None, store=None,
        base=None, changed_files=None,
    )  # fmt: skip
    assert cleared == defaults
    assert config.base == tmp_path / "../base" and config.changed_files == tmp_path / "changed.txt"
    assert {key: getattr(config, key) for key in examples} == examples
    assert config.target.name == "my-server"
    assert config.target.timeout_ms == 5000
    # An HTTP target's example command is one fuzzgate starts and reaches at the URL.
    assert config.target.command == "python"


@pytest.mark.parametrize("kind", KINDS)
def test_starter_shows_every_fuzzgate_key(kind: Literal["stdio", "http"]) -> None:
    text = starter_config(kind)
    for key in FUZZGATE_KEYS:
        assert re.search(rf"^# {key} = ", text, re.M), key
    assert "${" not in text  # an unset variable in a comment would be an error


def test_docs_cover_every_section_key_and_flag() -> None:
    docs = DOCS.read_text(encoding="utf-8")
    for section, keys in SECTION_KEYS.items():
        assert f"[{section}" in docs, section
        for key in keys:
            assert f"`{key}`" in docs, f"{section}.{key}"
    for key in (*TARGET_KEYS, *WALLFACER_ONLY_KINDS):
        assert f"`{key}`" in docs, key
    for flag in OVERRIDE_FLAGS.values():
        assert f"`{flag}" in docs, flag


_VALUE = st.text(st.characters(exclude_categories=("Cs",)), max_size=30)


@given(command=_VALUE.filter(str.strip), args=st.lists(_VALUE, max_size=4))
def test_a_given_target_reads_back_as_given_whatever_its_characters(command: str, args: list[str]) -> None:
    """`init --command --arg` writes TOML the loader reads back whole: quotes, backslashes, control
    characters, DEL and `${NAME}` (not expanded) included."""
    with tempfile.TemporaryDirectory() as directory:
        for kind in KINDS:
            url = "http://127.0.0.1:9/mcp?q=${X}" if kind == "http" else None
            path = Path(directory) / "fuzzgate.toml"
            path.write_text(starter_config(kind, command=command, args=args, url=url), encoding="utf-8")
            warnings: list[str] = []
            target = load_config(path, Overrides(), {"X": "no"}, warn=warnings.append).target
            assert (target.command, target.args, target.url) == (command, tuple(args), url) and warnings == []


@pytest.mark.parametrize(
    ("command", "args", "name"),
    [
        (
            "node",
            ["/srv/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", "/tmp"],
            "server-filesystem",
        ),
        ("node", ["dist/index.js"], "my-repo"),
        ("node", ["/a/pkg/build/src/main.js"], "pkg"),
        ("npx", ["-y", "@modelcontextprotocol/server-everything@2.0.0", "stdio"], "server-everything"),
        ("uvx", ["mcp-server-git", "--repository", "."], "mcp-server-git"),
        ("uvx", ["mcp-server-fetch==2025.1"], "mcp-server-fetch"),
        ("python", ["-m", "mcp_server_time"], "mcp_server_time"),
        ("python", ["weather_server.py"], None),
        (None, [], None),
    ],
)
def test_init_names_a_server_whose_derived_name_names_none(
    command: str | None, args: list[str], name: str | None
) -> None:
    """Every Node server was `index` (from `dist/index.js`) and every npx one `npx`: the name keys
    the corpus directory, the SARIF category and the shared store, so two servers collided."""
    from fuzzgate.config.starter import starter_name

    assert starter_name(command, args, Path("/work/my-repo")) == name


def test_the_name_init_writes_is_the_one_a_run_uses(tmp_path: Path) -> None:
    path = tmp_path / "fuzzgate.toml"
    args = ("/srv/server-filesystem/dist/index.js",)
    path.write_text(starter_config("stdio", command="node", args=args, name="server-filesystem"), encoding="utf-8")
    warnings: list[str] = []
    config = load_config(path, Overrides(), {}, warn=warnings.append)
    assert config.target.display_name == "server-filesystem" and warnings == []
    unnamed = tmp_path / "unnamed.toml"
    unnamed.write_text(starter_config("stdio", command="node", args=args), encoding="utf-8")
    assert load_config(unnamed, Overrides(), {}, warn=warnings.append).target.display_name == "index"
