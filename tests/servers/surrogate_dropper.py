"""A raw JSON-RPC stdio server that behaves like an old Python SDK release with a lone surrogate.

    python surrogate_dropper.py [--root DIR] [--own-writer]

Tool `set_title(title)` stores the title in DIR/title.txt (DIR defaults to the working directory).
A `tools/call` whose arguments hold a lone surrogate (a `\\udXXX` JSON escape that is not half of a
pair) is never answered: encoding the reply killed the writer task without a word. Up to the next
request every message is still read; the next request of any kind (`ping`, `tools/list`, another
call) makes the process exit 1 with the writer's traceback on stderr. Notifications are read and
ignored, before and after. Every frame of that traceback is the SDK's or anyio's: the death is the
SDK's bug. With `--own-writer` the server writes its replies through an encoder of its own, and the
same death's traceback runs through a frame of this file: the server's bug.

mcp 2.3's own servers drop such a request too (their transport cannot parse the escape), but they
stay up and answer the next one.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

TOOL = {
    "name": "set_title",
    "description": "Set the project's title.",
    "inputSchema": {
        "type": "object",
        "properties": {"title": {"type": "string", "maxLength": 200}},
        "required": ["title"],
    },
}
TRACEBACK = """\
Exception in the stdout writer task
Traceback (most recent call last):
  File "/usr/lib/python3/site-packages/mcp/server/stdio.py", line 74, in stdout_writer
    await stdout.write(json + "\\n")
  File "/usr/lib/python3/site-packages/anyio/streams/text.py", line 123, in send
    await self.transport_stream.send(item.encode(self.encoding, self.errors))
UnicodeEncodeError: 'utf-8' codec can't encode character '\\ud800' in position 61: surrogates not allowed
"""
OWN_FRAME = f"""\
  File "{Path(__file__).resolve()}", line 58, in encode_reply
    return reply.encode("utf-8")
"""
"""The frame of this server's own encoder (`--own-writer`), between the SDK's writer and anyio."""


def send(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def has_lone_surrogate(value: Any) -> bool:
    """json.loads joins an escaped pair into one character, so any surrogate left is a lone one."""
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, str) and any(0xD800 <= ord(c) <= 0xDFFF for c in item):
            return True
        if isinstance(item, dict):
            todo += [*item.keys(), *item.values()]
        elif isinstance(item, list):
            todo += item
    return False


def answer(msg: dict[str, Any], root: Path) -> dict[str, Any]:
    method, rid = msg.get("method"), msg.get("id")
    raw_params = msg.get("params")
    params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
    if method == "initialize":
        return {"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"), "capabilities": {"tools": {}},
            "serverInfo": {"name": "surrogate-dropper", "version": "0"}}}  # fmt: skip
    if method == "ping":
        return {"jsonrpc": "2.0", "id": rid, "result": {}}
    if method == "tools/list":
        return {"jsonrpc": "2.0", "id": rid, "result": {"tools": [TOOL]}}
    if method == "tools/call" and params.get("name") == TOOL["name"]:
        arguments = params.get("arguments")
        title = arguments.get("title") if isinstance(arguments, dict) else None
        if isinstance(title, str) and len(title) <= 200:
            (root / "title.txt").write_text(title, encoding="utf-8")
            text, is_error = f"title set to {title!r}", False
        else:
            text, is_error = "title must be a string of at most 200 characters", True
        return {
            "jsonrpc": "2.0",
            "id": rid,
            "result": {"content": [{"type": "text", "text": text}], "isError": is_error},
        }
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"method not found: {method}"}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", type=Path, default=Path.cwd())
    parser.add_argument("--own-writer", action="store_true")
    options = parser.parse_args()
    root: Path = options.root
    traceback = TRACEBACK
    if options.own_writer:
        sdk_frame_ends = traceback.index("  File", traceback.index("stdio.py"))
        traceback = traceback[:sdk_frame_ends] + OWN_FRAME + traceback[sdk_frame_ends:]
    writer_dead = False
    for raw in sys.stdin.buffer:
        try:
            msg = json.loads(raw.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
            continue
        if not isinstance(msg, dict) or "method" not in msg or "id" not in msg:
            continue  # a notification, or a response to nothing
        if writer_dead:
            sys.stderr.write(traceback)
            sys.stderr.flush()
            sys.exit(1)
        params = msg.get("params")
        if msg["method"] == "tools/call" and isinstance(params, dict) and has_lone_surrogate(params.get("arguments")):
            writer_dead = True  # the reply would carry the surrogate back; writing it failed
            continue
        send(answer(msg, root))


if __name__ == "__main__":
    main()
