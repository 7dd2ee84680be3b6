"""bench-boundary: a documents MCP server (MCPServer) confined to `--root DIR`, whose path checks
are almost right: each buggy tool lets a path out only at the edge of the root, and answers
politely. Bugs BND-1 .. BND-5 (a prefix check, a lexical check that follows links, a listing).

    python boundary.py --root DIR   # stdio; set BENCH_GROUND_TRUTH=FILE to record triggered bugs

| tool                          | bug                                                                  |
| ----------------------------- | -------------------------------------------------------------------- |
| `read_doc(path)`              | resolves the path, then `startswith(ROOT)`: `ROOT-backup/x` passes    |
| `save_doc(path, text)`        | the same check before writing                                        |
| `open_note(path)`             | resolves `..` lexically and checks that, then opens: follows links   |
| `write_note(path, text)`      | the same check before writing                                        |
| `list_folder(path)`           | the same lexical check, then lists the directory: follows links      |
| `read_doc_safe(path)`         | clean: resolves links and `..`, then checks containment              |
| `save_doc_safe(path, text)`   | clean: the same before writing                                       |
| `open_note_safe(path)`        | clean                                                                |
| `write_note_safe(path, text)` | clean                                                                |
| `list_folder_safe(path)`      | clean                                                                |
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Annotated

import _scope
import _truth
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

ROOT = str(_scope.root_from_argv(__doc__))
MAX_BYTES = 64 * 1024

app = MCPServer("bench-boundary", version="1.0.0", instructions=f"Documents kept as files under {ROOT}.")
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True)

DocPath = Annotated[str, Field(max_length=500, description="A path, relative to the root or absolute.")]
Text = Annotated[str, Field(max_length=1000)]


def _refuse(path: str) -> ToolError:
    return ToolError(f"{path!r} is outside the root")


def _prefix_checked(path: str) -> str:
    full = os.path.realpath(os.path.join(ROOT, path))
    if not full.startswith(ROOT):  # planted: `ROOT-backup` starts with ROOT too
        raise _refuse(path)
    return full


def _lexically_checked(path: str) -> str:
    full = os.path.normpath(os.path.join(ROOT, path))
    if full != ROOT and not full.startswith(ROOT + os.sep):
        raise _refuse(path)
    return full  # planted: a link inside ROOT still leads anywhere


def _checked(path: str) -> str:
    full = os.path.realpath(os.path.join(ROOT, path))
    if os.path.commonpath([full, ROOT]) != ROOT:
        raise _refuse(path)
    return full


def _escapes(full: str) -> bool:
    try:
        return not os.path.realpath(full).startswith(ROOT + os.sep) and os.path.realpath(full) != ROOT
    except ValueError:
        return False


def _read(full: str, path: str, bug: str | None = None) -> str:
    try:
        if not os.path.isfile(full):
            raise ToolError(f"no file at {path!r}")
        with open(full, "rb") as handle:
            text = handle.read(MAX_BYTES).decode("utf-8", "replace")
    except (OSError, ValueError):
        raise ToolError(f"cannot read {path!r}") from None
    if bug is not None and _escapes(full):
        _truth.triggered(bug)
    return text


def _write(full: str, path: str, text: str, bug: str | None = None) -> str:
    try:
        if os.path.isdir(full):
            raise ToolError(f"{path!r} is a folder")
        escapes = bug is not None and _escapes(full)
        with open(full, "w", encoding="utf-8") as handle:
            handle.write(text)
    except (OSError, ValueError):
        raise ToolError(f"cannot write {path!r}") from None
    if bug is not None and escapes:
        # Recorded once the file is written: a refused open (read-only, EACCES) escapes nothing.
        _truth.triggered(bug)
    return f"wrote {len(text)} characters"


def _list(full: str, path: str, bug: str | None = None) -> str:
    try:
        names = sorted(os.listdir(full))
    except (OSError, ValueError):
        raise ToolError(f"cannot list {path!r}") from None
    if bug is not None and _escapes(full):
        _truth.triggered(bug)
    return "\n".join(names) or "(empty)"


def _guarded(check: Callable[[str], str], path: str) -> str:
    try:
        return check(path)
    except ValueError:
        raise _refuse(path) from None


@app.tool(annotations=READ_ONLY)
def read_doc(path: DocPath) -> str:
    """Read a document."""
    return _read(_guarded(_prefix_checked, path), path, "BND-1")  # BND-1: `ROOT-backup/x` passes


@app.tool(annotations=WRITES)
def save_doc(path: DocPath, text: Text) -> str:
    """Write a document."""
    return _write(_guarded(_prefix_checked, path), path, text, "BND-2")  # BND-2: the same check


@app.tool(annotations=READ_ONLY)
def open_note(path: DocPath) -> str:
    """Read a note."""
    return _read(_guarded(_lexically_checked, path), path, "BND-3")  # BND-3: follows links


@app.tool(annotations=WRITES)
def write_note(path: DocPath, text: Text) -> str:
    """Write a note."""
    return _write(_guarded(_lexically_checked, path), path, text, "BND-4")  # BND-4: follows links


@app.tool(annotations=READ_ONLY)
def list_folder(path: DocPath) -> str:
    """The names in a folder."""
    return _list(_guarded(_lexically_checked, path), path, "BND-5")  # BND-5: lists through links


@app.tool(annotations=READ_ONLY)
def read_doc_safe(path: DocPath) -> str:
    """Read a document inside the root."""
    return _read(_guarded(_checked, path), path)


@app.tool(annotations=WRITES)
def save_doc_safe(path: DocPath, text: Text) -> str:
    """Write a document inside the root."""
    return _write(_guarded(_checked, path), path, text)


@app.tool(annotations=READ_ONLY)
def open_note_safe(path: DocPath) -> str:
    """Read a note inside the root."""
    return _read(_guarded(_checked, path), path)


@app.tool(annotations=WRITES)
def write_note_safe(path: DocPath, text: Text) -> str:
    """Write a note inside the root."""
    return _write(_guarded(_checked, path), path, text)


@app.tool(annotations=READ_ONLY)
def list_folder_safe(path: DocPath) -> str:
    """The names in a folder inside the root."""
    return _list(_guarded(_checked, path), path)


if __name__ == "__main__":
    welcome = os.path.join(ROOT, "welcome.md")
    if not os.path.exists(welcome):
        with open(welcome, "w", encoding="utf-8") as handle:
            handle.write("# Welcome\n")
    app.run("stdio")
