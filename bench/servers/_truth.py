"""Ground truth for the benchmark servers: which planted bugs were really triggered, and when.

Every buggy code path calls `triggered(bug_id)` *before* it misbehaves, and every destructive tool
calls `destructive(tool)` first thing. Each call appends one JSON line to the file named by
`$BENCH_GROUND_TRUTH` (nothing is written when it is unset) and fsyncs it, because the next
statement may kill the process. The record is independent of any fuzzer: it is what the server
did, not what a fuzzer says it saw.

    {"bug": "LED-1", "t": 1763717000.123, "pid": 4242}
    {"destructive": "delete_ledger", "t": 1763717001.5, "pid": 4242}

When `$BENCH_GROUND_TRUTH` names a Unix socket, each line goes there instead, and the call waits for
the collector's `ok` (`bench/ground_truth.py` answers once the line is appended and fsynced). A
fuzzer's sandbox may leave the file system read-only outside the server's scope, and a scope that
is overlaid would swallow the writes; connecting to a socket still works on a read-only mount.

Importing this module also watches for one bug nobody planted: mcp 2.3's stdio transport cannot
parse a lone surrogate escape (`\\ud800`), and drops the whole message without a reply (not even a
parse error) while the server goes on. It says so only in a DEBUG line of
`mcp.shared.jsonrpc_dispatcher`; a filter on that logger records each drop as
`{"known": "SDK-DROP", ...}` and keeps the logger's other DEBUG lines off stderr, as before.

The servers also keep a handle on the real stdout (`REAL_STDOUT_FD`): the SDK's `stdio_server()`
points fd 1 at stderr while it serves, so a planted stdout corruption must write to a duplicate
taken at import time, the way a C extension or a subprocess would.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import stat
import time

REAL_STDOUT_FD = os.dup(1)


def _append(record: dict[str, object]) -> None:
    path = os.environ.get("BENCH_GROUND_TRUTH")
    if not path:
        return
    line = json.dumps({**record, "t": time.time(), "pid": os.getpid()}) + "\n"
    if os.path.exists(path) and stat.S_ISSOCK(os.stat(path).st_mode):
        _send(path, line.encode())
        return
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, line.encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def _send(path: str, line: bytes) -> None:
    """One line to the collector at `path`, returning once it says the line is on disk."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(path)
        sock.sendall(line)
        if sock.makefile("rb").readline() != b"ok\n":
            raise OSError(f"the ground-truth collector at {path} did not confirm the record")


def triggered(bug: str) -> None:
    """Record that planted bug `bug` is about to misbehave."""
    _append({"bug": bug})


def destructive(tool: str) -> None:
    """Record that a destructive tool was called (it changes nothing, but must never be called)."""
    _append({"destructive": tool})


SDK_DROP = "SDK-DROP"
_SDK_DISPATCHER = "mcp.shared.jsonrpc_dispatcher"
_SDK_DROP_MESSAGE = "transport yielded exception"


class _SdkDropRecorder(logging.Filter):
    """Records the SDK's "transport yielded exception" DEBUG line; lets only INFO and above through,
    so the logger, set to DEBUG for this line's sake, prints what it printed before."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.INFO:
            return True
        if record.msg == _SDK_DROP_MESSAGE + ": %r":
            # Raising here would raise inside the SDK's read loop: a lost record must not kill the server.
            with contextlib.suppress(OSError):
                _append({"known": SDK_DROP, "error": record.getMessage()[:300]})
        return False


def _watch_sdk_drops() -> None:
    logger = logging.getLogger(_SDK_DISPATCHER)
    logger.addFilter(_SdkDropRecorder())
    logger.setLevel(logging.DEBUG)


def write_real_stdout(text: str) -> None:
    """Write to the process's original stdout, bypassing the SDK's redirection."""
    os.write(REAL_STDOUT_FD, text.encode())


_watch_sdk_drops()
