"""fuzzgate's own work per call: whole runs with `--sandbox off --feedback behaviour` (no sandbox, no
collector: what is left is fuzzgate's per-call work and the SDK's), of this checkout and of a snapshot
of another commit, each against the bare SDK loop measured in the same round.

    python bench/percall.py [--before REV] [--rounds 3] [--seconds 12] [--transports stdio,http] [--ceiling]
                            [--out FILE]
    python bench/percall.py --markdown [FILE]

Server: `examples/servers/fast_server.py` (one tool that answers at once). Each run is
`fuzzgate run --budget 12s --seed 1 --sandbox off --feedback behaviour` (`wholerun.py` times it the
same way; its `bare` loop is the baseline); `--before REV` also runs a snapshot of REV
(`bench/snapshot.py`, default `main`).

`--ceiling` also measures, each round, the bare loop sending fuzzgate's own arguments (those of a
`--trace` of one run of this checkout, recorded first, in order and round again): what those inputs
cost the server and the SDK with no fuzzer around them: about what any client sending those calls
one at a time could reach. `ceiling / bare` is what the inputs themselves cost against `{"n": i}`;
`calls / ceiling` is what fuzzgate's own work per call leaves of it.

Per run: `calls / bare calls` of its round (the issue's figure: at least 0.8), and the fuzzing rate,
`calls / (fuzzing end - discovery end)` from report.json's `timing`, which leaves start-up out and so
shows the per-call work alone; `now / before` is the ratio of the two versions' rates in the same
round. Rounds are interleaved (bare, then the versions, their order rotated each round); the table
gives medians. Results: bench/.work/results/percall.json.
"""

from __future__ import annotations

import argparse
import contextlib
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


def fuzzgate(binary: str, seconds: float, url: str | None, trace: Path | None = None) -> dict[str, Any]:
    target = ["--url", url] if url else ["--command", PYTHON, f"--arg={FAST_SERVER}"]
    WORK.mkdir(parents=True, exist_ok=True)
    procs.FUZZGATE = binary
    with tempfile.TemporaryDirectory(dir=WORK) as name:
        tmp = Path(name)
        args = [*target, "--budget", f"{seconds:g}s", "--seed", "1", "--baseline", str(tmp / "baseline"), *FLAGS]
        args += ["--trace", str(trace)] if trace else []
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


CEILING = "bare, fuzzgate's arguments"


def recorded_arguments(binary: str, seconds: float) -> Path:
    """The arguments one stdio run of `binary` sent, in order (`--ceiling`), as a JSON list."""
    trace = WORK / "percall-trace.jsonl"
    trace.unlink(missing_ok=True)
    fuzzgate(binary, seconds, None, trace)
    sent = [json.loads(line) for line in trace.read_text().splitlines() if line.strip()]
    arguments = [s["arguments"] for s in sent if s.get("tool") == "ping_fast" and isinstance(s.get("arguments"), dict)]
    out = WORK / "percall-arguments.json"
    out.write_text(json.dumps(arguments))
    log(f"ceiling: {len(arguments)} recorded arguments")
    return out


def measure(rounds: int, seconds: float, transports: list[str], before: str | None, ceiling: bool) -> dict[str, Any]:
    from snapshot import snapshot

    versions = {"now": str(MAIN_VENV / "bin" / "fuzzgate")}
    replayed = recorded_arguments(versions["now"], seconds) if ceiling else None
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
            bare_calls = ceiling_calls = 0
            round_rates: dict[str, float | None] = {}
            for who in ["bare", *([CEILING] if replayed else []), *names]:
                loads.append(round(os.getloadavg()[0], 2))
                with http_server(server, port) if transport == "http" else contextlib.nullcontext() as url:
                    if who == "bare":
                        m = bare(transport, seconds, url)
                    elif who == CEILING:
                        m = bare(transport, seconds, url, replayed)
                    else:
                        m = fuzzgate(versions[who], seconds, url)
                if who == "bare":
                    bare_calls = m["calls"]
                else:
                    m["ratio"] = round(m["calls"] / bare_calls, 3)
                if who == CEILING:
                    ceiling_calls = m["calls"]
                elif who != "bare":
                    round_rates[who] = m["rate"]
                    if replayed:
                        m["vs_ceiling"] = round(m["calls"] / ceiling_calls, 3)
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
        if who not in ("bare", CEILING):
            cell["vs_ceiling_median"] = statistics.median(m["vs_ceiling"] for m in runs) if replayed else None
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
        "| transport | version | calls | calls / bare calls | calls / ceiling | calls per fuzzing second | "
        "rate now / before |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for c in data["cells"]:
        if c["version"] == "bare":
            out.append(f"| {c['transport']} | bare SDK loop | {c['calls_median']:g} | 1 | | | |")
            continue
        if c["version"] == CEILING:
            out.append(f"| {c['transport']} | ceiling: {CEILING} | {c['calls_median']:g} | "
                       f"{c['ratio_median']:.2f} | 1 | | |")  # fmt: skip
            continue
        vs, top = c.get("rate_vs_before_median"), c.get("vs_ceiling_median")
        out.append(
            f"| {c['transport']} | {c['version']} | {c['calls_median']:g} | **{c['ratio_median']:.2f}** | "
            f"{'' if top is None else f'{top:.2f}'} | {c['rate_median']:.0f} | {'' if vs is None else f'{vs:.2f}'} |"
        )
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--before", metavar="REV", default="main", help="also measure a snapshot of REV ('' for none)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seconds", type=float, default=12.0)
    p.add_argument("--transports", default="stdio,http")
    p.add_argument("--ceiling", action="store_true", help="also the bare loop sending fuzzgate's own arguments")
    p.add_argument("--out", type=Path, default=RESULT)
    p.add_argument("--markdown", nargs="?", const=str(RESULT), default=None)
    ns = p.parse_args()
    if ns.markdown:
        print("\n".join(section(json.loads(Path(ns.markdown).read_text()))))
        return
    os.environ["WHOLERUN_SECONDS"] = repr(ns.seconds)
    started = time.strftime("%Y-%m-%d %H:%M")
    data = measure(ns.rounds, ns.seconds, ns.transports.split(","), ns.before or None, ns.ceiling)
    settings = {"rounds": ns.rounds, "seconds": ns.seconds, "transports": ns.transports, "before": ns.before,
                "ceiling": ns.ceiling}  # fmt: skip
    save_json(ns.out, {"started": started, "settings": settings, **data})
    print("\n".join(section({"started": started, "settings": settings, **data})))


if __name__ == "__main__":
    sys.exit(main())
