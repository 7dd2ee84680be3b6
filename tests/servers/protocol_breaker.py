"""A hand-written JSON-RPC MCP server with protocol bugs planted where no SDK would let them be.

    python protocol_breaker.py [--clean] [--http PORT]

Speaks the handshake era (2025-11-25 and older; `server/discover` is an unknown method, so an
auto-negotiating client falls back to `initialize`) over stdio, or over streamable HTTP at
`http://127.0.0.1:PORT/mcp` (plain JSON answers, a session id from `initialize`, 202 for
notifications, no SSE stream).

Tools: `echo(text?)`, which requires nothing, and `add(a, b)`, which requires both integers.

Planted, unless `--clean`:

- four lines of text on stdout before anything else (a start-up banner; over HTTP stdout is only
  logs, and harmless);
- a `tools/call` with `arguments` omitted is answered with a JSON-RPC internal error (-32603), as a
  server does that reads `params["arguments"]` without checking it is there;
- a `tools/call` with `arguments: null` kills the process (exit 3, a traceback on stderr).

With `--clean` it does none of that: omitted or null arguments are taken as `{}`. Everything else
is answered correctly in both modes: -32601 for an unknown method, -32602 for an unknown tool or
params of the wrong type, -32600 (id null) for a message that is no request, ids echoed as sent,
notifications and responses read and ignored.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOOLS = [
    {
        "name": "echo",
        "description": "Echo a text back.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    },
    {
        "name": "add",
        "description": "Add two integers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
]
BANNER = ["protocol-breaker 0.1 starting", "loading tools...", "2 tools ready", "listening on stdio"]
CLEAN = False


def error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def result(request_id: Any, value: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def text_result(request_id: Any, text: str, is_error: bool = False) -> dict[str, Any]:
    return result(request_id, {"content": [{"type": "text", "text": text}], "isError": is_error})


def valid_id(value: Any) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def crash(detail: str) -> None:
    try:
        raise AttributeError(f"'NoneType' object has no attribute 'items' ({detail})")
    except AttributeError:
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(3)


def call_tool(rid: Any, params: dict[str, Any]) -> dict[str, Any]:
    name = params.get("name")
    if not isinstance(name, str):
        return error(rid, -32602, "params.name must be a string")
    if "arguments" not in params:
        if not CLEAN:
            return error(rid, -32603, "Internal error: 'arguments'")
        arguments: Any = {}
    else:
        arguments = params["arguments"]
    if arguments is None:
        if not CLEAN:
            crash(name)
        arguments = {}
    if not isinstance(arguments, dict):
        return error(rid, -32602, "params.arguments must be an object")
    if name == "echo":
        text = arguments.get("text", "")
        if not isinstance(text, str):
            return text_result(rid, "text must be a string", is_error=True)
        return text_result(rid, text)
    if name == "add":
        a, b = arguments.get("a"), arguments.get("b")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (a, b)):
            return text_result(rid, "a and b must be integers", is_error=True)
        assert isinstance(a, int) and isinstance(b, int)
        return text_result(rid, str(a + b))
    return error(rid, -32602, f"Unknown tool: {name}")


def handle(message: Any) -> dict[str, Any] | None:
    """The reply to one message, or None when it gets none (a notification, a response)."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return error(None, -32600, "Invalid Request")
    if "method" not in message:
        return None
    method = message["method"]
    if "id" not in message:
        return None
    rid = message["id"]
    if not isinstance(method, str) or not valid_id(rid):
        return error(None, -32600, "Invalid Request")
    params = message.get("params")
    if params is None:
        params = {}
    if not isinstance(params, dict):
        return error(rid, -32602, "params must be an object")
    if method == "initialize":
        version = params.get("protocolVersion")
        return result(
            rid,
            {
                "protocolVersion": version if isinstance(version, str) else "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "protocol-breaker", "version": "0.1"},
            },
        )
    if method == "ping":
        return result(rid, {})
    if method == "tools/list":
        return result(rid, {"tools": TOOLS})
    if method == "tools/call":
        return call_tool(rid, params)
    return error(rid, -32601, f"Method not found: {method}")


def serve_stdio() -> None:
    if not CLEAN:
        for line in BANNER:
            print(line, flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            reply: dict[str, Any] | None = error(None, -32700, "Parse error")
        else:
            reply = handle(message)
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        sys.stderr.write(format % args + "\n")

    def _send(self, status: int, body: dict[str, Any] | None = None, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            message = json.loads(raw)
        except ValueError:
            self._send(400, error(None, -32700, "Parse error"))
            return
        reply = handle(message)
        if reply is None:
            self._send(202)
            return
        headers = {}
        if isinstance(message, dict) and message.get("method") == "initialize":
            headers["Mcp-Session-Id"] = "breaker-session"
        self._send(400 if reply.get("id") is None else 200, reply, headers)

    def do_GET(self) -> None:
        self._send(405)

    def do_DELETE(self) -> None:
        self._send(200)


def main() -> None:
    global CLEAN
    parser = argparse.ArgumentParser(description="an MCP server with planted protocol bugs")
    parser.add_argument("--clean", action="store_true", help="plant nothing")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on this port")
    args = parser.parse_args()
    CLEAN = args.clean
    if args.http is None:
        serve_stdio()
        return
    if not CLEAN:
        for line in BANNER:
            print(line, flush=True)
    ThreadingHTTPServer(("127.0.0.1", args.http), Handler).serve_forever()


if __name__ == "__main__":
    main()
