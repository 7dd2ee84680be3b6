"""An MCP server whose bugs answer politely: every buggy tool replies as if all went well, and the
bug shows only outside the server's scope, in another program, or after a sequence of calls.

    python polite.py --root DIR

DIR is the one directory the server may touch (it puts `welcome.md` and `template.md` there).

| tool                       | bug                                                                  |
| -------------------------- | -------------------------------------------------------------------- |
| `read_note(path)`          | joins DIR and `path` unchecked: `..` or an absolute path reads any file |
| `init_project(path)`       | makes the folder wherever `path` says                                |
| `diff_files(target)`       | `git diff --no-index TARGET template.md` without `--`: `--output=F` writes F |
| `greet(name)`              | `sh -c "echo hello NAME"`: `$(...)`, `;`, `|`, `&&`, backticks run   |
| `create_item(name)`        | (clean) ids 1, 2, ... in creation order                              |
| `delete_item(id)`          | a second delete of the same id aborts the process (exit 70)          |
| `get_item(id)`             | a get after the delete of that id aborts the process (exit 70)       |
| `write_note(path, text)`   | clean: writes inside DIR, refuses any path resolving outside         |
| `echo(text)`               | clean: returns the text verbatim (`--output=x`, `$(touch x)` included) |
| `read_note_safe(path)`     | clean: refuses any path resolving outside DIR                        |

`diff_files` checks that the target stays inside DIR (an absolute `--output=/x` does: it is one odd
file name below DIR), so it is only an option injection, never a traversal read. `delete_item` is
destructive by name: fuzzgate calls it only when `[allow_destructive]` names it.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

parser = argparse.ArgumentParser()
parser.add_argument("--root", type=Path, required=True)
ROOT: Path = parser.parse_args().root.resolve()
TEMPLATE = "template.md"
MAX_BYTES = 64 * 1024
TIMEOUT_S = 5.0

# Plain text logs: MCPServer would draw each traceback through rich, a CPU-bound third of a second
# per exception (tests/servers/sdk_strict.py keeps rich, as most real servers on the SDK log).
logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
app = MCPServer("polite", log_level="WARNING")

NotePath = Annotated[str, Field(max_length=500, description="A note, relative to the notes folder.")]
ItemId = Annotated[int, Field(ge=1, le=100, description="An item's number (1, 2, ... in creation order).")]


def _inside(relative: str) -> Path:
    """ROOT / relative when it resolves inside ROOT; ToolError otherwise (a NUL byte too)."""
    path = ROOT / relative
    try:
        if path.resolve().is_relative_to(ROOT):
            return path
    except ValueError:
        pass
    raise ToolError(f"{relative!r} is outside the notes folder")


def _read(path: Path, shown: str) -> str:
    """A small UTF-8 regular file. Only regular files: /dev/stdin would be the MCP stream."""
    try:
        if not path.is_file():
            raise ToolError(f"no note at {shown!r}")
        with path.open("rb") as f:
            data = f.read(MAX_BYTES + 1)
        if len(data) > MAX_BYTES:
            raise ToolError(f"note {shown!r} is too large")
        return data.decode("utf-8")
    except (OSError, ValueError):
        raise ToolError(f"cannot read note {shown!r}") from None


def _run(command: str | list[str], *, shell: bool = False) -> subprocess.CompletedProcess[str]:
    """Run in ROOT with stdin on /dev/null (stdin is the MCP stream); on timeout the whole group dies."""
    try:
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
    except ValueError:
        raise ToolError("the command line cannot hold a NUL character") from None
    try:
        out, err = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise ToolError(f"the command took longer than {TIMEOUT_S:g} s") from None
    return subprocess.CompletedProcess(command, proc.returncode, out[:MAX_BYTES], err[:MAX_BYTES])


@app.tool()
def read_note(path: NotePath) -> str:
    """Read a note."""
    return _read(ROOT / path, path)  # planted: no check that the path stays inside ROOT


@app.tool()
def init_project(path: NotePath) -> str:
    """Create a project folder (and its parents)."""
    try:
        (ROOT / path).mkdir(parents=True, exist_ok=True)  # planted: wherever the path says
    except (OSError, ValueError):
        raise ToolError(f"cannot create project {path!r}") from None
    return f"project {path!r} is ready"


@app.tool()
def diff_files(target: NotePath) -> str:
    """Show how a file differs from the project template."""
    _inside(target)
    done = _run(["git", "diff", "--no-index", target, TEMPLATE])  # planted: no `--` before the target
    if done.returncode > 1 or (done.returncode == 1 and not done.stdout):
        raise ToolError("git diff: " + (done.stderr.strip().splitlines() or ["failed"])[0])
    return done.stdout or "no differences"


@app.tool()
def greet(name: Annotated[str, Field(max_length=200)]) -> str:
    """Say hello to someone."""
    done = _run(f"echo hello {name}", shell=True)  # planted: the name is shell syntax
    if done.returncode != 0:
        raise ToolError(f"greeting failed (exit {done.returncode})")
    return done.stdout.rstrip("\n")


class Item(BaseModel):
    id: int
    name: str


_ITEMS: dict[int, Item] = {}
_FREED: set[int] = set()
_next_id = [1]


def _abort(function: str) -> None:
    """A C extension's assertion on a freed slot: a message on stderr, and the process is gone."""
    traceback.print_stack(file=sys.stderr)
    sys.stderr.write(f"python3: _items.c:88: {function}: Assertion `slot->live' failed.\nAborted\n")
    sys.stderr.flush()
    os._exit(70)


@app.tool()
def create_item(name: Annotated[str, Field(min_length=1, max_length=100)]) -> Item:
    """Add an item; its id is the next number."""
    if _next_id[0] > 100:
        raise ToolError("the inventory holds at most 100 items")
    item = Item(id=_next_id[0], name=name)
    _ITEMS[item.id] = item
    _next_id[0] += 1
    return item


@app.tool()
def delete_item(id: ItemId) -> str:
    """Remove an item."""
    if id in _FREED:
        _abort("items_delete")  # planted: double delete
    if id not in _ITEMS:
        raise ToolError(f"no item {id}")
    del _ITEMS[id]
    _FREED.add(id)
    return f"item {id} deleted"


@app.tool()
def get_item(id: ItemId) -> Item:
    """An item by id."""
    if id in _FREED:
        _abort("items_get")  # planted: use after delete
    if id not in _ITEMS:
        raise ToolError(f"no item {id}")
    return _ITEMS[id]


@app.tool()
def write_note(path: NotePath, text: Annotated[str, Field(max_length=MAX_BYTES // 4)]) -> str:
    """Write a note inside the notes folder, creating its folders."""
    target = _inside(path)
    try:
        # Inside the try: a name too long for the file system fails the check itself (ENAMETOOLONG).
        if target.resolve() == ROOT or (target.exists() and not target.is_file()):
            raise ToolError(f"{path!r} is not a note")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except (OSError, ValueError):
        raise ToolError(f"cannot write note {path!r}") from None
    return f"wrote {len(text)} characters to {path!r}"


@app.tool()
def echo(text: Annotated[str, Field(max_length=10_000)]) -> str:
    """Return the text unchanged."""
    return text


@app.tool()
def read_note_safe(path: NotePath) -> str:
    """Read a note inside the notes folder."""
    return _read(_inside(path), path)


if __name__ == "__main__":
    for name, text in (("welcome.md", "# Welcome\n"), (TEMPLATE, "# Title\n\nBody.\n")):
        if not (ROOT / name).exists():
            (ROOT / name).write_text(text, encoding="utf-8")
    app.run("stdio")
