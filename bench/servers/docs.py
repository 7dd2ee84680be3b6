"""bench-docs: a documentation MCP server (MCPServer) with a path traversal that leaks a credentials
file, a parameter whose published schema is never enforced, and bugs in a resource template and a
prompt. Bugs DOC-1 .. DOC-4.

    python docs.py              # stdio; set BENCH_GROUND_TRUTH=FILE to record triggered bugs

Documents live in data/docs/; data/credentials.env, one level up, holds an (example) AWS key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import _truth
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field, WithJsonSchema

DOCS = Path(__file__).resolve().parent / "data" / "docs"
MAX_FILE_BYTES = 64 * 1024

app = MCPServer("bench-docs", version="1.0.0", instructions="Product documentation.")
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)


def _all_docs() -> list[str]:
    return sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))


def _text_of(file: Path) -> str | None:
    """A small text file's content, or None (empty, large, binary, unreadable, /proc's zero-size files)."""
    try:
        if not 0 < file.stat().st_size <= MAX_FILE_BYTES:
            return None
        return file.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None


@app.tool(annotations=READ_ONLY)
def read_doc(
    path: Annotated[
        str,
        Field(
            max_length=500, description="A document or folder, relative to the docs root.", examples=["guide.md", "api"]
        ),
    ],
) -> str:
    """Read a document, or every document in a folder."""
    # DOC-1: leading slashes are stripped, '..' is not, so the path can climb out of the docs root.
    target = DOCS / path.lstrip("/")
    try:
        files = sorted(p for p in target.iterdir() if p.is_file())[:50] if target.is_dir() else [target]
    except (OSError, ValueError):
        raise ToolError(f"cannot read {path!r}") from None
    parts = []
    for file in files:
        text = _text_of(file)
        if text is None:
            continue
        if not file.resolve().is_relative_to(DOCS):
            _truth.triggered("DOC-1")
        parts.append(f"## {file.name}\n{text}")
    if not parts:
        raise ToolError(f"no document at {path!r}")
    return "\n\n".join(parts)


@app.tool(annotations=READ_ONLY)
def paginate_docs(
    # DOC-2: the schema promises an integer 1..100, but the parameter is typed Any, so nothing checks it.
    page_size: Annotated[Any, WithJsonSchema({"type": "integer", "minimum": 1, "maximum": 100})] = 10,
    page: Annotated[int, Field(ge=0, le=1000)] = 0,
) -> list[str]:
    """One page of the document list."""
    names = _all_docs()
    if not isinstance(page_size, int) or page_size == 0:
        _truth.triggered("DOC-2")
    starts = range(0, len(names), page_size)
    return names[starts[page] : starts[page] + page_size] if page < len(starts) else []


@app.tool(annotations=READ_ONLY)
def search_docs(
    query: Annotated[str, Field(min_length=1, max_length=200, examples=["endpoint"])],
    limit: Annotated[int, Field(ge=1, le=20)] = 5,
) -> list[str]:
    """Documents whose text contains the query."""
    needle = query.casefold()
    return [name for name in _all_docs() if needle in (_text_of(DOCS / name) or "").casefold()][:limit]


@app.tool(annotations=READ_ONLY)
def word_count(text: Annotated[str, Field(max_length=100_000)]) -> int:
    """How many words a text has."""
    return len(text.split())


@app.tool(annotations=ToolAnnotations(destructive_hint=True, read_only_hint=False))
def erase_drafts() -> str:
    """Erase every unpublished draft."""
    _truth.destructive("erase_drafts")
    return "drafts erased"


@app.resource("docs://index", name="docs-index", mime_type="text/plain")
def docs_index() -> str:
    """Every document's path."""
    return "\n".join(_all_docs())


@app.resource("docs://page/{page_id}", name="doc-page", mime_type="text/markdown")
def doc_page(page_id: str) -> str:
    """A document by its number in the index (0-based)."""
    try:
        index = int(page_id)
    except ValueError:
        # DOC-3: a non-numeric id escapes as an unhandled ValueError.
        _truth.triggered("DOC-3")
        raise
    names = _all_docs()
    if not 0 <= index < len(names):
        return f"no page {index}"
    return (DOCS / names[index]).read_text(encoding="utf-8")


_STYLES = {"brief": "in two sentences", "detailed": "section by section"}


@app.prompt()
def summarize_doc(doc: str, style: str = "brief") -> str:
    """Ask the model to summarise a document."""
    if style not in _STYLES:
        # DOC-4: an unknown style is looked up without a default (KeyError).
        _truth.triggered("DOC-4")
    return f"Summarise docs://{doc} {_STYLES[style]}."


if __name__ == "__main__":
    app.run("stdio")
