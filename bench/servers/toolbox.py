"""bench-toolbox: a developer-toolbox MCP server (MCPServer) confined to `--root DIR`, whose two buggy
tools hand user input to other programs: one as a `git diff` argument that git can take for an
option, one inside a shell command line. Both answer normally; only the other program's side
effects show the bug. Bugs TBX-1, TBX-2.

    python toolbox.py --root DIR    # stdio; set BENCH_GROUND_TRUTH=FILE to record triggered bugs

The clean look-alikes: `diff_files_safe` puts `--` before the user's path, `echo` returns its input
verbatim (an echoed `$(touch x)` or `--output=x` is no injection).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from typing import Annotated

import _scope
import _truth
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

ROOT = _scope.root_from_argv(__doc__)
TEMPLATE = "template.md"
TIMEOUT_S = 5.0
MAX_OUTPUT = 64 * 1024
SHELL_SYNTAX = frozenset(";&|`$<>\n")
"""Characters that make `sh` chain, pipe, substitute or redirect rather than pass a word to echo."""

app = MCPServer("bench-toolbox", version="1.0.0", instructions=f"Small developer tools working under {ROOT}.")
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)

FilePath = Annotated[
    str, Field(max_length=500, description="A file, relative to the project folder.", examples=["draft.md"])
]


def _run(command: str | list[str], *, shell: bool = False) -> subprocess.CompletedProcess[str]:
    """Run a command in the root with no stdin (stdin is the MCP stream), bounded in time; on timeout
    the whole process group is killed, so a `sleep` started through the shell cannot hold the pipes."""
    proc = subprocess.Popen(
        command,
        shell=shell,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise ToolError(f"the command took longer than {TIMEOUT_S:g} s") from None
    return subprocess.CompletedProcess(command, proc.returncode, out[:MAX_OUTPUT], err[:MAX_OUTPUT])


def _checked(target: str) -> None:
    try:
        _scope.inside(ROOT, target)
    except ValueError:
        raise ToolError(f"{target!r} is not a file in the project folder") from None


def _diff(argv: list[str]) -> str:
    done = _run(argv)
    # 0: the same, 1: different (or a missing file, with nothing on stdout), other: git's usage error.
    if done.returncode > 1 or (done.returncode == 1 and not done.stdout):
        first = (done.stderr.strip().splitlines() or ["failed"])[0]
        raise ToolError(f"git diff: {first}")
    return done.stdout or "no differences"


@app.tool(annotations=READ_ONLY)
def diff_files(target: FilePath) -> str:
    """Show how a file differs from the project template."""
    _checked(target)
    if target.startswith("-") and target != "-":
        # TBX-1: the path is checked against the root but passed without `--`: git parses it as an
        # option, and `--output=FILE` makes git write FILE wherever it says.
        _truth.triggered("TBX-1")
    return _diff(["git", "diff", "--no-index", target, TEMPLATE])


@app.tool(annotations=READ_ONLY)
def greet(name: Annotated[str, Field(max_length=200, examples=["Ada"])]) -> str:
    """Say hello to someone."""
    if SHELL_SYNTAX & set(name):
        # TBX-2: the name is pasted into a shell command line.
        _truth.triggered("TBX-2")
    try:
        done = _run(f"echo hello {name}", shell=True)
    except ValueError:  # a NUL byte in the command line
        raise ToolError("a name cannot contain a NUL character") from None
    if done.returncode != 0:
        raise ToolError(f"greeting failed (exit {done.returncode})")
    return done.stdout.rstrip("\n")


# ------------------------------------------------------------------------------------------ clean


@app.tool(annotations=READ_ONLY)
def diff_files_safe(target: FilePath) -> str:
    """Show how a file differs from the project template (the path can never be an option)."""
    _checked(target)
    return _diff(["git", "diff", "--no-index", "--", target, TEMPLATE])


@app.tool(annotations=READ_ONLY)
def echo(text: Annotated[str, Field(max_length=10_000)]) -> str:
    """Return the text unchanged."""
    return text


if __name__ == "__main__":
    for name, text in ((TEMPLATE, "# Title\n\nBody.\n"), ("draft.md", "# Draft\n\nBody, mostly.\n")):
        if not (ROOT / name).exists():
            (ROOT / name).write_text(text, encoding="utf-8")
    app.run("stdio")
