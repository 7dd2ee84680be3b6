"""A raw JSON-RPC stdio server that misbehaves on purpose, below what any SDK would let it do.

    python hostile.py [--die-at-start | --never-initialize] [--paginate] [--untyped-schema]

Tool `misbehave(mode)`: "ok" answers properly; "wrong_id" answers with another id; "garbage"
prints a non-JSON line first; "invalid" sends a response without result or error; "exit" exits 3
with a message on stderr; "server_error" answers with a JSON-RPC error -32000 and stays up.
`--untyped-schema` lists the tool with an input schema that holds only `$schema`, no `"type":
"object"`, as `@modelcontextprotocol/server-gitlab` 2025.4.25 lists all of its tools.
"""

from __future__ import annotations

import json
import sys

TOOL = {
    "name": "misbehave",
    "inputSchema": {
        "type": "object",
        "properties": {
            "mode": {"enum": ["ok", "wrong_id", "garbage", "invalid", "exit", "server_error"]},
            "echo": {"type": "string"},
        },
        "required": ["mode"],
    },
}


def send(obj: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main() -> None:
    if "--die-at-start" in sys.argv:
        print("fatal: missing DATABASE_URL", file=sys.stderr)
        sys.exit(4)
    for line in sys.stdin:
        msg = json.loads(line)
        method, rid = msg.get("method"), msg.get("id")
        if rid is None:
            continue
        if method == "initialize":
            if "--never-initialize" in sys.argv:
                continue
            send({"jsonrpc": "2.0", "id": rid, "result": {
                "protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile", "version": "0"}}})  # fmt: skip
        elif method == "tools/list":
            cursor = (msg.get("params") or {}).get("cursor")
            if "--paginate" in sys.argv and cursor is None:
                send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [TOOL], "nextCursor": "page-2"}})
            elif cursor == "page-2":
                second = {**TOOL, "name": "second_page_tool"}
                send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [second]}})
            elif "--untyped-schema" in sys.argv:
                untyped = {**TOOL, "inputSchema": {"$schema": "http://json-schema.org/draft-07/schema#"}}
                send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [untyped]}})
            else:
                send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [TOOL]}})
        elif method == "tools/call":
            mode = msg["params"]["arguments"].get("mode")
            text = msg["params"]["arguments"].get("echo", "fine")
            ok = {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}}
            if mode == "wrong_id":
                send({**ok, "id": rid + 1000})
            elif mode == "garbage":
                sys.stdout.write("DEBUG: this is not json\n")
                send(ok)
            elif mode == "invalid":
                send({"jsonrpc": "2.0", "id": rid, "foo": 1})
            elif mode == "server_error":
                # -32000 is the SDK's "connection closed" code, and a code servers use for their own errors.
                error = {"code": -32000, "message": "Connection closed by upstream"}
                send({"jsonrpc": "2.0", "id": rid, "error": error})
            elif mode == "exit":
                print("panic: exiting", file=sys.stderr, flush=True)
                sys.exit(3)
            else:
                send(ok)
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "method not found"}})


if __name__ == "__main__":
    main()
