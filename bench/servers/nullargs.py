"""bench-nullargs: a raw JSON-RPC stdio server (no SDK, so nothing validates requests) that dies on
a `tools/call` whose `arguments` is JSON `null`: `params.get("arguments", {})` returns None and the
next `.get` raises out of the read loop, which exits 1 with a traceback. Bug NUL-1.

    python nullargs.py          # stdio; set BENCH_GROUND_TRUTH=FILE to record triggered bugs
    python nullargs_clean.py    # the clean twin: the same loop, `arguments: null` refused with -32602

An SDK client never sends `arguments: null` (it leaves the member out), so only a request written
by hand reaches the bug; every tool of the server has it. Arguments that are present but not an
object are refused with -32602 by both.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import _truth

TOOLS = [
    {
        "name": "set_flag",
        "description": "Turn a feature flag on or off.",
        "inputSchema": {
            "type": "object",
            "properties": {"name": {"type": "string", "maxLength": 64, "examples": ["dark_mode"]},
                           "enabled": {"type": "boolean"}},
            "required": ["name", "enabled"],
        },
        "annotations": {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True},
    },
    {
        "name": "get_flag",
        "description": "Whether a feature flag is on.",
        "inputSchema": {
            "type": "object",
            "properties": {"name": {"type": "string", "maxLength": 64, "examples": ["dark_mode"]}},
            "required": ["name"],
        },
        "annotations": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True},
    },
]  # fmt: skip
_FLAGS: dict[str, bool] = {"dark_mode": False}


def send(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def error(rid: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


def result(rid: Any, text: str, is_error: bool = False) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}], "isError": is_error}}


def call(rid: Any, params: dict[str, Any], clean: bool) -> dict[str, Any]:
    arguments = params.get("arguments", {})
    if arguments is None:
        if clean:
            return error(rid, -32602, "arguments must be an object")
        # NUL-1: None goes on as if it were the arguments object (AttributeError out of the loop).
        _truth.triggered("NUL-1")
    elif not isinstance(arguments, dict):
        return error(rid, -32602, "arguments must be an object")
    name = arguments.get("name")
    if params.get("name") not in ("set_flag", "get_flag"):
        return error(rid, -32602, f"unknown tool {params.get('name')!r}")
    if not isinstance(name, str) or not 0 < len(name) <= 64:
        return result(rid, "name must be a string of 1 to 64 characters", is_error=True)
    if params["name"] == "get_flag":
        return result(rid, f"{name}: {'on' if _FLAGS.get(name) else 'off'}")
    enabled = arguments.get("enabled")
    if not isinstance(enabled, bool):
        return result(rid, "enabled must be true or false", is_error=True)
    _FLAGS[name] = enabled
    return result(rid, f"{name} is now {'on' if enabled else 'off'}")


def handle(msg: dict[str, Any], clean: bool) -> dict[str, Any]:
    method, rid, params = msg.get("method"), msg.get("id"), msg.get("params")
    if method in ("tools/call", "tools/list") and params is not None and not isinstance(params, dict):
        return error(rid, -32602, "params must be an object")
    params = params if isinstance(params, dict) else {}
    if method == "initialize":
        return {"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"), "capabilities": {"tools": {}},
            "serverInfo": {"name": "bench-nullargs", "version": "1.0.0"}}}  # fmt: skip
    if method == "ping":
        return {"jsonrpc": "2.0", "id": rid, "result": {}}
    if method == "tools/list":
        return {"jsonrpc": "2.0", "id": rid, "result": {"tools": TOOLS}}
    if method == "tools/call":
        return call(rid, params, clean)
    return error(rid, -32601, f"method not found: {method}")


def main(clean: bool = False) -> None:
    for raw in sys.stdin.buffer:
        try:
            msg = json.loads(raw.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            send(error(None, -32700, "parse error"))
            continue
        if not isinstance(msg, dict) or "method" not in msg or "id" not in msg:
            continue  # a notification, or a response to nothing
        send(handle(msg, clean))


if __name__ == "__main__":
    main()
