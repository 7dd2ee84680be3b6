"""End-to-end fixtures: the real CLI in a subprocess against the project's example servers."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.report_schema import TRACE, assert_conforms

ROOT = Path(__file__).resolve().parents[2]
SERVERS = ROOT / "examples" / "servers"


@dataclass
class CliRun:
    code: int
    stdout: str
    stderr: str
    out: Path

    @property
    def report(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.out / "report.json").read_text())
        return data

    def findings(self, **match: Any) -> list[dict[str, Any]]:
        return [f for f in self.report["findings"] if all(f.get(k) == v for k, v in match.items())]


def stdio_target(script: str, *extra: str) -> list[str]:
    # `--arg=VALUE`: a value that starts with `--` would otherwise read as a flag of fuzzgate's own.
    return ["--command", sys.executable, f"--arg={SERVERS / script}", *(f"--arg={x}" for x in extra)]


COVERAGE_HANDOVER = ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START")
"""How coverage's `patch = ["subprocess"]` (and `coverage run`) tell a Python subprocess to measure itself."""


def fuzzgate(
    *args: str,
    cwd: Path,
    out: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 240,
    measured: bool = True,
) -> CliRun:
    """The CLI in a subprocess. `measured=False` leaves coverage out of it (and of the servers it
    starts): for a run that repeats another of the same test only to be compared with it, which
    reaches no line the first did not, and which coverage's tracing slows by about a third. A `run`
    gets behaviour feedback, one replay and no shrinking unless its args or its config file set them
    (`_one_fresh_server_per_finding`)."""
    out = out or cwd / "out"
    skipped = ("GITHUB_", "FUZZGATE_", "WALLFACER_")
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(skipped)}
    if not measured:
        for name in COVERAGE_HANDOVER:
            full_env.pop(name, None)
    full_env.update(env or {})
    command = [sys.executable, "-m", "fuzzgate", *args]
    if args and args[0] in ("run",) and "--out" not in args:
        command += ["--out", str(out)]
    behaviour = False
    if args and args[0] == "run":
        config = _config_text(args, cwd)
        if not _given("--feedback", args) and not _sets("feedback", config):
            # The coverage collector slows a Python server's every call (about 2x on CPython 3.11):
            # tests of other things run with behaviour feedback; those of coverage feedback, and
            # those whose config file sets it, ask for it (`--feedback auto`).
            command += ["--feedback", "behaviour"]
            behaviour = True
        command += _one_fresh_server_per_finding(args, config)
    if measured and behaviour and full_env.get(COVERAGE_HANDOVER[0]):
        command[1:3] = _cli_alone(full_env)
    started = time.time_ns()
    proc = subprocess.run(command, cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout, check=False)
    _check_written_reports(out, started)
    _check_written_trace(args, cwd, started)
    return CliRun(proc.returncode, proc.stdout, proc.stderr, out)


def _check_written_reports(out: Path, since_ns: int) -> None:
    """Every report.json the call wrote (a run's, or one per target of a merge) is JSON that
    conforms to the published schema (docs/schemas/report.schema.json). One a test put there
    before the call, corrupt on purpose, is left to that test."""
    for path in (out / "report.json", *out.glob("*/report.json")):
        try:
            if not path.is_file() or path.stat().st_mtime_ns < since_ns:
                continue
            text = path.read_text(encoding="utf-8")
        except OSError:
            continue
        assert_conforms(json.loads(text), str(path))


def _check_written_trace(args: tuple[str, ...], cwd: Path, since_ns: int) -> None:
    """Every line of the `--trace FILE` the call wrote conforms to docs/schemas/trace.schema.json."""
    given = [args[i + 1] for i, arg in enumerate(args[:-1]) if arg == "--trace"]
    given += [arg.removeprefix("--trace=") for arg in args if arg.startswith("--trace=")]
    for name in given:
        path = cwd / name
        try:
            if not path.is_file() or path.stat().st_mtime_ns < since_ns:
                continue
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError:
            continue
        for number, line in enumerate(lines, 1):
            assert_conforms(json.loads(line), f"{path}:{number}", TRACE)


def _given(flag: str, args: tuple[str, ...]) -> bool:
    return any(a == flag or a.startswith(f"{flag}=") for a in args)


def _one_fresh_server_per_finding(args: tuple[str, ...], config: str) -> list[str]:
    """Verification's defaults (three replays and up to 24 shrinking tries per finding, each on a
    fresh server: a second of CPU for a Python server on the SDK) were most of the e2e suite's server
    starts. Tests of other things confirm each finding once and keep the repro fuzzing sent; the tests
    of replay counts, flakiness and shrinking ask for what they test (`--replays 3`,
    `--shrink-tries 24`), and a value a config file sets is left alone."""
    extra = [] if _given("--replays", args) or _sets("replays", config) else ["--replays", "1"]
    return extra + ([] if _given("--shrink-tries", args) or _sets("shrink_tries", config) else ["--shrink-tries", "0"])


def _cli_alone(env: dict[str, str]) -> list[str]:
    """How to measure the CLI of a run without the collector and none of the servers it starts:
    no fuzzgate code runs in those, and each replay, spare and restart would pay coverage's start-up
    (a third of a second of CPU: about a tenth of the e2e suite's CPU). `coverage run` with the
    project's settings but `patch` (`--rcfile=/dev/null` and the same flags), its data file named
    by `COVERAGE_FILE` like the others, and nothing handed to the CLI's children. Removes the
    handover from `env`."""
    for name in COVERAGE_HANDOVER:
        env.pop(name, None)
    jail = ("_jail_init", "_jail_spec", "_jail_view", "_scope_copy")
    omitted = ",".join(f"*/fuzzgate/sandbox/{name}.py" for name in jail)
    return ["-m", "coverage", "run", "--rcfile=/dev/null", "--branch", "--source=fuzzgate", "--parallel-mode",
            f"--omit={omitted}", "-m", "fuzzgate"]  # fmt: skip


def _config_text(args: tuple[str, ...], cwd: Path) -> str:
    """The text of the config file the run reads (`--config`, or the one found in `cwd`), or ""."""
    for i, arg in enumerate(args):
        if arg.startswith("--config="):
            return _read(cwd / arg.removeprefix("--config="))
        if arg == "--config" and i + 1 < len(args):
            return _read(cwd / args[i + 1])
    for name in ("fuzzgate.toml", "fuzzgate.yaml", "fuzzgate.yml", "wallfacer.toml"):
        if (cwd / name).exists():
            return _read(cwd / name)
    return ""


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""  # a test of a missing or unreadable config: the CLI says what is wrong


def _sets(key: str, config: str) -> bool:
    """Whether a config file's text sets `key` (a test that sets it is testing it: left alone)."""
    return re.search(rf"^\s*{key}\s*[=:]", config, re.MULTILINE) is not None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def served_over_http(argv: list[str], port: int, env: dict[str, str] | None = None) -> Iterator[str]:
    """Start `argv` (a server listening on 127.0.0.1:`port`), wait up to 30 s for the port, yield
    its MCP URL, and kill it afterwards."""
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait(timeout=10)


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The buggy example server over streamable HTTP on a free loopback port."""
    port = free_port()
    markers = tmp_path / "markers"
    markers.mkdir()
    env = {**os.environ, "FUZZGATE_EXAMPLE_MARKER_DIR": str(markers)}
    argv = [sys.executable, str(SERVERS / "buggy_server.py"), "--transport", "http", "--port", str(port)]
    with served_over_http(argv, port, env) as url:
        yield url, markers
