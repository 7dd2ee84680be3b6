"""An MCP server whose path checks are almost right: each buggy tool lets a path out only at the
edge of its root, and answers politely.

    python boundary.py --root DIR

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

import argparse
import logging
import os
import sys
from collections.abc import Callable
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

parser = argparse.ArgumentParser()
parser.add_argument("--root", required=True)
ROOT = os.path.realpath(parser.parse_args().root)
MAX_BYTES = 64 * 1024

# Plain text logs: MCPServer would draw each traceback through rich, a CPU-bound third of a second
# per exception (tests/servers/sdk_strict.py keeps rich, as most real servers on the SDK log).
logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
app = MCPServer("boundary", log_level="WARNING")

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


def _read(full: str, path: str) -> str:
    try:
        if not os.path.isfile(full):
            raise ToolError(f"no file at {path!r}")
        with open(full, "rb") as handle:
            return handle.read(MAX_BYTES).decode("utf-8", "replace")
    except (OSError, ValueError):
        raise ToolError(f"cannot read {path!r}") from None


def _write(full: str, path: str, text: str) -> str:
    try:
        if os.path.isdir(full):
            raise ToolError(f"{path!r} is a folder")
        with open(full, "w", encoding="utf-8") as handle:
            handle.write(text)
    except (OSError, ValueError):
        raise ToolError(f"cannot write {path!r}") from None
    return f"wrote {len(text)} characters"


def _list(full: str, path: str) -> str:
    try:
        return "\n".join(sorted(os.listdir(full))) or "(empty)"
    except (OSError, ValueError):
        raise ToolError(f"cannot list {path!r}") from None


def _guarded(check: Callable[[str], str], path: str) -> str:
    try:
        return check(path)
    except ValueError:
        raise _refuse(path) from None


@app.tool()
def read_doc(path: DocPath) -> str:
    """Read a document."""
    return _read(_guarded(_prefix_checked, path), path)


@app.tool()
def save_doc(path: DocPath, text: Text) -> str:
    """Write a document."""
    return _write(_guarded(_prefix_checked, path), path, text)


@app.tool()
def open_note(path: DocPath) -> str:
    """Read a note."""
    return _read(_guarded(_lexically_checked, path), path)


@app.tool()
def write_note(path: DocPath, text: Text) -> str:
    """Write a note."""
    return _write(_guarded(_lexically_checked, path), path, text)


@app.tool()
def list_folder(path: DocPath) -> str:
    """The names in a folder."""
    return _list(_guarded(_lexically_checked, path), path)


@app.tool()
def read_doc_safe(path: DocPath) -> str:
    """Read a document inside the root."""
    return _read(_guarded(_checked, path), path)


@app.tool()
def save_doc_safe(path: DocPath, text: Text) -> str:
    """Write a document inside the root."""
    return _write(_guarded(_checked, path), path, text)


@app.tool()
def open_note_safe(path: DocPath) -> str:
    """Read a note inside the root."""
    return _read(_guarded(_checked, path), path)


@app.tool()
def write_note_safe(path: DocPath, text: Text) -> str:
    """Write a note inside the root."""
    return _write(_guarded(_checked, path), path, text)


@app.tool()
def list_folder_safe(path: DocPath) -> str:
    """The names in a folder inside the root."""
    return _list(_guarded(_checked, path), path)


if __name__ == "__main__":
    welcome = os.path.join(ROOT, "welcome.md")
    if not os.path.exists(welcome):
        with open(welcome, "w", encoding="utf-8") as handle:
            handle.write("# Welcome\n")
    app.run("stdio")
