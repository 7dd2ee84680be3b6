"""An MCP server of notes whose bugs are reached only through values it hands out itself.

    python objects.py [--clean] [--token-ids]

| tool                         | bug                                                                  |
| ---------------------------- | -------------------------------------------------------------------- |
| `create_note(text)`          | clean: `{"id": <uuid4>}`                                             |
| `list_notes()`               | clean: every note's id and text, one pre-seeded note first           |
| `get_note(note_id)`          | raises after the delete of that note (use after delete); exits 3 on the pre-seeded id |
| `update_note(note_id, text)` | clean                                                                |
| `delete_note(note_id)`       | clean                                                                |

Ids are random UUIDs: a generated `note_id` never names a note, so only ids taken from the server's
own replies (`list_notes`, `create_note`) reach the bugs. With `--clean` both are fixed: a deleted
note is "no such note", the pre-seeded one is read like any other. `delete_note` is destructive by
name: fuzzgate calls it only when `[allow_destructive]` names it. With `--token-ids` a new note's
id looks like a GitHub token (`ghp_` and 36 letters and digits): a secret the server hands out,
which later calls send back.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import uuid
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

parser = argparse.ArgumentParser()
parser.add_argument("--clean", action="store_true")
parser.add_argument("--token-ids", action="store_true")
_ARGS = parser.parse_args()
CLEAN: bool = _ARGS.clean
TOKEN_IDS: bool = _ARGS.token_ids

SEEDED = "5eed0000-0000-4000-8000-00000000c0de"

# Plain text logs: MCPServer would draw each traceback through rich, a CPU-bound third of a second
# per exception (tests/servers/sdk_strict.py keeps rich, as most real servers on the SDK log).
logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
app = MCPServer("objects", log_level="WARNING")

NoteId = Annotated[str, Field(max_length=100, description="A note's id, as create_note or list_notes gave it.")]
Text = Annotated[str, Field(max_length=1000)]


class NoteRef(BaseModel):
    id: str


class Note(BaseModel):
    id: str
    text: str


_NOTES: dict[str, str] = {SEEDED: "welcome"}
_DELETED: set[str] = set()


def _note(note_id: str) -> str:
    if note_id in _DELETED and not CLEAN:
        # Planted: the note's slot was freed, and the read goes through it anyway.
        raise RuntimeError(f"note slot {note_id} was freed")
    if note_id not in _NOTES:
        raise ToolError("no such note")
    return _NOTES[note_id]


@app.tool()
def create_note(text: Text) -> NoteRef:
    """Create a note; returns its id."""
    if len(_NOTES) >= 500:
        raise ToolError("too many notes")
    note_id = f"ghp_{uuid.uuid4().hex}abcd" if TOKEN_IDS else str(uuid.uuid4())
    _NOTES[note_id] = text
    return NoteRef(id=note_id)


@app.tool()
def list_notes() -> list[Note]:
    """Every note."""
    return [Note(id=note_id, text=text) for note_id, text in _NOTES.items()]


@app.tool()
def get_note(note_id: NoteId) -> Note:
    """A note by id."""
    text = _note(note_id)
    if note_id == SEEDED and not CLEAN:
        # Planted: the welcome note is stored elsewhere, and reading it dies.
        os._exit(3)
    return Note(id=note_id, text=text)


@app.tool()
def update_note(note_id: NoteId, text: Text) -> Note:
    """Replace a note's text."""
    if note_id not in _NOTES:
        raise ToolError("no such note")
    _NOTES[note_id] = text
    return Note(id=note_id, text=text)


@app.tool()
def delete_note(note_id: NoteId) -> str:
    """Delete a note."""
    if note_id not in _NOTES:
        raise ToolError("no such note")
    del _NOTES[note_id]
    _DELETED.add(note_id)
    return "deleted"


if __name__ == "__main__":
    app.run()
