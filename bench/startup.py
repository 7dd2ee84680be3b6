"""Start-up: how long after its spawn `fuzzgate run` sends its first call, beside how long the bare
server takes to answer `initialize` after its own spawn, measured in one run.

    python bench/startup.py [--rounds 5] [--budget 6] [--before REV] [--configs default,off]
                            [--transport stdio|http] [--out FILE]
    python bench/startup.py --markdown [FILE]

Server: `examples/servers/fast_server.py` over stdio, or with `--transport http` over streamable HTTP
on a free port, started by fuzzgate from `[target] command` (a `fuzzgate.toml` with `kind = "http"`).

- **bare server**: the bench spawns `PY fast_server.py`, writes an `initialize` request on its stdin
  and times spawn -> the reply's line (the server's own start: its interpreter, the SDK, the app).
  Over HTTP it POSTs `initialize` to the URL until the server answers, and times spawn -> the answer.
- **fuzzgate**: `fuzzgate run --command PY --arg=fast_server.py --budget Ns --seed 1 --trace T`;
  the first call is the trace's first record (`elapsed_s`, seconds from the process's start to the
  call's end, less its `duration_ms`); report.json `timing` gives when start-up (the server
  initialized) and discovery ended. Configs: `default` (the defaults: `--sandbox auto`, feedback
  auto, so the jail and the collector where they work) and `off` (`--sandbox off --feedback behaviour`).
- `--before REV`: the same fuzzgate runs, also with a snapshot of REV (`bench/snapshot.py`).

Every round measures everything, in an order rotated each round. Per round: first call - bare
start (the aim: within 1 s) and first call / bare start; the table gives medians.
Results: bench/.work/results/startup.json.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from procs import EXAMPLES, MAIN_VENV, PYTHON, RESULTS, WORK, free_port, fuzzgate_version, kill_group, log, save_json

FAST_SERVER = EXAMPLES / "fast_server.py"
RESULT = RESULTS / "startup.json"
CONFIGS = {"default": [], "off": ["--sandbox", "off", "--feedback", "behaviour"]}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}


def _http_argv(port: int) -> list[str]:
    return [PYTHON, str(FAST_SERVER), "--transport", "http", "--port", str(port)]


def _http_initialize(port: int) -> bytes | None:
    """POST `initialize` to the server on `port`: its answer, or None while nothing accepts."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        body = json.dumps(INITIALIZE).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        connection.request("POST", "/mcp", body, headers)
        return connection.getresponse().read()
    except ConnectionRefusedError:
        return None
    finally:
        connection.close()


def bare_start_http() -> dict[str, Any]:
    """Spawn the bare HTTP server and time spawn -> its answer to `initialize`."""
    port = free_port()
    started = time.monotonic()
    proc = subprocess.Popen(_http_argv(port), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    try:
        while (answer := _http_initialize(port)) is None:
            if proc.poll() is not None or time.monotonic() - started > 60:
                raise RuntimeError("the bare HTTP server never answered")
            time.sleep(0.005)
        answered = time.monotonic() - started
    finally:
        kill_group(proc)
    return _initialized(answer, answered)


def _initialized(answer: bytes, answered_s: float) -> dict[str, Any]:
    """The bare server's start, once its answer is known to be `initialize`'s result."""
    if b'"result"' not in answer:
        raise RuntimeError(f"the bare server did not initialize: {answer[:200]!r}")
    return {"initialized_s": round(answered_s, 3)}


def bare_start(transport: str = "stdio") -> dict[str, Any]:
    """Spawn the bare server and time spawn -> its reply to `initialize`."""
    if transport == "http":
        return bare_start_http()
    started = time.monotonic()
    proc = subprocess.Popen([PYTHON, str(FAST_SERVER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        proc.stdin.flush()
        line = proc.stdout.readline()
        answered = time.monotonic() - started
    finally:
        kill_group(proc)
    return _initialized(line, answered)


def _http_config(tmp: Path) -> None:
    """A `fuzzgate.toml` in `tmp` whose target is the fast server over HTTP, started by fuzzgate."""
    port = free_port()
    argv = _http_argv(port)
    args = ", ".join(json.dumps(a) for a in argv[1:])
    lines = ["[target]", 'kind = "http"', f'url = "http://127.0.0.1:{port}/mcp"', f"command = {json.dumps(argv[0])}",
             f"args = [{args}]"]  # fmt: skip
    (tmp / "fuzzgate.toml").write_text("\n".join(lines) + "\n")


def fuzzgate_start(fuzzgate: str, config: str, budget_s: float, transport: str = "stdio") -> dict[str, Any]:
    """One `fuzzgate run` with a trace: when its first call went out, after its process started."""
    WORK.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=WORK) as name:
        tmp = Path(name)
        out, trace = tmp / "out", tmp / "trace.jsonl"
        if transport == "http":
            _http_config(tmp)
            target = []
        else:
            target = ["--command", PYTHON, f"--arg={FAST_SERVER}"]
        argv = [fuzzgate, "run", *target, "--budget", f"{budget_s:g}s",
                "--seed", "1", "--baseline", str(tmp / "baseline"), "--corpus", str(tmp / "corpus"),
                "--out", str(out), "--trace", str(trace), *CONFIGS[config]]  # fmt: skip
        env = {**os.environ, "COLUMNS": "200"}
        env.pop("GITHUB_ACTIONS", None)
        started = time.monotonic()
        done = subprocess.run(argv, cwd=tmp, env=env, capture_output=True, text=True, timeout=budget_s + 120,
                              check=False)  # fmt: skip
        wall = time.monotonic() - started
        report = json.loads((out / "report.json").read_text()) if (out / "report.json").exists() else None
        first = trace.read_text().splitlines()[0] if trace.exists() and trace.stat().st_size else None
    if report is None:
        raise RuntimeError(f"fuzzgate failed (exit {done.returncode}):\n{(done.stdout + done.stderr)[-3000:]}")
    record = json.loads(first) if first else None
    first_call = round(record["elapsed_s"] - record["duration_ms"] / 1000, 3) if record else None
    timing = report.get("timing", {})
    return {
        "first_call_s": first_call,
        "startup_s": timing.get("startup"),
        "discovery_s": timing.get("discovery"),
        "calls": report["calls"],
        "wall_s": round(wall, 2),
    }


def measure(rounds: int, budget_s: float, configs: list[str], before: str | None, transport: str) -> dict[str, Any]:
    from snapshot import snapshot

    versions = {"now": str(MAIN_VENV / "bin" / "fuzzgate")}
    if before:
        versions = {f"before ({before})": str(snapshot(before) / "bin" / "fuzzgate"), **versions}
    jobs: list[tuple[str, str | None, str | None]] = [("bare", None, None)]
    jobs += [(f"{version} {config}", version, config) for version in versions for config in configs]
    rows: dict[str, list[dict[str, Any]]] = {label: [] for label, _, _ in jobs}
    load: list[float] = []
    for r in range(rounds):
        order = jobs[r % len(jobs) :] + jobs[: r % len(jobs)]
        load.append(round(os.getloadavg()[0], 2))
        for label, version, config in order:
            if version is None or config is None:
                m = bare_start(transport)
            else:
                m = fuzzgate_start(versions[version], config, budget_s, transport)
            rows[label].append(m)
            log(f"round {r + 1} {label}: {m}")
    bare = [m["initialized_s"] for m in rows["bare"]]
    cells = []
    for label, version, _ in jobs:
        if version is None:
            continue
        firsts = [m["first_call_s"] for m in rows[label]]
        pairs = [(f, b) for f, b in zip(firsts, bare, strict=True) if f is not None]
        cells.append({
            "label": label,
            "runs": rows[label],
            "first_call_median_s": statistics.median(f for f, _ in pairs) if pairs else None,
            "startup_median_s": statistics.median(m["startup_s"] for m in rows[label]),
            "discovery_median_s": statistics.median(m["discovery_s"] for m in rows[label]),
            "gap_median_s": round(statistics.median(f - b for f, b in pairs), 3) if pairs else None,
            "ratio_median": round(statistics.median(f / b for f, b in pairs), 2) if pairs else None,
            "no_call_runs": len(firsts) - len(pairs),
        })  # fmt: skip
    return {"bare": rows["bare"], "bare_median_s": statistics.median(bare), "cells": cells, "loadavg_1m": load}


def section(data: dict[str, Any]) -> list[str]:
    s = data["settings"]
    out = [
        "### Start-up: the first call against the bare server's own start",
        "",
        f"`bench/startup.py` ({data.get('started', '?')[:16]}, fuzzgate at git {data.get('git', '?')}): "
        f"{s['rounds']} rounds, order rotated; `fuzzgate run --budget {s['budget_s']:g}s --seed 1 --trace` on the fast "
        f"server over {s.get('transport', 'stdio')}, its first call (trace) in seconds from its process's start, "
        f"beside the bare server's spawn -> `initialize` reply (median {data['bare_median_s']:.2f} s). "
        "Aim: within 1 s of the bare start. "
        f"Load average (1 min) per round: {' / '.join(str(x) for x in data['loadavg_1m'])}.",
        "",
        "| fuzzgate | first call s | minus bare start s | / bare start | server initialized s | discovered s |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for c in data["cells"]:
        out.append(f"| {c['label']} | {c['first_call_median_s']} | **{c['gap_median_s']}** | {c['ratio_median']} | "
                   f"{c['startup_median_s']} | {c['discovery_median_s']} |")  # fmt: skip
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--budget", type=float, default=6.0, help="each fuzzgate run's --budget, s")
    p.add_argument("--configs", default="default,off", help=f"of {', '.join(CONFIGS)}")
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    p.add_argument("--before", metavar="REV", help="also measure a snapshot of REV (bench/snapshot.py)")
    p.add_argument("--out", type=Path, default=RESULT)
    p.add_argument("--markdown", type=Path, nargs="?", const=RESULT, help="print the table of a result file")
    ns = p.parse_args()
    if ns.markdown:
        print("\n".join(section(json.loads(ns.markdown.read_text()))))
        return
    git = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=EXAMPLES, capture_output=True, text=True,
                         check=False).stdout.strip()  # fmt: skip
    result: dict[str, Any] = {
        "settings": {
            "rounds": ns.rounds,
            "budget_s": ns.budget,
            "configs": ns.configs,
            "before": ns.before,
            "transport": ns.transport,
        },
        "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "git": git,
        "fuzzgate_version": fuzzgate_version(),
    }
    result |= measure(ns.rounds, ns.budget, ns.configs.split(","), ns.before, ns.transport)
    result["finished"] = time.strftime("%Y-%m-%d %H:%M:%S %z")
    save_json(ns.out, result)
    print("\n".join(section(result)))
    log(f"wrote {ns.out}")


if __name__ == "__main__":
    main()
