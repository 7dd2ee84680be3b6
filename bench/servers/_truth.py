"""Ground truth for the benchmark servers: which planted bugs were really triggered, and when.

Every buggy code path calls `triggered(bug_id)` *before* it misbehaves, and every destructive tool
calls `destructive(tool)` first thing. Each call appends one JSON line to the file named by
`$BENCH_GROUND_TRUTH` (nothing is written when it is unset) and fsyncs it, because the next
statement may kill the process. The record is independent of any fuzzer: it is what the server
did, not what a fuzzer says it saw.

    {"bug": "LED-1", "t": 1763717000.123, "pid": 4242}
    {"destructive": "delete_ledger", "t": 1763717001.5, "pid": 4242}

The servers also keep a handle on the real stdout (`REAL_STDOUT_FD`): the SDK's `stdio_server()`
points fd 1 at stderr while it serves, so a planted stdout corruption must write to a duplicate
taken at import time, the way a C extension or a subprocess would.
"""

from __future__ import annotations

import json
import os
import time

REAL_STDOUT_FD = os.dup(1)


def _append(record: dict[str, object]) -> None:
    path = os.environ.get("BENCH_GROUND_TRUTH")
    if not path:
        return
    line = json.dumps({**record, "t": time.time(), "pid": os.getpid()}) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, line.encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def triggered(bug: str) -> None:
    """Record that planted bug `bug` is about to misbehave."""
    _append({"bug": bug})


def destructive(tool: str) -> None:
    """Record that a destructive tool was called (it changes nothing, but must never be called)."""
    _append({"destructive": tool})


def write_real_stdout(text: str) -> None:
    """Write to the process's original stdout, bypassing the SDK's redirection."""
    os.write(REAL_STDOUT_FD, text.encode())
