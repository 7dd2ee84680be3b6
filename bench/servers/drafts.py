"""bench-drafts: a drafts MCP server (MCPServer) whose delete leaves a tombstone in the index that
`get_draft` does not expect. Ids are opaque tokens handed out by `create_draft` (the same ones in
every fresh process, so a replay meets the same ids), so only a sequence reaches the bug:
create, delete, then get the same id. Bug UAD-1.

    python drafts.py            # stdio; set BENCH_GROUND_TRUTH=FILE to record triggered bugs

`delete_draft` is destructive by name only (it deletes what the caller created in memory); the
benchmark allows it (`catalog.ALLOWED_DESTRUCTIVE`). The clean look-alike `peek_draft` reads a
draft the same way and handles the tombstone; deleting twice is refused politely.
"""

from __future__ import annotations

import hashlib
from typing import Annotated

import _truth
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

app = MCPServer("bench-drafts", version="1.0.0", instructions="Write drafts, read them back, delete them.")
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False)
MAX_DRAFTS = 200

DraftId = Annotated[str, Field(min_length=1, max_length=32, description="A draft's id, as create_draft returns it.")]


class Draft(BaseModel):
    id: str
    title: str
    body: str


_DRAFTS: dict[str, Draft | None] = {}
"""None is a deleted draft's tombstone, kept so that ids are never reused."""
_created = 0


def _new_id() -> str:
    return "drf_" + hashlib.sha256(f"draft-{_created}".encode()).hexdigest()[:8]


def _known(draft_id: str) -> Draft | None:
    if draft_id not in _DRAFTS:
        raise ToolError(f"no draft {draft_id!r}")
    return _DRAFTS[draft_id]


@app.tool(annotations=WRITES)
def create_draft(
    title: Annotated[str, Field(min_length=1, max_length=200, examples=["Release notes"])],
    body: Annotated[str, Field(max_length=10_000)] = "",
) -> Draft:
    """Start a draft; its id is returned."""
    global _created
    if _created >= MAX_DRAFTS:
        raise ToolError(f"at most {MAX_DRAFTS} drafts")
    draft = Draft(id=_new_id(), title=title, body=body)
    _created += 1
    _DRAFTS[draft.id] = draft
    return draft


@app.tool(annotations=READ_ONLY)
def get_draft(draft_id: DraftId) -> Draft:
    """A draft by id."""
    draft = _known(draft_id)
    if draft is None:
        # UAD-1: the tombstone is read as a draft (AttributeError on None).
        _truth.triggered("UAD-1")
    return Draft(id=draft_id, title=draft.title, body=draft.body)  # type: ignore[union-attr]


@app.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False))
def delete_draft(draft_id: DraftId) -> str:
    """Delete a draft."""
    if _known(draft_id) is None:
        raise ToolError(f"draft {draft_id!r} is already deleted")
    _DRAFTS[draft_id] = None
    return f"draft {draft_id} deleted"


# ------------------------------------------------------------------------------------------ clean


@app.tool(annotations=READ_ONLY)
def peek_draft(draft_id: DraftId) -> str:
    """A draft's title, or that it was deleted."""
    draft = _known(draft_id)
    return f"{draft_id}: deleted" if draft is None else f"{draft_id}: {draft.title}"


@app.tool(annotations=READ_ONLY)
def list_drafts() -> list[str]:
    """The ids of the drafts not deleted."""
    return [i for i, d in _DRAFTS.items() if d is not None]


if __name__ == "__main__":
    app.run("stdio")
