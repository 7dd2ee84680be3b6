"""bench-surrogate: a raw JSON-RPC stdio server confined to `--root DIR` that behaves like an old Python
SDK release did with a lone surrogate. Bug SUR-1.

    python surrogate.py --root DIR  # stdio; set BENCH_GROUND_TRUTH=FILE to record triggered bugs

Tool `set_title(title)` stores the title in DIR/title.txt. A `tools/call` whose arguments contain a
lone surrogate (a `\\udXXX` JSON escape that is not half of a pair) is never answered: encoding the
reply fails inside the writer task, which dies without a word. Every other request is answered, up
to the next request of any kind after that, which makes the process exit 1 with the writer's
traceback on stderr. Notifications are read and ignored, as before.

Written without the SDK, which behaves differently: mcp 2.3's stdio transport cannot parse a lone
surrogate escape either (pydantic rejects it), and drops the whole request without a reply (not even
a parse error), but it stays up and answers the next request.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import _scope
import _truth

ROOT = _scope.root_from_argv(__doc__)
TOOL = {
    "name": "set_title",
    "description": "Set the project's title.",
    "inputSchema": {
        "type": "object",
        "properties": {"title": {"type": "string", "maxLength": 200, "examples": ["Quarterly report"]}},
        "required": ["title"],
    },
    "annotations": {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True},
}
TRACEBACK = """\
Traceback (most recent call last):
  File "/usr/lib/python3/site-packages/mcp/server/stdio.py", line 74, in stdout_writer
    await stdout.write(json + "\\n")
  File "/usr/lib/python3/site-packages/anyio/streams/text.py", line 123, in send
    await self.transport_stream.send(item.encode(self.encoding, self.errors))
UnicodeEncodeError: 'utf-8' codec can't encode character '\\ud800' in position 61: surrogates not allowed
"""


def send(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def error(rid: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


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


def call(rid: Any, params: dict[str, Any]) -> dict[str, Any]:
    arguments = params.get("arguments") or {}
    if params.get("name") != TOOL["name"]:
        return error(rid, -32602, f"unknown tool {params.get('name')!r}")
    title = arguments.get("title") if isinstance(arguments, dict) else None
    if not isinstance(title, str) or len(title) > 200:
        text, is_error = "title must be a string of at most 200 characters", True
    else:
        (ROOT / "title.txt").write_text(title, encoding="utf-8")
        text, is_error = f"title set to {title!r}", False
    return {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}], "isError": is_error}}


def handle(msg: dict[str, Any]) -> dict[str, Any]:
    method, rid, params = msg.get("method"), msg.get("id"), msg.get("params")
    params = params if isinstance(params, dict) else {}
    if method == "initialize":
        return {"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"), "capabilities": {"tools": {}},
            "serverInfo": {"name": "bench-surrogate", "version": "1.0.0"}}}  # fmt: skip
    if method == "ping":
        return {"jsonrpc": "2.0", "id": rid, "result": {}}
    if method == "tools/list":
        return {"jsonrpc": "2.0", "id": rid, "result": {"tools": [TOOL]}}
    if method == "tools/call":
        return call(rid, params)
    return error(rid, -32601, f"method not found: {method}")


def main() -> None:
    writer_dead = False
    for raw in sys.stdin.buffer:
        try:
            msg = json.loads(raw.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            send(error(None, -32700, "parse error"))
            continue
        if not isinstance(msg, dict) or "method" not in msg or "id" not in msg:
            continue  # a notification, or a response to nothing
        if writer_dead:
            sys.stderr.write("Exception in the stdout writer task\n" + TRACEBACK)
            sys.stderr.flush()
            sys.exit(1)
        params = msg.get("params")
        if msg["method"] == "tools/call" and isinstance(params, dict) and has_lone_surrogate(params.get("arguments")):
            # SUR-1: the reply would carry the surrogate back; the writer task dies encoding it.
            _truth.triggered("SUR-1")
            writer_dead = True
            continue
        send(handle(msg))


if __name__ == "__main__":
    main()
