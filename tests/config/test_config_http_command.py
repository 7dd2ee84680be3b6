"""An HTTP target may name the command that serves it: `kind = "http"` with `command`, `args`,
`env` and `cwd` next to `url`, read as a stdio server's command line is."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgate.config import Overrides, TargetKind
from fuzzgate.model.errors import ConfigError
from tests.config.conftest import Loader

SERVED = """\
[target]
kind = "http"
url = "http://127.0.0.1:8123/mcp"
command = "python"
args = ["server.py", "--port", "8123"]
env = { API_TOKEN = "s3cret-token" }

[target.headers]
Authorization = "Bearer abc"
"""


def test_an_http_target_keeps_the_command_that_serves_it(load: Loader, tmp_path: Path) -> None:
    config, warnings = load(SERVED)
    target = config.target
    assert warnings == []
    assert target.kind is TargetKind.HTTP
    assert target.url == "http://127.0.0.1:8123/mcp"
    assert target.headers == {"Authorization": "Bearer abc"}
    assert target.command == "python"
    assert target.args == ("server.py", "--port", "8123")
    assert target.env == {"API_TOKEN": "s3cret-token"}
    # As for a stdio server: the file's command line runs from the file's directory.
    assert target.cwd == tmp_path
    assert target.launched


def test_the_same_in_yaml_with_a_cwd_relative_to_the_file(load: Loader, tmp_path: Path) -> None:
    text = (
        "target:\n  kind: http\n  url: http://localhost:9000/mcp\n  command: node\n"
        "  args: [dist/index.js]\n  cwd: server\n"
    )
    target = load(text, "fuzzgate.yaml")[0].target
    assert (target.kind, target.command, target.args) == (TargetKind.HTTP, "node", ("dist/index.js",))
    assert target.cwd == tmp_path / "server"


def test_without_a_command_the_server_is_the_users_and_command_keys_are_ignored(load: Loader) -> None:
    config, warnings = load('[target]\nkind = "http"\nurl = "http://h:1/mcp"\nargs = ["x"]\ncwd = "d"\n')
    target = config.target
    assert target.command is None and target.args == () and target.cwd is None
    assert not target.launched
    assert warnings == [
        f"fuzzgate.toml: [target] {key}: ignored, it applies only to a server fuzzgate starts"
        " (a stdio target, or an http target with a command)"
        for key in ("args", "cwd")
    ]


def test_a_stdio_target_is_launched_too(load: Loader) -> None:
    assert load('[target]\ncommand = "srv"\n')[0].target.launched


def test_command_and_url_without_kind_still_ask_for_kind(load: Loader) -> None:
    with pytest.raises(ConfigError) as caught:
        load('[target]\ncommand = "srv"\nurl = "http://h/mcp"\n')
    assert caught.value.message == "fuzzgate.toml: [target] kind: missing, required when both command and url are set"
    assert caught.value.hint is not None and 'kind = "http"' in caught.value.hint


def test_a_command_still_needs_the_url(load: Loader) -> None:
    with pytest.raises(ConfigError) as caught:
        load('[target]\nkind = "http"\ncommand = "srv"\n')
    assert caught.value.message == 'fuzzgate.toml: [target] url: missing, required when kind = "http"'


def test_flags_over_a_served_http_target(load: Loader, tmp_path: Path) -> None:
    # --url replaces only the URL: the file's command still serves it.
    target = load(SERVED, overrides=Overrides(url="http://127.0.0.1:9999/mcp"))[0].target
    assert (target.kind, target.url, target.command) == (TargetKind.HTTP, "http://127.0.0.1:9999/mcp", "python")
    assert target.cwd == tmp_path and target.env == {"API_TOKEN": "s3cret-token"}
    # --arg replaces the file's args, and then runs in the working directory, where it was typed.
    target = load(SERVED, overrides=Overrides(args=("other.py",)))[0].target
    assert (target.kind, target.command, target.args, target.cwd) == (TargetKind.HTTP, "python", ("other.py",), None)
    # --header is laid over the file's headers.
    target = load(SERVED, overrides=Overrides(headers=("Authorization: Bearer xyz",)))[0].target
    assert target.headers == {"Authorization": "Bearer xyz"} and target.command == "python"
    # --command makes a stdio target of its own: the file's http target does not apply.
    target = load(SERVED, overrides=Overrides(command="node"))[0].target
    assert (target.kind, target.command, target.url, target.env) == (TargetKind.STDIO, "node", None, {})


def test_arg_needs_a_command_to_replace(load: Loader) -> None:
    with pytest.raises(ConfigError) as caught:
        load('[target]\nurl = "http://h/mcp"\n', overrides=Overrides(args=("x",)))
    assert caught.value.message.startswith("--arg: expected a stdio target or an http one with a command")


def test_command_line_values_are_checked_as_for_stdio(load: Loader) -> None:
    with pytest.raises(ConfigError) as caught:
        load('[target]\nkind = "http"\nurl = "http://h/mcp"\ncommand = "srv"\nenv = { PORT = 8080 }\n')
    assert caught.value.message.startswith("fuzzgate.toml: [target.env]")
    assert "8080" not in caught.value.message
