"""A raw JSON-RPC stdio server that answers the requests its client cancelled, late and twice, as
the Python MCP SDK 1.x does: the spec says a cancelled request SHOULD NOT be answered, and that its
sender SHOULD ignore a reply that comes anyway.

    python late_replier.py

Tools: protocol_breaker.py's clean `echo` and `add`, and `sleepy`, which never answers by itself.
A cancellation (`notifications/cancelled`) of a request it received is answered at once with the
error `{"code": 0, "message": "Request cancelled"}`, whether it had answered that request already
or not (the SDK's race between a handler finishing and its cancellation); a cancellation of a
request it never received is ignored. A cancelled `sleepy` call is answered once more, with the
result its handler finished with, before the answer to the next request. Everything else is
protocol_breaker.py's `--clean` behaviour: a correct server, but for the answers to requests the
client gave up on.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import protocol_breaker as clean

SLEEPY = {
    "name": "sleepy",
    "description": "Take longer than any client waits.",
    "inputSchema": {"type": "object", "properties": {}},
}


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    clean.CLEAN = True
    received: list[Any] = []
    sleeping: list[Any] = []
    cancelled: list[Any] = []
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            send(clean.error(None, -32700, "Parse error"))
            continue
        method = message.get("method") if isinstance(message, dict) else None
        params = message.get("params") if isinstance(message, dict) else None
        if method == "notifications/cancelled" and isinstance(params, dict):
            request_id = params.get("requestId")
            if request_id in received:
                send(clean.error(request_id, 0, "Request cancelled"))
            if request_id in sleeping:
                sleeping.remove(request_id)
                cancelled.append(request_id)
            continue
        if isinstance(message, dict) and "id" in message and isinstance(method, str):
            received.append(message["id"])
            for request_id in cancelled:
                send(clean.text_result(request_id, "finally done"))
            cancelled.clear()
        if method == "tools/call" and isinstance(params, dict) and params.get("name") == "sleepy":
            sleeping.append(message["id"])
            continue
        reply = clean.handle(message)
        if method == "tools/list" and reply is not None and "result" in reply:
            reply["result"]["tools"] = [*reply["result"]["tools"], SLEEPY]
        if reply is not None:
            send(reply)


if __name__ == "__main__":
    main()
