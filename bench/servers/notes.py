"""bench-notes: a notes MCP server (MCPServer) confined to `--root DIR`, whose two buggy tools leave
it politely: one reads any file the path names, one makes a folder wherever the path says. Neither
ever fails or errs; the bug is only visible outside the root. Bugs NOT-1, NOT-2.

    python notes.py --root DIR      # stdio; set BENCH_GROUND_TRUTH=FILE to record triggered bugs

The clean look-alikes `read_note_safe` and `write_note` check every path against the root.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import _scope
import _truth
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

ROOT = _scope.root_from_argv(__doc__)
MAX_NOTE_BYTES = 64 * 1024

app = MCPServer("bench-notes", version="1.0.0", instructions=f"Notes kept as files under {ROOT}.")
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True)

NotePath = Annotated[
    str, Field(max_length=500, description="A note, relative to the notes folder.", examples=["welcome.md"])
]


def _read_text(path: Path, shown: str) -> str:
    """A small UTF-8 regular file's text. Only regular files: /dev/stdin is the MCP stream itself."""
    try:
        if not path.is_file():
            raise ToolError(f"no note at {shown!r}")
        with path.open("rb") as f:
            data = f.read(MAX_NOTE_BYTES + 1)
        if len(data) > MAX_NOTE_BYTES:
            raise ToolError(f"note {shown!r} is larger than {MAX_NOTE_BYTES} bytes")
        return data.decode("utf-8")
    except (OSError, ValueError):  # unreadable, not UTF-8, a NUL in the path
        raise ToolError(f"cannot read note {shown!r}") from None


@app.tool(annotations=READ_ONLY)
def read_note(path: NotePath) -> str:
    """Read a note."""
    # NOT-1: the path is joined to the root unchecked: '..' climbs out, an absolute path replaces the root.
    target = ROOT / path
    text = _read_text(target, path)
    if not _scope.is_inside(ROOT, target):
        _truth.triggered("NOT-1")
    return text


@app.tool(annotations=WRITES)
def init_project(
    path: Annotated[
        str,
        Field(max_length=500, description="Folder for the project, relative to the notes folder.", examples=["alpha"]),
    ],
) -> str:
    """Create a project folder (and its parents) for notes."""
    # NOT-2: the folder is made wherever the path says.
    target = ROOT / path
    try:
        escapes = not _scope.is_inside(ROOT, target) and not target.exists()
        target.mkdir(parents=True, exist_ok=True)
    except (OSError, ValueError):
        raise ToolError(f"cannot create project {path!r}") from None
    if escapes:
        # Recorded once the folder exists, before the reply: a refused mkdir (read-only, EACCES) escapes nothing.
        _truth.triggered("NOT-2")
    return f"project {path!r} is ready"


# ------------------------------------------------------------------------------------------ clean


@app.tool(annotations=READ_ONLY)
def read_note_safe(path: NotePath) -> str:
    """Read a note (paths outside the notes folder are refused)."""
    try:
        target = _scope.inside(ROOT, path)
    except ValueError:
        raise ToolError(f"{path!r} is not a note in the notes folder") from None
    return _read_text(target, path)


@app.tool(annotations=WRITES)
def write_note(path: NotePath, text: Annotated[str, Field(max_length=MAX_NOTE_BYTES // 4)]) -> str:
    """Write a note, creating its folders (paths outside the notes folder are refused)."""
    try:
        target = _scope.inside(ROOT, path)
        if target == ROOT or (target.exists() and not target.is_file()):
            raise ToolError(f"{path!r} is not a note")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except UnicodeError:
        raise ToolError("the text is not valid Unicode (a lone surrogate?)") from None
    except ValueError:
        raise ToolError(f"{path!r} is not a note in the notes folder") from None
    except OSError as exc:
        raise ToolError(f"cannot write note {path!r}: {exc.strerror}") from None
    return f"wrote {len(text)} characters to {path!r}"


@app.tool(annotations=READ_ONLY)
def list_notes(limit: Annotated[int, Field(ge=1, le=100)] = 20) -> list[str]:
    """Notes in the notes folder."""
    return sorted(p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*") if p.is_file())[:limit]


if __name__ == "__main__":
    welcome = ROOT / "welcome.md"
    if not welcome.exists():
        welcome.write_text("# Welcome\n\nNotes live here.\n", encoding="utf-8")
    app.run("stdio")
