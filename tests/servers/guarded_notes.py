"""An MCP server whose bug hides behind a tool the destructive guard blocks: deleting a note twice
kills the process. fuzzgate reaches it only where it may call `delete_note`: allowlisted, or with
`fuzz_guarded_in_sandbox` where the sandbox holds.

    python guarded_notes.py

| tool               | bug                                                               |
| ------------------ | ----------------------------------------------------------------- |
| `add_note(text)`   | (clean) ids 1, 2, ... in creation order                           |
| `delete_note(id)`  | a second delete of the same id aborts the process (exit 70)       |
| `get_note(id)`     | (clean) a deleted or unknown id is refused                        |

With `GUARDED_MARKER_DIR=DIR` set, every call of `delete_note` first appends a line to
`DIR/.delete-called`: outside any sandbox it lands there, so a test can tell whether the tool was
ever called (in the sandbox DIR is read-only and the line is lost, as any write of the server's
outside its layer).
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

# Plain text logs: MCPServer would draw each traceback through rich, a CPU-bound third of a second
# per exception (tests/servers/sdk_strict.py keeps rich, as most real servers on the SDK log).
logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
app = MCPServer("guarded_notes", log_level="WARNING")

NoteId = Annotated[int, Field(ge=1, le=100, description="A note's number (1, 2, ... in creation order).")]


class Note(BaseModel):
    id: int
    text: str


_NOTES: dict[int, Note] = {}
_DELETED: set[int] = set()
_next_id = [1]


@app.tool()
def add_note(text: Annotated[str, Field(min_length=1, max_length=200)]) -> Note:
    """Add a note; its id is the next number."""
    if _next_id[0] > 100:
        raise ToolError("at most 100 notes")
    note = Note(id=_next_id[0], text=text)
    _NOTES[note.id] = note
    _next_id[0] += 1
    return note


@app.tool()
def delete_note(id: NoteId) -> str:
    """Delete a note."""
    marker_dir = os.environ.get("GUARDED_MARKER_DIR")
    if marker_dir:
        try:
            with open(os.path.join(marker_dir, ".delete-called"), "a", encoding="utf-8") as marker:
                marker.write(f"delete_note {id}\n")
        except OSError:
            pass
    if id in _DELETED:
        sys.stderr.write(f"notes.c:41: notes_delete: Assertion `slot->live' failed for note {id}\nAborted\n")
        sys.stderr.flush()
        os._exit(70)  # planted: double delete
    if id not in _NOTES:
        raise ToolError(f"no note {id}")
    del _NOTES[id]
    _DELETED.add(id)
    return f"note {id} deleted"


@app.tool()
def get_note(id: NoteId) -> Note:
    """A note by id."""
    if id not in _NOTES:
        raise ToolError(f"no note {id}")
    return _NOTES[id]


if __name__ == "__main__":
    app.run("stdio")
