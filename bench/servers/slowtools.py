"""bench-slowtools: a slow MCP server (MCPServer) with many tools confined to `--root DIR`: every call
takes 0.3 to 0.5 s, so in a minute each tool gets a handful of calls. One tool's bug needs an option
probe in its second argument, and only a call whose first argument names a project directory gets
there. Bug SLO-1.

    python slowtools.py --root DIR    # stdio; BENCH_GROUND_TRUTH=FILE records triggered bugs

The clean look-alike `sort_lines_safe` puts `--` before the target; the `note_<i>` fillers count
characters. The server makes `DIR/project` at start: the schema's example for `repo`.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Annotated

import _scope
import _truth
import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

TOOLS = 30
ROOT = _scope.root_from_argv(__doc__)
(ROOT / "project").mkdir(exist_ok=True)
(ROOT / "project" / "lines.txt").write_text("b\na\n")

app = MCPServer("bench-slowtools", version="1.0.0")
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)

Repo = Annotated[str, Field(max_length=300, description="A project directory under the root.", examples=["project"])]
Target = Annotated[str, Field(max_length=300, description="The file to sort, in the project.")]


def _delay(number: int) -> float:
    return 0.3 + 0.1 * (number % 3)


def _repo(repo: str) -> Path:
    try:
        path = _scope.inside(ROOT, repo)
        if path.is_dir():
            return path
    except (OSError, ValueError):
        pass
    raise ToolError(f"{repo!r} is not a project directory")


def _sort(cwd: Path, argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=5)
    except (ValueError, subprocess.TimeoutExpired):
        raise ToolError("sort failed") from None
    if done.returncode != 0:
        raise ToolError("sort: " + (done.stderr.strip().splitlines() or ["failed"])[0])
    return done.stdout


@app.tool(annotations=READ_ONLY)
async def sort_lines(repo: Repo, target: Target) -> str:
    """Sort the lines of a file of a project."""
    await anyio.sleep(_delay(0))
    cwd = _repo(repo)
    if target.startswith("-") and target != "-":
        # SLO-1: the target goes to `sort` without `--`: `--output=FILE` makes sort write FILE.
        _truth.triggered("SLO-1")
    return _sort(cwd, ["sort", target])


@app.tool(annotations=READ_ONLY)
async def sort_lines_safe(repo: Repo, target: Target) -> str:
    """Sort the lines of a file of a project (the target is never an option)."""
    await anyio.sleep(_delay(1))
    cwd = _repo(repo)
    return _sort(cwd, ["sort", "--", target])


def _filler(number: int) -> None:
    async def note(text: Annotated[str, Field(max_length=1000)]) -> str:
        await anyio.sleep(_delay(number))
        return f"{len(text)} characters"

    app.add_tool(note, name=f"note_{number}", description=f"Count the characters of note {number}.",
                 annotations=READ_ONLY)  # fmt: skip


for _number in range(max(0, TOOLS - 2)):
    _filler(_number)


if __name__ == "__main__":
    app.run()
