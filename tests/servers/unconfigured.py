"""An MCP server that needs an API key from its environment, as zotero-mcp does: without
`NOTES_API_KEY` every tool raises the same `ValueError`, uncaught; with it, every tool answers."""

from __future__ import annotations

import os
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from pydantic import Field

app = MCPServer("unconfigured", log_level="WARNING")


def _client() -> str:
    key = os.environ.get("NOTES_API_KEY")
    if not key:
        raise ValueError("Missing required environment variables. Please set NOTES_API_KEY")
    return key[:0]


@app.tool()
def search_notes(query: Annotated[str, Field(max_length=40)]) -> str:
    """Search the notes."""
    return _client() + f"no note matches {query!r}"


@app.tool()
def note_metadata(note_id: Annotated[int, Field(ge=0, le=1000)]) -> str:
    """A note's metadata."""
    return _client() + f"note {note_id}: no metadata"


@app.tool()
def note_fulltext(note_id: Annotated[int, Field(ge=0, le=1000)]) -> str:
    """A note's text."""
    return _client() + f"note {note_id}: empty"


if __name__ == "__main__":
    app.run("stdio")
