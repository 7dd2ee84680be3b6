"""fuzzgate's own work per call: whole runs with `--sandbox off --feedback behaviour` (no sandbox, no
collector: what is left is fuzzgate's per-call work and the SDK's), of this checkout and of a snapshot
of another commit, each against the bare SDK loop measured in the same round.

    python bench/percall.py [--before REV] [--rounds 3] [--seconds 12] [--transports stdio,http] [--out FILE]
    python bench/percall.py --markdown [FILE]

Server: `examples/servers/fast_server.py` (one tool that answers at once). Each run is
`fuzzgate run --budget 12s --seed 1 --sandbox off --feedback behaviour` (`wholerun.py` times it the
same way; its `bare` loop is the baseline); `--before REV` also runs a snapshot of REV
(`bench/snapshot.py`, default `main`).

Per run: `calls / bare calls` of its round (the issue's figure: at least 0.8), and the fuzzing rate,
`calls / (fuzzing end - discovery end)` from report.json's `timing`, which leaves start-up out and so
shows the per-call work alone; `now / before` is the ratio of the two versions' rates in the same
round. Rounds are interleaved (bare, then the versions, their order rotated each round); the table
gives medians. Results: bench/.work/results/percall.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import procs
from procs import MAIN_VENV, PYTHON, RESULTS, WORK, free_port, http_server, log, run_fuzzgate, save_json
from wholerun import FAST_SERVER, bare

RESULT = RESULTS / "percall.json"
FLAGS = ("--sandbox", "off", "--feedback", "behaviour")


def fuzzgate(binary: str, seconds: float, url: str | None) -> dict[str, Any]:
    target = ["--url", url] if url else ["--command", PYTHON, f"--arg={FAST_SERVER}"]
    WORK.mkdir(parents=True, exist_ok=True)
    procs.FUZZGATE = binary
    with tempfile.TemporaryDirectory(dir=WORK) as name:
        tmp = Path(name)
        args = [*target, "--budget", f"{seconds:g}s", "--seed", "1", "--baseline", str(tmp / "baseline"), *FLAGS]
        run = run_fuzzgate(args, tmp / "out", cwd=tmp, timeout_s=seconds + 300)
    if run.report is None:
        raise RuntimeError(f"fuzzgate run failed (exit {run.exit_code}):\n{run.output[-3000:]}")
    timing = run.report.get("timing") or {}
    fuzzing_s = timing.get("fuzzing", 0.0) - timing.get("discovery", 0.0)
    return {
        "calls": run.report["calls"],
        "wall_s": round(run.wall_s, 2),
        "fuzzing_s": round(fuzzing_s, 2),
        "rate": round(run.report["calls"] / fuzzing_s, 1) if fuzzing_s > 0 else None,
        "timing": timing,
    }


def measure(rounds: int, seconds: float, transports: list[str], before: str | None) -> dict[str, Any]:
    from snapshot import snapshot

    versions = {"now": str(MAIN_VENV / "bin" / "fuzzgate")}
    if before:
        versions = {f"before ({before})": str(snapshot(before) / "bin" / "fuzzgate"), **versions}
    rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
    loads: list[float] = []
    for r in range(rounds):
        for transport in transports:
            names = list(versions)
            names = names[r % len(names) :] + names[: r % len(names)]
            port = free_port() if transport == "http" else 0
            server = [PYTHON, str(FAST_SERVER), "--transport", "http", "--port", str(port)]
            bare_calls = 0
            round_rates: dict[str, float | None] = {}
            for who in ["bare", *names]:
                loads.append(round(os.getloadavg()[0], 2))
                if transport == "http":
                    with http_server(server, port) as url:
                        m = bare(transport, seconds, url) if who == "bare" else fuzzgate(versions[who], seconds, url)
                else:
                    m = bare(transport, seconds, None) if who == "bare" else fuzzgate(versions[who], seconds, None)
                if who == "bare":
                    bare_calls = m["calls"]
                else:
                    m["ratio"] = round(m["calls"] / bare_calls, 3)
                    round_rates[who] = m["rate"]
                rows.setdefault((transport, who), []).append(m)
                log(f"round {r + 1} {transport} {who}: {m['calls']} calls in {m['wall_s']} s wall")
            now, then = round_rates.get("now"), next((v for k, v in round_rates.items() if k != "now"), None)
            if now and then:
                rows[(transport, "now")][-1]["rate_vs_before"] = round(now / then, 3)
    cells = []
    for (transport, who), runs in rows.items():
        cell: dict[str, Any] = {"transport": transport, "version": who, "runs": runs,
                                "calls_median": statistics.median(m["calls"] for m in runs)}  # fmt: skip
        if who != "bare":
            cell["ratio_median"] = statistics.median(m["ratio"] for m in runs)
            cell["rate_median"] = statistics.median(m["rate"] or 0.0 for m in runs)
            vs = [m["rate_vs_before"] for m in runs if "rate_vs_before" in m]
            cell["rate_vs_before_median"] = statistics.median(vs) if vs else None
        cells.append(cell)
    return {"cells": cells, "loadavg_1m": loads}


def section(data: dict[str, Any]) -> list[str]:
    s, loads = data["settings"], data["loadavg_1m"]
    out = [
        f"### fuzzgate's per-call work (`--sandbox off --feedback behaviour`, whole runs of {s['seconds']:g} s)",
        "",
        f"`bench/percall.py` ({data['started'][:16]}): {s['rounds']} interleaved rounds on the fast server, "
        f"medians (load average {min(loads)}-{max(loads)}).",
        "",
        "| transport | version | calls | calls / bare calls | calls per fuzzing second | rate now / before |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for c in data["cells"]:
        if c["version"] == "bare":
            out.append(f"| {c['transport']} | bare SDK loop | {c['calls_median']:g} | 1 | | |")
            continue
        vs = c.get("rate_vs_before_median")
        out.append(
            f"| {c['transport']} | {c['version']} | {c['calls_median']:g} | **{c['ratio_median']:.2f}** | "
            f"{c['rate_median']:.0f} | {'' if vs is None else f'{vs:.2f}'} |"
        )
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--before", metavar="REV", default="main", help="also measure a snapshot of REV ('' for none)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seconds", type=float, default=12.0)
    p.add_argument("--transports", default="stdio,http")
    p.add_argument("--out", type=Path, default=RESULT)
    p.add_argument("--markdown", nargs="?", const=str(RESULT), default=None)
    ns = p.parse_args()
    if ns.markdown:
        print("\n".join(section(json.loads(Path(ns.markdown).read_text()))))
        return
    os.environ["WHOLERUN_SECONDS"] = repr(ns.seconds)
    started = time.strftime("%Y-%m-%d %H:%M")
    data = measure(ns.rounds, ns.seconds, ns.transports.split(","), ns.before or None)
    settings = {"rounds": ns.rounds, "seconds": ns.seconds, "transports": ns.transports, "before": ns.before}
    save_json(ns.out, {"started": started, "settings": settings, **data})
    print("\n".join(section({"started": started, "settings": settings, **data})))


if __name__ == "__main__":
    sys.exit(main())
