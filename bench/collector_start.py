"""The collector's cost at a server's start: CPU seconds a Python MCP server takes from its spawn to
its answer to `initialize` and its exit, without the coverage collector and with it, measured in
one run (every restart, replay and shrinking step of a run pays a start).

    python bench/collector_start.py [--rounds 9] [--before REV] [--server PATH] [--out FILE]
    python bench/collector_start.py --markdown [FILE]

Server: `examples/servers/buggy_server.py` (the MCP SDK's `MCPServer`, 17 tools) by default, run by
the project's Python, over stdio, with no sandbox (the jail's own processes are not the collector's
cost). Each start is one child process of a measuring process; its CPU is that process's
`RUSAGE_CHILDREN` (user + system) after the server exited.

- **plain**: the server as fuzzgate starts it under `--feedback behaviour`.
- **collector**: as fuzzgate starts it under coverage feedback (`CoverageChannel.apply`: the
  collector's `sitecustomize`, its pipes), until the collector's hello is read.
- `--before REV`: the collector of a snapshot of REV (`bench/snapshot.py`) too, started the same way
  by a measuring process running that snapshot.

Rounds are interleaved and the order rotated each round; the table gives the medians and the ratio
collector / plain of each round's pair. Results: bench/.work/results/collector_start.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from procs import EXAMPLES, MAIN_VENV, RESULTS, log, save_json

RESULT = RESULTS / "collector_start.json"
DEFAULT_SERVER = EXAMPLES / "buggy_server.py"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}


def one_start(server: Path, collector: bool) -> float:
    """Inside a measuring process: one start of `server`, its CPU seconds."""
    import anyio

    from fuzzgate.coverage.channel import CoverageChannel
    from fuzzgate.coverage.plan import CollectorPlan
    from fuzzgate.sandbox.owned_process import LaunchSpec, child_environment

    spec = LaunchSpec(sys.executable, (str(server),), child_environment({}), server.parent)
    channel = None
    if collector:
        channel = CoverageChannel(CollectorPlan(True, "bench", directories=(server.parent,)))
        spec = channel.apply(spec)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    process = subprocess.Popen(
        [spec.command, *spec.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=spec.env,
        cwd=spec.cwd,
        pass_fds=spec.pass_fds,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        process.stdin.flush()
        line = process.stdout.readline()
        if b'"result"' not in line:
            raise SystemExit(f"the server did not answer initialize: {line[:200]!r}")
        if channel is not None and anyio.run(channel.hello, 10) is None:
            raise SystemExit("the collector sent no hello")
    finally:
        if channel is not None:
            channel.close()
        process.stdin.close()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def start_cpu(python: str, server: Path, collector: bool) -> float:
    """One start measured by a fresh measuring process of `python` (a fuzzgate venv's)."""
    args = [python, str(Path(__file__).resolve()), "_one", str(server), "collector" if collector else "plain"]
    out = subprocess.run(args, capture_output=True, text=True, check=True, cwd=Path(__file__).parent)
    return float(out.stdout.strip())


def measure(rounds: int, server: Path, before: str | None) -> dict[str, Any]:
    pythons = {"now": str(MAIN_VENV / "bin" / "python")}
    if before:
        from snapshot import snapshot

        pythons[f"before ({before})"] = str(snapshot(before) / "bin" / "python")
    jobs = [("plain", pythons["now"], False)] + [(f"{name} collector", py, True) for name, py in pythons.items()]
    rows: dict[str, list[float]] = {label: [] for label, _, _ in jobs}
    load: list[float] = []
    for r in range(rounds):
        order = jobs[r % len(jobs) :] + jobs[: r % len(jobs)]
        load.append(round(os.getloadavg()[0], 2))
        for label, python, collector in order:
            rows[label].append(round(start_cpu(python, server, collector), 3))
        log(f"round {r + 1}: " + ", ".join(f"{label} {rows[label][-1]:.3f}" for label, _, _ in jobs))
    cells = []
    for label, _, collector in jobs:
        ratios = [c / p for c, p in zip(rows[label], rows["plain"], strict=True)]
        cells.append({
            "label": label,
            "cpu_s": rows[label],
            "median_cpu_s": round(statistics.median(rows[label]), 3),
            "ratio_to_plain_median": round(statistics.median(ratios), 2) if collector else 1.0,
        })  # fmt: skip
    return {"server": server.name, "python": sys.version.split()[0], "rounds": rounds, "cells": cells, "loadavg_1m": load}


def section(data: dict[str, Any]) -> list[str]:
    lines = [
        f"Server start CPU ({data['server']}, Python {data['python']}, {data['rounds']} interleaved rounds,"
        f" load {min(data['loadavg_1m'])}-{max(data['loadavg_1m'])}):",
        "",
        "| start | median CPU (s) | collector / plain (median of rounds) |",
        "| --- | --- | --- |",
    ]
    for cell in data["cells"]:
        lines.append(f"| {cell['label']} | {cell['median_cpu_s']:.3f} | {cell['ratio_to_plain_median']:.2f} |")
    return lines


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "_one":
        print(f"{one_start(Path(sys.argv[2]), sys.argv[3] == 'collector'):.4f}")
        return
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--server", type=Path, default=DEFAULT_SERVER)
    p.add_argument("--before", metavar="REV", help="also measure the collector of a snapshot of REV")
    p.add_argument("--out", type=Path, default=RESULT)
    p.add_argument("--markdown", type=Path, nargs="?", const=RESULT, help="print the table of a result file")
    args = p.parse_args()
    if args.markdown:
        print("\n".join(section(json.loads(args.markdown.read_text()))))
        return
    data = measure(args.rounds, args.server.resolve(), args.before)
    save_json(args.out, data)
    print("\n".join(section(data)))


if __name__ == "__main__":
    main()
