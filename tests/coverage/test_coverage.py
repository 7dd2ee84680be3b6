"""Coverage feedback from real servers started through `open_connection`, jailed and not: a Python
server hands over the arcs of its own code call by call (never the SDK's or the standard
library's) and the constants its code compares against; its children start without the collector;
servers that are not Python, or that do not load the collector, get behaviour feedback and say why."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

import anyio
import pytest

from fuzzgate.config.model import Config, FeedbackMode, SandboxMode, TargetConfig, TargetKind
from fuzzgate.config.views import ServerSettings
from fuzzgate.coverage.channel import NOT_LOADED, CallCoverage, Constant
from fuzzgate.model.outcome import OutcomeStatus
from fuzzgate.sandbox.containment import contain
from fuzzgate.target.call import call_tool
from fuzzgate.target.connection import open_connection

SERVERS = Path(__file__).resolve().parents[1] / "servers"
TARGET = SERVERS / "coverage_target.py"
NODE_SERVER = SERVERS / "node_minimal.js"
SANDBOXES = [SandboxMode.AUTO, SandboxMode.OFF]


def _config(tmp_path: Path, sandbox: SandboxMode, command: str, *args: str, **fields: object) -> Config:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    target = TargetConfig(
        kind=TargetKind.STDIO,
        command=command,
        args=args,
        cwd=work,
        sandbox=sandbox,
        **fields,  # type: ignore[arg-type]
    )
    return Config(target=target)


def _open_pipes() -> set[str]:
    """The pipes this process holds, by inode: a pipe opened and left open shows as a new one.

    A count would also move when something unrelated (a worker's own lazily closed file) closes
    during the run, which is not what the tests below check.
    """
    pipes = set()
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue
        if target.startswith("pipe:"):
            pipes.add(target)
    return pipes


class Seen:
    def __init__(self) -> None:
        self.note = ""
        self.collected: dict[str, CallCoverage | None] = {}
        self.texts: dict[str, str] = {}
        self.after_close: CallCoverage | None = None
        self.stderr: list[str] = []


def _run(config: Config, calls: Mapping[str, tuple[str, dict[str, object]]]) -> tuple[Seen, bool]:
    """Open a connection, collect once after start-up (`"start"`), then once after each call."""
    containment = contain(config.target, 1)
    assert containment is not None
    seen = Seen()

    async def body() -> bool:
        async with open_connection(ServerSettings.of(config), containment=containment) as connection:
            seen.note = connection.feedback_note
            channel = connection.coverage
            if channel is not None:
                seen.collected["start"] = await channel.collect(10)
            for label, (tool, arguments) in calls.items():
                outcome = await call_tool(connection, tool, arguments, 10)
                assert outcome.status is OutcomeStatus.OK, outcome
                seen.texts[label] = outcome.text
                if channel is not None:
                    seen.collected[label] = await channel.collect(10)
            assert connection.server is not None
            seen.stderr = connection.server.stderr.tail(50)
        if channel is None:
            return False
        seen.after_close = await channel.collect(1)
        return True

    try:
        return seen, anyio.run(body)
    finally:
        containment.close()


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_python_server_hands_over_the_arcs_of_each_call_and_its_constants(
    tmp_path: Path, sandbox: SandboxMode
) -> None:
    config = _config(tmp_path, sandbox, sys.executable, str(TARGET))
    calls: dict[str, tuple[str, dict[str, object]]] = {
        "check": ("check", {"word": "door"}),
        "check again": ("check", {"word": "door"}),
        "count": ("count", {"n": 3}),
        "seven": ("check", {"word": "letters"}),
    }
    pipes_before = _open_pipes()
    seen, injected = _run(config, calls)
    assert _open_pipes() <= pipes_before, "every pipe end fuzzgate held is closed with the connection"
    assert injected, seen.note
    assert seen.note.startswith("coverage: Python "), seen.note
    assert "C tracer" in seen.note and "measuring tests/servers" in seen.note, seen.note
    collected = {label: value for label, value in seen.collected.items() if value is not None}
    assert collected.keys() == {"start", *calls}, "every collect answered"

    for label, coverage in collected.items():
        files = {arc.rsplit(":", 2)[0] for arc in coverage.arcs}
        # Only the server's own file: not the SDK, not the standard library, not the collector.
        assert files == {"coverage_target.py"}, (label, files)

    # Per call, not only new arcs: the same call again gives the same, non-empty set.
    assert collected["check"].arcs
    assert collected["check again"].arcs == collected["check"].arcs
    assert collected["count"].arcs and collected["count"].arcs != collected["check"].arcs
    # The loop's back edge runs only in `count`, the length branch only for a seven-letter word.
    assert collected["seven"].arcs - collected["check"].arcs
    assert not collected["count"].arcs & collected["check"].arcs

    # The constants come once, with the first collect after the file first ran.
    assert Constant("open-sesame", "word") in collected["start"].constants
    assert Constant(7, "word", length=True) in collected["start"].constants
    assert all(not coverage.constants for label, coverage in collected.items() if label != "start")
    assert seen.after_close is None, "a closed channel answers None"
    assert seen.stderr == [], "the collector writes nothing on the server's stderr"


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_the_servers_children_start_without_the_collector_and_the_users_settings_hold(
    tmp_path: Path, sandbox: SandboxMode
) -> None:
    """The user's PYTHONPATH comes after the collector's and is all the server's children see;
    the user's own sitecustomize (which the collector's hides) still runs."""
    user_site = tmp_path / "user-site"
    user_site.mkdir()
    (user_site / "sitecustomize.py").write_text("import os\nos.environ['USER_SITECUSTOMIZE'] = 'ran'\n")
    config = _config(tmp_path, sandbox, sys.executable, str(TARGET), env={"PYTHONPATH": str(user_site)})
    seen, injected = _run(config, {"child": ("child", {})})
    assert injected, seen.note
    assert seen.texts["child"] == f"{(None, str(user_site), False)!r} user-site=ran"


def test_switched_off_for_some_calls_the_next_measured_one_is_measured_whole(tmp_path: Path) -> None:
    """An MCP server's sync tools run in its worker threads: switched off (`measure(False)`) for two
    calls and on again, the collector measures the next call as it did before, and nothing of the
    calls in between."""
    config = _config(tmp_path, SandboxMode.OFF, sys.executable, str(TARGET))
    containment = contain(config.target, 1)
    assert containment is not None

    async def body() -> tuple[bool, dict[str, CallCoverage | None]]:
        collected: dict[str, CallCoverage | None] = {}
        async with open_connection(ServerSettings.of(config), containment=containment) as connection:
            channel = connection.coverage
            assert channel is not None and channel.info is not None, connection.feedback_note
            await channel.collect(10)
            for label, measured, tool, arguments in (
                ("count", True, "count", {"n": 3}),
                ("off: check", False, "check", {"word": "letters"}),
                ("off: count", False, "count", {"n": 3}),
                ("count again", True, "count", {"n": 3}),
                ("check", True, "check", {"word": "door"}),
            ):
                await channel.measure(measured, 10)
                outcome = await call_tool(connection, tool, arguments, 10)
                assert outcome.status is OutcomeStatus.OK, outcome
                if measured:
                    collected[label] = await channel.collect(10)
            return channel.info.pause, collected

    try:
        pause, collected = anyio.run(body)
    finally:
        containment.close()
    assert pause, "the collector offers to switch off"
    count, again, check = collected["count"], collected["count again"], collected["check"]
    assert count is not None and again is not None and check is not None
    # Nothing of the unmeasured `check` leaks into the next answer, and measuring goes on after it.
    assert count.arcs and again.arcs == count.arcs
    assert check.arcs and not check.arcs & count.arcs


def test_feedback_off_and_behaviour_inject_nothing(tmp_path: Path) -> None:
    for mode, note in (
        (FeedbackMode.OFF, "off: feedback = off"),
        (FeedbackMode.BEHAVIOUR, "behaviour: feedback = behaviour"),
    ):
        config = _config(tmp_path, SandboxMode.OFF, sys.executable, str(TARGET), feedback=mode)
        seen, injected = _run(config, {"check": ("check", {"word": "x"})})
        assert not injected
        assert seen.note == note


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_bun_server_gets_behaviour_feedback_and_says_why(tmp_path: Path, sandbox: SandboxMode) -> None:
    """A server on a JavaScript runtime that is not Node (its shebang names Bun) starts as usual,
    without the collector (Node servers get theirs: tests/coverage/test_node_collector.py)."""
    node = shutil.which("node")
    assert node is not None, "node is needed (CI installs it)"
    bun = tmp_path / "bin" / "bun"
    bun.parent.mkdir()
    bun.symlink_to(node)
    server = tmp_path / "server.js"
    server.write_text(f"#!{bun}\n" + NODE_SERVER.read_text())
    server.chmod(0o755)
    config = _config(tmp_path, sandbox, str(server))
    seen, injected = _run(config, {"echo": ("echo", {"text": "hi"})})
    assert not injected
    assert seen.texts["echo"] == "hi"
    assert seen.note == "behaviour: server.js runs on Bun, not Node: the collector needs Node's inspector"


def test_a_server_that_does_not_load_the_collector_gets_behaviour_feedback(tmp_path: Path) -> None:
    """A console script whose interpreter ignores PYTHONPATH (`-I`): the plan injects, no hello
    comes, and the connection says so instead of failing."""
    script = tmp_path / "isolated-server"
    script.write_text(f"#!{sys.executable} -I\nimport runpy\nrunpy.run_path({str(TARGET)!r}, run_name='__main__')\n")
    script.chmod(0o755)
    config = _config(tmp_path, SandboxMode.OFF, str(script))
    pipes_before = _open_pipes()
    seen, injected = _run(config, {"check": ("check", {"word": "x"})})
    assert _open_pipes() <= pipes_before
    assert not injected
    assert seen.note == f"behaviour: {NOT_LOADED}"
    assert seen.texts["check"] == "closed"
