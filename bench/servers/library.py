"""bench-library: a documentation MCP server (MCPServer) with a resource template that opts out of
the SDK's path checks and percent-decodes the name a second time, so a name that climbs out of the
docs folder reaches an assertion. Bug TPL-1.

    python library.py           # stdio; set BENCH_GROUND_TRUTH=FILE to record triggered bugs

`file:///docs/{name}` reads data/docs/NAME. The SDK decodes `%2e%2e` to `..` before the handler;
`%252e%252e` arrives as `%2e%2e` and the handler's own `unquote` makes it `..`. The clean look-alike
`file:///notes/{name}` reads the same folder through the same code, keeps the SDK's checks and
refuses a name outside the folder as an unknown resource (JSON-RPC -32602).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated
from urllib.parse import unquote

import _truth
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp.server.mcpserver.resources.templates import ResourceSecurity
from mcp_types import ToolAnnotations
from pydantic import Field

DOCS = Path(__file__).resolve().parent / "data" / "docs"
MAX_FILE_BYTES = 64 * 1024

app = MCPServer("bench-library", version="1.0.0", instructions="Product documentation as resources.")


def _path_of(name: str, template: str) -> Path:
    """The file a (twice-decoded) name names; unknown names and NUL bytes are not found."""
    decoded = unquote(name)
    if not decoded or "\0" in decoded:
        raise ResourceNotFoundError(f"no document {name!r}")
    path = (DOCS / decoded).resolve()
    if not path.is_relative_to(DOCS):
        if template == "docs":
            # TPL-1: the store asserts that every path it opens is inside the docs folder.
            _truth.triggered("TPL-1")
            raise AssertionError(f"document path escapes the docs folder: {path}")
        raise ResourceNotFoundError(f"no document {name!r}")
    return path


def _read(path: Path, name: str) -> str:
    try:
        if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
            raise ResourceNotFoundError(f"no document {name!r}")
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeError):
        raise ResourceNotFoundError(f"no document {name!r}") from None


@app.resource(
    "file:///docs/{name}",
    name="doc-file",
    mime_type="text/markdown",
    security=ResourceSecurity(exempt_params=frozenset({"name"})),
)
def doc_file(name: str) -> str:
    """A document by file name, e.g. 'guide.md' or 'faq.md'."""
    return _read(_path_of(name, "docs"), name)


# ------------------------------------------------------------------------------------------ clean


@app.resource("file:///notes/{name}", name="note-file", mime_type="text/markdown")
def note_file(name: str) -> str:
    """The same documents as notes, by file name, e.g. 'guide.md' or 'faq.md'."""
    return _read(_path_of(name, "notes"), name)


@app.tool(annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True))
def list_docs(limit: Annotated[int, Field(ge=1, le=50)] = 20) -> list[str]:
    """The file names a document resource takes."""
    return sorted(p.name for p in DOCS.iterdir() if p.is_file())[:limit]


if __name__ == "__main__":
    app.run("stdio")
