"""A line-based server using only the standard library (not MCP): one JSON request per line on
stdin, one JSON answer per line on stdout. The collector's tests run it on interpreters that have
no `mcp` installed, such as a Python 3.12+ for the sys.monitoring probe.

    python line_server.py      # {"word": "..."} -> {"answer": "..."}, {"n": 3} -> {"total": 3}
                               # {"traced": 1} -> {"traced": whether anything measures the code now}
"""

from __future__ import annotations

import json
import sys


def check(word: str) -> str:
    if word == "open-sesame":
        return "opened"
    if len(word) == 7:
        return "seven letters"
    return "closed"


def count(n: int) -> int:
    total = 0
    for i in range(n):
        total += i
    return total


def traced() -> bool:
    """Whether anything measures this server's code now: a trace function in this thread (3.11), or
    sys.monitoring events on `check` (3.12+)."""
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is None:
        return sys.gettrace() is not None
    return any(monitoring.get_local_events(tool, check.__code__) for tool in range(6))


def main() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        if "traced" in request:
            answer: dict[str, object] = {"traced": traced()}
        elif "word" in request:
            answer = {"answer": check(request["word"])}
        else:
            answer = {"total": count(request["n"])}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
