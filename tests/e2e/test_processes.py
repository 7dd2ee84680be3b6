"""Nothing a server starts outlives the run, and no run ends with a traceback or an `Exception
ignored` message: servers whose children leave their session, double-fork, hold the pipes, ignore
SIGTERM or hang, and every way a run ends (findings, budget, crash restarts, start-up failures)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import CliRun, fuzzgate, stdio_target

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="containment beyond the process group is Linux's"),
]

SERVERS = Path(__file__).resolve().parents[1] / "servers"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "servers"
LEAKY = SERVERS / "leaky.py"
HOSTILE = SERVERS / "hostile.py"


def _survivors(marker: str) -> list[int]:
    """Processes whose command line holds `marker` (a zombie's is empty: it is dead)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def _assert_clean_exit(run: CliRun) -> None:
    assert "Exception ignored" not in run.stderr, run.stderr
    assert "Traceback" not in run.stderr, run.stderr


@pytest.fixture
def marker() -> Iterator[str]:
    """A unique text in the command line of every process leaky.py starts; survivors of a failed
    test are killed afterwards."""
    text = f"fuzzgate-leaky-{uuid.uuid4().hex}"
    yield text
    for pid in _survivors(text):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _leaky(tmp_path: Path, marker: str, *flags: str) -> tuple[list[str], Path]:
    # Outside the run's working directory (`work`), which is the server's scope: a throwaway copy.
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    (tmp_path / "work").mkdir()
    # A prefix, not the directory: a directory named on the command line would join the server's
    # scope and be given to it as a throwaway copy (as would one below the working directory). And
    # no sandbox: these tests are about fuzzgate's own cleanup where no PID namespace does it (the
    # Docker action, sandbox = "off").
    prefix = f"--arg=--pid-prefix={pid_dir}/pid-"
    target = ["--sandbox", "off", "--command", sys.executable, f"--arg={LEAKY}", f"--arg=--marker={marker}", prefix]
    return [*target, *(f"--arg={flag}" for flag in flags)], pid_dir


def test_children_that_leave_session_or_parent_die_with_the_server(tmp_path: Path, marker: str) -> None:
    target, pid_dir = _leaky(tmp_path, marker, "--helper-at-start")
    run = fuzzgate(
        "run", *target, "--exclude", "hang", "--cases", "2", "--budget", "60s", "--timeout", "2s",
        "--replays", "1", "--seed", "1", cwd=tmp_path / "work",
    )  # fmt: skip
    assert run.code == 1, run.stderr
    assert run.findings(kind="crash", name="crash_leaving_child")
    started = {path.stem.split("-")[1] for path in pid_dir.glob("*.pid")}
    assert started == {"session", "daemon"}, "the tools did not start their processes"
    assert [path.name for path in pid_dir.glob("*.pid") if _alive(int(path.stem.split("-")[2]))] == []
    assert _survivors(marker) == []
    _assert_clean_exit(run)


def test_a_server_that_ignores_sigterm_and_hangs_is_killed(tmp_path: Path, marker: str) -> None:
    target, pid_dir = _leaky(tmp_path, marker, "--ignore-sigterm")
    run = fuzzgate(
        "run", *target, "--include", "hang", "--include", "start_session_leader", "--cases", "1",
        "--budget", "60s", "--timeout", "1s", "--replays", "1", "--seed", "1", cwd=tmp_path / "work",
    )  # fmt: skip
    # A hang is a high-severity finding: exit 1, the documented code for new findings.
    assert run.code == 1, run.stderr
    assert run.findings(kind="hang", name="hang")
    assert list(pid_dir.glob("pid-session-*.pid")), "the session leader was not started"
    assert _survivors(marker) == []
    _assert_clean_exit(run)


def test_a_run_that_restarts_crashed_servers_and_ends_by_budget_exits_cleanly(tmp_path: Path) -> None:
    run = fuzzgate(
        "run", *stdio_target("buggy_server.py"), "--include", "format_label", "--include", "sync_repository",
        "--budget", "15s", "--timeout", "1s", "--replays", "1", "--seed", "2", cwd=tmp_path,
        env={"FUZZGATE_EXAMPLE_MARKER_DIR": str(tmp_path)},
    )  # fmt: skip
    # Ended by the budget: what it found depends on how many calls the machine's load allowed, so
    # the exit code is only the one its findings make. Either planted bug ends the server (seed 2's
    # first case of sync_repository hangs); each it met was followed by a restart.
    assert run.code in (0, 1), run.stderr
    assert run.report["verdict"] == ("fail" if run.code == 1 else "pass")
    if run.findings(kind="crash") or run.findings(kind="hang"):
        assert "restarted the server" in run.stdout
    _assert_clean_exit(run)


def test_restarts_and_replays_on_warm_spares_confirm_the_crashes_and_leave_no_process(
    tmp_path: Path, marker: str
) -> None:
    # The server's files under a directory named by the marker: every process of every server
    # started (spares no one took included) carries it in its command line.
    home = tmp_path / "work" / marker
    home.mkdir(parents=True)
    for name in ("buggy_server.py", "_serve.py"):
        shutil.copy(EXAMPLES / name, home / name)
    run = fuzzgate(
        "run", "--command", sys.executable, f"--arg={home / 'buggy_server.py'}", "--include", "batch_export",
        "--include", "format_label", "--cases", "30", "--budget", "60s", "--timeout", "2s", "--replays", "3",
        "--seed", "2", cwd=tmp_path / "work", env={"FUZZGATE_EXAMPLE_MARKER_DIR": str(tmp_path)},
    )  # fmt: skip
    assert run.code == 1, run.stderr
    crashes = run.findings(kind="crash")
    assert "batch_export" in {f["name"] for f in crashes}
    # Confirmed on spares as on fresh servers: every replay failed the same way.
    assert all((f["replays"], f["reproduced"], f["unconfirmed"]) == (3, 3, False) for f in crashes)
    # From the second restart on, the server fuzzing restarts is a spare started before it was needed.
    assert "; a warm spare)" in run.stdout, run.stdout
    assert _survivors(marker) == []
    _assert_clean_exit(run)


@pytest.mark.parametrize("command", ["run", "tools"])
def test_a_tool_list_the_mcp_schema_refuses_is_named_for_what_it_is(command: str, tmp_path: Path) -> None:
    target = ["--command", sys.executable, f"--arg={HOSTILE}", "--arg=--untyped-schema"]
    run = fuzzgate(command, *target, *(["--budget", "5s"] if command == "run" else []), cwd=tmp_path)
    assert run.code == 3, run.stdout + run.stderr
    # Where the reply is at fault and what the schema says, rather than pydantic's bare count.
    assert (
        "could not list the server's tools: its reply does not follow the MCP schema (1 error(s) in "
        "ListToolsResult; the first at `tools.0.inputSchema.type`: Field required)"
    ) in run.stderr, run.stderr
    assert "the server's reply is at fault" in run.stderr
    _assert_clean_exit(run)


@pytest.mark.parametrize(
    "target",
    [
        ["--command", "/nonexistent/mcp-server"],
        ["--command", sys.executable, f"--arg={HOSTILE}", "--arg=--die-at-start"],
        ["--command", sys.executable, f"--arg={HOSTILE}", "--arg=--never-initialize", "--startup-timeout", "2s"],
    ],
    ids=["missing-command", "exits-at-once", "never-initializes"],
)
def test_start_up_failures_exit_3_without_a_traceback(target: list[str], tmp_path: Path) -> None:
    run = fuzzgate("run", *target, "--budget", "5s", cwd=tmp_path)
    assert run.code == 3, run.stderr
    assert "could not start the stdio server" in run.stderr
    _assert_clean_exit(run)


def test_a_server_that_exits_at_start_without_a_word_is_said_so(tmp_path: Path) -> None:
    silent = tmp_path / "silent.py"
    silent.write_text("import sys\nsys.exit(1)\n")
    run = fuzzgate("run", "--command", sys.executable, f"--arg={silent}", "--budget", "5s", cwd=tmp_path)
    assert run.code == 3, run.stderr
    assert "the server exited with status 1 and wrote nothing on stderr" in run.stderr, run.stderr
    assert "run the command by hand, with the same environment, to see why" in run.stderr
    _assert_clean_exit(run)


def test_a_servers_terminal_sequences_at_start_are_shown_as_escapes_under_fuzzgates_lines(tmp_path: Path) -> None:
    # A server that failed to start had its last stderr lines printed as they were: cursor-up and
    # erase-line sequences wiped fuzzgate's own error line, and a green "PASS: ..." line stood where
    # fuzzgate's lines do.
    hostile = tmp_path / "ansi.py"
    hostile.write_text(
        "import sys\n"
        "sys.stderr.write('\\x1b[1A\\x1b[2Kwiped\\n\\x1b]52;c;Y2xpcA==\\x07clip\\n')\n"
        "sys.stderr.write('\\x1b[32mPASS: no new finding\\x1b[0m\\n')\n"
        "sys.exit(1)\n"
    )
    run = fuzzgate("run", "--command", sys.executable, f"--arg={hostile}", "--budget", "5s", cwd=tmp_path)
    assert run.code == 3, run.stderr
    assert "\x1b" not in run.stderr and "\x07" not in run.stderr
    lines = run.stderr.splitlines()
    assert "  \\x1b[1A\\x1b[2Kwiped" in lines
    assert "  \\x1b]52;c;Y2xpcA==\\x07clip" in lines
    assert "  \\x1b[32mPASS: no new finding\\x1b[0m" in lines
    _assert_clean_exit(run)


def test_the_wait_for_a_server_that_never_answers_initialize_fits_the_budgets_promise(tmp_path: Path) -> None:
    # The wait was the rest of the budget plus its whole margin (10 s here), with stopping the
    # server and writing the outputs after it: a 5 s budget ended after 16 s against a promised 15.
    # The wait now ends where the promise leaves time for those: budget + margin - 2.5 s at most.
    run = fuzzgate(
        "run", "--command", sys.executable, f"--arg={HOSTILE}", "--arg=--never-initialize", "--budget", "1s",
        cwd=tmp_path,
    )
    assert run.code == 3, run.stderr
    waited = float(run.stderr.split("no answer to initialize within ", 1)[1].split("s", 1)[0])
    assert waited <= 1 + 10 - 2.5, run.stderr
    _assert_clean_exit(run)


def test_a_server_logging_on_stdout_that_never_answers_is_told_where_logs_belong(tmp_path: Path) -> None:
    # Only "no answer to initialize within 2s": the usual cause, logs on the MCP channel, went unsaid.
    noisy = tmp_path / "noisy.py"
    noisy.write_text(
        "import sys\nfor line in sys.stdin:\n    sys.stdout.write('Server ready\\x1b[0m\\n')\n    sys.stdout.flush()\n"
    )
    run = fuzzgate(
        "run", "--command", sys.executable, f"--arg={noisy}", "--startup-timeout", "2s", "--budget", "5s", cwd=tmp_path
    )
    assert run.code == 3, run.stderr
    assert "it wrote 1 line(s) on stdout that are not JSON-RPC (the first: 'Server ready\\x1b[0m')" in run.stderr
    assert "a server's logs belong on stderr" in run.stderr
    _assert_clean_exit(run)
