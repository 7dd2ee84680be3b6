"""A raw JSON-RPC stdio server whose every word tries to be a GitHub Actions workflow command:
tool names, replies, error messages, stdout and stderr carry `::error ...::`, `::stop-commands::`,
`\\n::warning::` and the older `##[error]` form.

    python command_injector.py [--die-at-start]

Every tool is a finding, so its name and text reach the console, the reports and the annotations:

| tool                        | finding          | how                                                |
| --------------------------- | ---------------- | -------------------------------------------------- |
| `::error title=pwned::name` | internal_error   | a stack trace in the reply                         |
| `##[error]rpc`              | internal_error   | JSON-RPC -32603 whose message has lines of its own |
| `stderr_trace`              | internal_error   | a traceback on stderr, among command lines         |
| `wrapped`                   | internal_error   | a message Rich wraps so `::` starts a line         |
| `stdout_line`               | protocol_error   | a non-JSON line on stdout                          |
| `crash`                     | crash            | command lines on stderr, then exit 1               |

`--die-at-start` writes command lines on stderr and exits 4 before initializing.
"""

from __future__ import annotations

import json
import sys

INJECTIONS = "::error file=README.md,line=1,title=pwned::injected\n::stop-commands::tok3n\n##[error]legacy\n"
TRACEBACK = 'Traceback (most recent call last):\n  File "/srv/app/tools.py", line 9, in handle\n'
NAMES = ("::error title=pwned::name", "##[error]rpc", "stderr_trace", "wrapped", "stdout_line", "crash")
SCHEMA = {"type": "object", "properties": {}}


def send(obj: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def text_result(rid: object, text: str, is_error: bool = False) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}], "isError": is_error}}


def call(rid: object, name: str) -> None:
    if name == NAMES[0]:
        send(text_result(rid, f"{TRACEBACK}ValueError: ::warning::from a reply ##[error]x\n{INJECTIONS}"))
    elif name == NAMES[1]:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": f"boom\n{INJECTIONS}::warning::w"}})
    elif name == "stderr_trace":
        sys.stderr.write(f"{INJECTIONS}{TRACEBACK}RuntimeError: ::stop-commands::abc123\n")
        sys.stderr.flush()
        send(text_result(rid, "Error executing tool stderr_trace", is_error=True))
    elif name == "wrapped":
        # Rich wraps the console line at a space: every wrapped line then starts with `::`.
        sys.stderr.write(f"{TRACEBACK}RuntimeError: {'::error::wrap ' * 30}\n")
        sys.stderr.flush()
        send(text_result(rid, "Error executing tool wrapped", is_error=True))
    elif name == "stdout_line":
        sys.stdout.write("::error::from stdout ##[error]x\n")
        send(text_result(rid, "done"))
    elif name == "crash":
        sys.stderr.write(INJECTIONS)
        sys.stderr.flush()
        sys.exit(1)


def main() -> None:
    if "--die-at-start" in sys.argv:
        sys.stderr.write(f"fatal\n{INJECTIONS}")
        sys.exit(4)
    for line in sys.stdin:
        msg = json.loads(line)
        method, rid = msg.get("method"), msg.get("id")
        if rid is None:
            continue
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": rid, "result": {
                "protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                "serverInfo": {"name": "::warning::server ##[error]name", "version": "::error::1"}}})  # fmt: skip
        elif method == "tools/list":
            tools = [{"name": n, "inputSchema": SCHEMA, "annotations": {"readOnlyHint": True}} for n in NAMES]
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": tools}})
        elif method == "tools/call":
            call(rid, msg["params"]["name"])
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "method not found"}})


if __name__ == "__main__":
    main()
