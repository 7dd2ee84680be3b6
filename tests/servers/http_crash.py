"""A streamable-HTTP MCP server with one planted crash, for the tests of an HTTP target whose
command fuzzgate starts (and of the same server started by the test, reached by URL only).

    python http_crash.py --port PORT [--host 127.0.0.1]

Tools:

- `store_record(name, copies)`: `copies` is 1 .. 64; at 64, the schema's maximum and a boundary
  value fuzzgate tries early, the "native buffer" overflows: the server logs a Python traceback
  (`RuntimeError: record buffer overflow`) to stderr and the whole process exits with status 3,
  taking every HTTP connection with it. Any other input is stored and answered.
- `echo(text)`: answers its text; clean.

The server writes one line to stdout when it starts: over HTTP stdout is only more logs, which
fuzzgate must drain and never read as MCP.

    python http_crash.py --port PORT --call-log FILE

also appends a line to FILE for every `tools/call` request the server receives (whether the tool
then runs or rejects its arguments), its params as JSON: what a run's count must agree with.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import traceback
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from pydantic import Field

# Plain text logs, as the example servers write them: a traceback keeps its `File "..."` frames.
logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
app = MCPServer("fuzzgate-http-crash")
_records: dict[str, int] = {}


def _overflow(name: str) -> None:
    raise RuntimeError("record buffer overflow")


@app.tool(annotations=READ_ONLY)
def store_record(
    name: Annotated[str, Field(max_length=100, description="The record's name.")],
    copies: Annotated[int, Field(ge=1, le=64, description="How many copies to keep.")],
) -> str:
    """Store a record in the native buffer."""
    if copies == 64:
        try:
            _overflow(name)
        except RuntimeError:
            traceback.print_exc()
            sys.stderr.flush()
            os._exit(3)
    _records[name] = copies
    return f"stored {copies} copies"


@app.tool(annotations=READ_ONLY)
def echo(text: Annotated[str, Field(max_length=200)]) -> str:
    """Answer the text."""
    return text


def _params(body: bytes) -> Any:
    try:
        return json.loads(body).get("params")
    except (ValueError, AttributeError):
        return None


def counting(asgi: Any, log: Path) -> Any:
    """`asgi`, appending a line to `log` for each POST whose body holds a `tools/call` request: its
    params as JSON (null when the body is not a JSON-RPC object)."""

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await asgi(scope, receive, send)
            return
        body = bytearray()

        async def sniff() -> Any:
            message = await receive()
            if message["type"] == "http.request":
                body.extend(message.get("body", b""))
                if not message.get("more_body") and b'"tools/call"' in body:
                    with log.open("a", encoding="utf-8") as handle:
                        handle.write(json.dumps(_params(bytes(body))) + "\n")
            return message

        await asgi(scope, sniff, send)

    return wrapped


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--call-log", type=Path)
    args = parser.parse_args()
    print(f"http_crash: serving on {args.host}:{args.port}", flush=True)
    if args.call_log is None:
        app.run("streamable-http", host=args.host, port=args.port)
    else:
        import uvicorn

        served = counting(app.streamable_http_app(host=args.host), args.call_log)
        uvicorn.run(served, host=args.host, port=args.port, log_level="warning")
