"""`plan_collector`: which command lines run on a Python interpreter, and what is measured."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fuzzgate.config.model import FeedbackMode, TargetConfig, TargetKind
from fuzzgate.coverage.plan import CollectorPlan, plan_collector

WORK = Path("/srv/project")


def _plan(command: str, *args: str, cwd: Path = WORK, **fields: object) -> CollectorPlan:
    target = TargetConfig(kind=TargetKind.STDIO, command=command, args=args, cwd=cwd, **fields)  # type: ignore[arg-type]
    return plan_collector(target)


def _script(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text)
    path.chmod(0o755)
    return path


CONSOLE_SCRIPT = """#!{python}
# -*- coding: utf-8 -*-
import re
import sys
from mcp_server_time import main
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit(main())
"""


@pytest.mark.parametrize("command", ["python", "python3", "python3.12", "/opt/venv/bin/python", ".venv/bin/python3"])
def test_an_interpreter_running_a_script_measures_the_scripts_directory(command: str) -> None:
    plan = _plan(command, "-u", "-X", "dev", "-W", "ignore", "servers/weather.py", "--verbose")
    assert plan.inject
    assert plan.directories == (WORK / "servers",)
    assert plan.packages == ()
    assert plan.reason == f"{Path(command).name} runs servers/weather.py"


@pytest.mark.parametrize(
    ("args", "package"),
    [
        (("-m", "weather.server"), "weather"),
        (("-um", "weather"), "weather"),
        (("-mweather.cli", "--port", "1"), "weather"),
        (("-B", "-Wignore", "-m", "weather"), "weather"),
    ],
)
def test_an_interpreter_running_a_module_measures_its_top_level_package(args: tuple[str, ...], package: str) -> None:
    plan = _plan("python3", *args)
    assert plan.inject
    assert plan.packages == (package,)
    assert plan.directories == ()


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (("-I", "server.py"), "python -I ignores PYTHONPATH, which the collector needs"),
        (("-uE", "server.py"), "python -E ignores PYTHONPATH, which the collector needs"),
        (("-S", "server.py"), "python -S skips site, which loads the collector"),
        (("-c", "import server; server.run()"), "python -c runs code from its command line, but nothing to measure"),
        ((), "python runs no program file (an interactive interpreter)"),
    ],
)
def test_interpreters_the_collector_cannot_reach_or_measure_say_why(args: tuple[str, ...], reason: str) -> None:
    plan = _plan("python", *args)
    assert not plan.inject
    assert reason in plan.reason


def test_coverage_source_adds_packages_and_directories(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    plan = _plan("python", "-c", "import server", cwd=tmp_path, coverage_source=("weather.core", "lib", "../shared"))
    assert plan.inject
    assert plan.packages == ("weather.core",)
    assert plan.directories == (tmp_path / "lib", tmp_path.parent / "shared")
    assert plan.measured() == f"{tmp_path / 'lib'}, {tmp_path.parent / 'shared'}, weather.core"


def test_uv_and_uvx_run_python() -> None:
    plan = _plan("uv", "run", "--with", "mcp", "server.py")
    assert (plan.inject, plan.directories) == (True, (WORK,))
    plan = _plan("uv", "run", "--directory", "sub", "python", "-m", "weather")
    assert (plan.inject, plan.packages) == (True, ("weather",))
    plan = _plan("uv", "run", "--no-project", "-m", "weather.server")
    assert (plan.inject, plan.packages) == (True, ("weather",))
    plan = _plan("uv", "run", "mcp-weather")
    assert (plan.inject, plan.packages) == (True, ("mcp_weather",))
    plan = _plan("uvx", "mcp-server-time", "--local-timezone", "UTC")
    assert (plan.inject, plan.packages) == (True, ("mcp_server_time",))
    plan = _plan("uv", "tool", "run", "--from", "mcp-server-git[extra]==1.0", "mcp-server-git")
    assert (plan.inject, plan.packages) == (True, ("mcp_server_git",))
    assert not _plan("uv", "sync").inject


def test_uv_run_reads_a_project_console_script(tmp_path: Path) -> None:
    _script(tmp_path / ".venv" / "bin", "weather", CONSOLE_SCRIPT.format(python=sys.executable))
    plan = _plan("uv", "run", "weather", cwd=tmp_path)
    assert (plan.inject, plan.packages, plan.reason) == (
        True,
        ("mcp_server_time",),
        "uv run weather is a Python console script",
    )


def test_a_console_script_on_path_measures_the_package_it_imports(tmp_path: Path) -> None:
    bin_dir = tmp_path / "venv" / "bin"
    _script(bin_dir, "mcp-server-time", CONSOLE_SCRIPT.format(python=bin_dir / "python3"))
    plan = _plan("mcp-server-time", env={"PATH": f"/nonexistent:{bin_dir}"})
    assert plan.inject
    assert plan.packages == ("mcp_server_time",)
    assert plan.reason == "mcp-server-time is a Python console script"
    # pip's form for a path too long for a shebang line.
    relay = (
        "#!/bin/sh\n'''exec' \"/very/long/venv/bin/python3\" \"$0\" \"$@\"\n' '''\n"
        "import sys\nfrom tool import main\nsys.exit(main())\n"
    )
    _script(bin_dir, "relayed", relay)
    assert _plan(str(bin_dir / "relayed")).packages == ("tool",)


def test_a_python_script_run_as_a_command_measures_its_directory(tmp_path: Path) -> None:
    script = _script(tmp_path / "srv", "server.py", "#!/usr/bin/env -S python3 -u\nimport json\nprint('hi')\n")
    plan = _plan("./srv/server.py", cwd=tmp_path)
    assert (plan.inject, plan.directories) == (True, (script.parent,))


def test_only_the_first_256_bytes_of_a_script_are_read(tmp_path: Path) -> None:
    padding = "#" * 300 + "\n"
    script = _script(
        tmp_path, "late", f"#!{sys.executable}\n{padding}import sys\nfrom late_pkg import main\nsys.exit(main())\n"
    )
    plan = _plan(str(script))
    assert plan.inject
    assert (plan.packages, plan.directories) == ((), (tmp_path,))


def test_commands_that_are_not_python_say_so(tmp_path: Path) -> None:
    shell = _script(tmp_path, "server.sh", "#!/bin/bash\nexec node server.js\n")
    assert _plan(str(shell)).reason == "server.sh is not a Python interpreter"
    plan = _plan("no-such-server", env={"PATH": str(tmp_path)})
    assert not plan.inject and plan.reason.startswith("no-such-server is not a Python interpreter")


def test_env_passes_the_command_through_unless_it_empties_the_environment() -> None:
    plan = _plan("env", "-u", "HOME", "DEBUG=1", "python3", "server.py")
    assert (plan.inject, plan.directories) == (True, (WORK,))
    assert not _plan("env", "-i", "python3", "server.py").inject


def test_feedback_modes_and_http_targets() -> None:
    assert _plan("python", "s.py", feedback=FeedbackMode.OFF) == CollectorPlan(False, "feedback = off")
    assert _plan("python", "s.py", feedback=FeedbackMode.BEHAVIOUR) == CollectorPlan(False, "feedback = behaviour")
    # An HTTP server fuzzgate starts gets the collector as a stdio server does; one it only reaches cannot.
    started = TargetConfig(
        kind=TargetKind.HTTP, url="http://127.0.0.1:1/mcp", command="python", args=("s.py",), cwd=WORK
    )
    assert plan_collector(started) == _plan("python", "s.py")
    reached = TargetConfig(kind=TargetKind.HTTP, url="http://127.0.0.1:1/mcp")
    assert plan_collector(reached) == CollectorPlan(
        False, "an HTTP server fuzzgate does not start: coverage is collected from servers it starts"
    )
