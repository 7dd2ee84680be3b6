"""The Node coverage collector on real Node servers started through `open_connection`, jailed and
not: the server's own code's blocks and lines call by call (never Node's internals, the preload or
`node_modules`), the constants it compares against; wrappers (`npx`) and the server's children are
not measured; a Node that does not load the preload gets behaviour feedback and says why."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fuzzgate.config.model import SandboxMode
from fuzzgate.coverage.channel import NODE_NOT_LOADED, Constant
from tests.coverage.test_coverage import SANDBOXES, SERVERS, _config, _open_pipes, _run

TARGET = SERVERS / "node_coverage_target.js"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is needed (CI installs it)")


def _project(tmp_path: Path) -> Path:
    """The target server in a project of its own (a `package.json` beside it): its own code."""
    app = tmp_path / "app"
    app.mkdir()
    (app / "package.json").write_text('{"name": "app", "version": "1.0.0"}\n')
    shutil.copy(TARGET, app / "server.js")
    return app


def _line_of(code: str) -> str:
    """`server.js:N`, the line of the target's source that holds `code`."""
    for number, line in enumerate(TARGET.read_text().splitlines(), 1):
        if code in line:
            return f"server.js:{number}"
    raise AssertionError(code)


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_node_server_hands_over_the_blocks_of_each_call_and_its_constants(
    tmp_path: Path, sandbox: SandboxMode
) -> None:
    assert NODE is not None
    app = _project(tmp_path)
    config = _config(tmp_path, sandbox, NODE, str(app / "server.js"))
    calls: dict[str, tuple[str, dict[str, object]]] = {
        # The client lists the tools before its first call, which the server's own code answers.
        "first": ("check", {"word": "door"}),
        "check": ("check", {"word": "door"}),
        "check again": ("check", {"word": "door"}),
        "count": ("count", {"n": 3}),
        "seven": ("check", {"word": "letters"}),
        "sesame": ("check", {"word": "open-sesame"}),
    }
    pipes_before = _open_pipes()
    seen, injected = _run(config, calls)
    assert _open_pipes() <= pipes_before, "every pipe end fuzzgate held is closed with the connection"
    assert injected, seen.note
    assert seen.note.startswith("coverage: Node "), seen.note
    assert "V8 precise coverage" in seen.note, seen.note
    collected = {label: value for label, value in seen.collected.items() if value is not None}
    assert collected.keys() == {"start", *calls}, "every collect answered"

    for label, coverage in collected.items():
        files = {arc.rsplit(":", 2)[0] for arc in coverage.arcs} | {line.rpartition(":")[0] for line in coverage.lines}
        # Only the server's own file: not Node's internals (readline), not the preload.
        assert files == {"server.js"}, (label, files)

    # Per call, not only new blocks: the same call again gives the same, non-empty set.
    check, again = collected["check"], collected["check again"]
    assert check.arcs and check.lines
    assert collected["first"].arcs > check.arcs, "the first call also ran the tools/list branch"
    assert (again.arcs, again.lines) == (check.arcs, check.lines)
    assert collected["count"].arcs and collected["count"].arcs != check.arcs
    # Each branch of `check` shows as blocks and lines no other branch ran.
    assert collected["seven"].arcs - check.arcs and collected["seven"].lines - check.lines
    assert collected["sesame"].arcs - check.arcs - collected["seven"].arcs
    loop, opened = _line_of("total += i;"), _line_of('return "opened";')
    assert loop in collected["count"].lines - check.lines
    assert opened in collected["sesame"].lines - check.lines - collected["seven"].lines

    # The constants come once, with the first collect after the file first ran.
    constants = collected["start"].constants
    assert Constant("open-sesame", "word") in constants
    assert Constant(7, "word", length=True) in constants
    assert all(not coverage.constants for label, coverage in collected.items() if label != "start")
    assert seen.after_close is None, "a closed channel answers None"
    assert seen.stderr == [], "the collector writes nothing on the server's stderr"


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_the_servers_children_start_without_the_collector_and_the_users_node_options_hold(
    tmp_path: Path, sandbox: SandboxMode
) -> None:
    assert NODE is not None
    app = _project(tmp_path)
    options = "--max-old-space-size=256"
    config = _config(tmp_path, sandbox, NODE, str(app / "server.js"), env={"NODE_OPTIONS": options})
    seen, injected = _run(config, {"child": ("child", {})})
    assert injected, seen.note
    assert json.loads(seen.texts["child"]) == [None, options]


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_npx_is_a_wrapper_the_package_it_runs_is_measured(tmp_path: Path, sandbox: SandboxMode) -> None:
    """`npx fake-server` runs npm (a Node process that loads the preload and leaves it be), which
    starts the package's bin: only that process measures, and only the package's own files."""
    if shutil.which("npx") is None:
        pytest.skip("npx is not installed")
    work = tmp_path / "work"
    package = work / "node_modules" / "fake-server"
    package.mkdir(parents=True)
    (package / "package.json").write_text('{"name": "fake-server", "version": "1.0.0", "bin": "server.js"}\n')
    server = package / "server.js"
    shutil.copy(TARGET, server)
    server.write_text("#!/usr/bin/env node\n" + server.read_text())
    server.chmod(0o755)
    (work / "node_modules" / ".bin").mkdir()
    (work / "node_modules" / ".bin" / "fake-server").symlink_to("../fake-server/server.js")
    (work / "package.json").write_text('{"name": "user-project", "version": "1.0.0"}\n')
    config = _config(tmp_path, sandbox, "npx", "--no-install", "fake-server")
    seen, injected = _run(config, {"check": ("check", {"word": "door"})})
    assert injected, seen.note
    assert seen.note.startswith("coverage: Node ") and seen.note.endswith("measuring fake-server"), seen.note
    coverage = seen.collected["check"]
    assert coverage is not None and coverage.arcs
    assert {arc.rsplit(":", 2)[0] for arc in coverage.arcs} == {"fake-server/server.js"}


def test_a_node_that_does_not_load_the_preload_gets_behaviour_feedback(tmp_path: Path) -> None:
    """`env -u NODE_OPTIONS node server.js`: the plan injects, the preload never loads, no hello
    comes, and the connection says so instead of failing."""
    assert NODE is not None
    app = _project(tmp_path)
    config = _config(tmp_path, SandboxMode.OFF, "env", "-u", "NODE_OPTIONS", NODE, str(app / "server.js"))
    seen, injected = _run(config, {"check": ("check", {"word": "x"})})
    assert not injected
    assert seen.note == f"behaviour: {NODE_NOT_LOADED}"
    assert seen.texts["check"] == "closed"


BUNDLED_FUNCTIONS = 40_000
"""A bundled server's size: @cyanheads/git-mcp-server 2.15.3 is one 6.6 MB file of 165,000 lines
holding 13,000 functions, all of them inside the module's own."""


@pytest.mark.parametrize("sandbox", SANDBOXES[:1])
def test_a_bundled_server_answers_while_measured(tmp_path: Path, sandbox: SandboxMode) -> None:
    """The module of a bundled server ran at start-up: its lines are those outside its thousands of
    functions. Finding them once took minutes in the server's own thread, so the collect after
    start-up went unanswered and every call after it timed out."""
    assert NODE is not None
    app = _project(tmp_path)
    server = app / "server.js"
    library = "".join(f"function helper{k}(x) {{\n  return x + {k};\n}}\n" for k in range(BUNDLED_FUNCTIONS))
    server.write_text(library + server.read_text() + "const bundledTail = helper7(1);\n")
    config = _config(tmp_path, sandbox, NODE, str(server))
    seen, injected = _run(config, {"check": ("check", {"word": "door"})})
    assert injected, seen.note
    start, check = seen.collected["start"], seen.collected["check"]
    assert start is not None, "the collect after start-up was answered"
    assert check is not None and check.arcs, "the call's collect was answered"
    tail = f"server.js:{len(server.read_text().splitlines())}"
    inside = f"server.js:{BUNDLED_FUNCTIONS * 3 - 1}"  # a helper's `return`, which never ran
    assert tail in start.lines and inside not in start.lines
