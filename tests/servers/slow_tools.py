"""A slow MCP server with many tools: every call takes `--delay` seconds, so in a short budget each
tool gets only a few calls. One tool's bug needs an option probe in its second field, and gets there
only when its first field passes a check.

    python slow_tools.py --root DIR [--tools N] [--delay SECONDS]

- `sort_lines(repo, target)`: `repo` must name a directory under DIR (else the call is refused),
  then `sort TARGET` runs there without `--`: `--output=F` makes sort write F;
- `sort_lines_safe(repo, target)`: clean: the same check, then `sort -- TARGET`;
- `note_<i>(text)`: clean fillers (N - 2 of them), answering with the text's length.

The server makes `DIR/project` at start (in its own layer): the schema's example for `repo`.
"""

from __future__ import annotations

import argparse
import logging
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

parser = argparse.ArgumentParser()
parser.add_argument("--root", type=Path, required=True)
parser.add_argument("--tools", type=int, default=30)
parser.add_argument("--delay", type=float, default=0.3)
ARGS = parser.parse_args()
ROOT: Path = ARGS.root.resolve()
DELAY: float = ARGS.delay
(ROOT / "project").mkdir(parents=True, exist_ok=True)
(ROOT / "project" / "lines.txt").write_text("b\na\n")

# Plain text logs: MCPServer would draw each traceback through rich, a CPU-bound third of a second
# per exception (tests/servers/sdk_strict.py keeps rich, as most real servers on the SDK log).
logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
app = MCPServer("slow-tools", log_level="WARNING")

Repo = Annotated[str, Field(max_length=300, description="A project directory under the root.", examples=["project"])]
Target = Annotated[str, Field(max_length=300, description="The file to sort, in the project.")]


def _repo(repo: str) -> Path:
    """The project directory `repo` names: a directory under ROOT, or the call is refused."""
    path = ROOT / repo
    try:
        if path.resolve().is_relative_to(ROOT) and path.is_dir():
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


@app.tool()
async def sort_lines(repo: Repo, target: Target) -> str:
    """Sort the lines of a file of a project."""
    await anyio.sleep(DELAY)
    cwd = _repo(repo)
    return _sort(cwd, ["sort", target])  # planted: no `--` before the target


@app.tool()
async def sort_lines_safe(repo: Repo, target: Target) -> str:
    """Sort the lines of a file of a project (the target is never an option)."""
    await anyio.sleep(DELAY)
    cwd = _repo(repo)
    return _sort(cwd, ["sort", "--", target])


def _filler(number: int) -> None:
    async def note(text: Annotated[str, Field(max_length=1000)]) -> str:
        await anyio.sleep(DELAY)
        return f"{len(text)} characters"

    app.add_tool(note, name=f"note_{number}", description=f"Count the characters of note {number}.")


for _number in range(max(0, ARGS.tools - 2)):
    _filler(_number)


if __name__ == "__main__":
    app.run()
