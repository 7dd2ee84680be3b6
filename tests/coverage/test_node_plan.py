"""`plan_collector` for Node servers: which command lines run Node, which process is the entry, and
what is the server's own code."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgate.coverage.plan import NODE, CollectorPlan
from tests.coverage.test_collector_plan import _plan, _script


def _project(tmp_path: Path) -> Path:
    app = tmp_path / "app"
    (app / "dist").mkdir(parents=True)
    (app / "package.json").write_text('{"name": "app"}')
    return app


@pytest.mark.parametrize("command", ["node", "/usr/local/bin/node", "nodejs", "node22"])
def test_node_runs_a_script_measured_as_its_package(tmp_path: Path, command: str) -> None:
    app = _project(tmp_path)
    plan = _plan(command, "--enable-source-maps", "-r", "dotenv/config", "dist/server.js", "--port", "1", cwd=app)
    assert (plan.inject, plan.runtime, plan.reason) == (True, NODE, f"{command.rsplit('/')[-1]} runs dist/server.js")
    assert plan.entry == app / "dist" / "server.js" and not plan.entry_in_argv
    assert plan.directories == (app,), "the nearest package.json's directory, not the script's"


def test_a_script_without_a_package_json_is_measured_by_its_directory(tmp_path: Path) -> None:
    plan = _plan("node", "server.mjs", cwd=tmp_path / "bare")
    assert plan.directories == (tmp_path / "bare",)


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (("-e", "1"), "node -e runs code from its command line: no entry file to measure"),
        (("--print=1",), "node --print runs code from its command line: no entry file to measure"),
        (("-",), "node reads its program from stdin: no entry file to measure"),
        ((), "node runs no program file (an interactive interpreter)"),
    ],
)
def test_node_without_an_entry_file_is_not_measured(args: tuple[str, ...], reason: str) -> None:
    plan = _plan("node", *args)
    assert (plan.inject, plan.reason) == (False, reason)


@pytest.mark.parametrize(
    ("command", "args", "packages"),
    [
        (
            "npx",
            ("-y", "@modelcontextprotocol/server-everything@2025.1.1"),
            ("@modelcontextprotocol/server-everything",),
        ),
        ("npx", ("--yes", "--package", "some-server@latest", "--", "serve", "--x"), ("some-server",)),
        ("npx", ("--package=a", "-p", "b", "run-it"), ("a", "b")),
        ("npm", ("exec", "--yes", "--", "tool-server"), ("tool-server",)),
    ],
)
def test_npx_measures_the_package_it_runs(command: str, args: tuple[str, ...], packages: tuple[str, ...]) -> None:
    plan = _plan(command, *args)
    assert (plan.inject, plan.runtime, plan.packages, plan.entry) == (True, NODE, packages, None)


def test_npx_of_a_shell_command_is_not_measured() -> None:
    assert _plan("npx", "-c", "node server.js").inject is False


def test_ts_runners(tmp_path: Path) -> None:
    app = _project(tmp_path)
    tsx = _plan("tsx", "--tsconfig", "tsconfig.json", "src/index.ts", cwd=app)
    assert (tsx.inject, tsx.entry, tsx.entry_in_argv, tsx.directories) == (True, app / "src/index.ts", False, (app,))
    ts_node = _plan("ts-node", "src/index.ts", cwd=app)
    assert (ts_node.entry, ts_node.entry_in_argv) == (app / "src/index.ts", True), "ts-node runs it in its own process"


def test_a_bin_whose_shebang_names_node_is_measured_as_its_package(tmp_path: Path) -> None:
    app = _project(tmp_path)
    server = _script(app / "dist", "index.js", "#!/usr/bin/env node\nrequire('./main');\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "my-server").symlink_to(server)
    plan = _plan("my-server", env={"PATH": str(bin_dir)})
    assert (plan.inject, plan.reason, plan.runtime) == (True, "my-server is a Node script", NODE)
    assert plan.directories == (app,) and plan.entry == bin_dir / "my-server"


@pytest.mark.parametrize(("command", "runtime"), [("bun", "Bun"), ("bunx", "Bun"), ("deno", "Deno")])
def test_other_javascript_runtimes_say_why_not(command: str, runtime: str) -> None:
    plan = _plan(command, "run", "server.ts")
    assert (plan.inject, plan.reason) == (
        False,
        f"{command} runs {runtime}, not Node: the collector needs Node's inspector",
    )


def test_coverage_source_adds_directories_and_npm_packages(tmp_path: Path) -> None:
    app = _project(tmp_path)
    (app / "lib").mkdir()
    plan = _plan("node", "dist/server.js", cwd=app, coverage_source=("lib", "@scope/shared", "helper"))
    assert plan.directories == (app, app / "lib")
    assert plan.packages == ("@scope/shared", "helper")


def test_env_passes_a_node_command_through() -> None:
    plan: CollectorPlan = _plan("env", "DEBUG=1", "node", "server.js")
    assert (plan.inject, plan.runtime, plan.entry) == (True, NODE, Path("/srv/project/server.js"))
