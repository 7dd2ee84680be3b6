"""Fuzzing's share of a run that has findings to confirm: before and after warm spares, in one session.

    python bench/verify_share.py [--budget 60] [--rounds 2] [--before REV] [--transport stdio|http]
                                 [--out FILE] [--markdown]

The server is examples/servers/buggy_server.py (a dozen planted bugs: crashes, a hang, a slow
tool, internal errors, leaks), fuzzed by whole `fuzzgate run` processes with `--budget`, `--replays
3` and the defaults (sandbox, coverage collector): every finding is to be confirmed with three
replays on fresh servers. "Before" is a snapshot of REV (default `main`, through bench/snapshot.py),
"after" the working tree's fuzzgate; each round runs both with the same seed, alternating which
goes first, so the two see the same machine load.

`--transport http`: the same server over streamable HTTP, started by fuzzgate from `[target] command`
(a config file beside the run, a free port each run): replays wait until fuzzing is over and take
the one port in turn, so the fuzzing deadline's estimate of verification, and the calls in flight at
it, decide the share.

Fuzzing's share of the budget is the time from the first call to fuzzing's end over the budget:
report.json `timing.fuzzing` (when fuzzing ended, new calls stopped and those in flight observed)
less `timing.discovery` (the protocol probes and the first cases go out as soon as the tools are
listed). Beside it: how many findings got all three replays and reproduced on each (confirmed),
the calls sent (after / before: what fuzzing did with its time), the wall time against the budget.
Default result file: bench/.work/results/verify_share.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import procs
from procs import EXAMPLES, REPO, RESULTS, WORK, free_port, log, run_fuzzgate, save_json
from snapshot import snapshot

SERVER = EXAMPLES / "buggy_server.py"


def _target(out: Path, transport: str) -> list[str]:
    if transport == "stdio":
        return ["--command", sys.executable, f"--arg={SERVER}"]
    port = free_port()
    config = out / "fuzzgate.toml"
    args = [str(SERVER), "--transport", "http", "--port", str(port)]
    config.write_text(
        f'[target]\nkind = "http"\nurl = "http://127.0.0.1:{port}/mcp"\ncommand = {json.dumps(sys.executable)}\n'
        f"args = {json.dumps(args)}\n"
    )
    return ["--config", str(config)]


def _one(label: str, venv: Path, out: Path, budget: float, seed: int, transport: str = "stdio") -> dict[str, Any]:
    markers = out / "markers"
    markers.mkdir(parents=True, exist_ok=True)
    procs.FUZZGATE = str(venv / "bin" / "fuzzgate")
    load = os.getloadavg()[0]
    run = run_fuzzgate(
        [*_target(out, transport), "--budget", f"{budget:g}s", "--replays", "3", "--seed", str(seed)],
        out / "run",
        cwd=out,
        env={"FUZZGATE_EXAMPLE_MARKER_DIR": str(markers)},
        timeout_s=budget * 3 + 120,
    )  # fmt: skip
    report = run.report or {}
    timing = report.get("timing", {})
    findings = report.get("findings", [])
    first, ended = timing.get("discovery"), timing.get("fuzzing")
    share = round((ended - first) / budget, 3) if first is not None and ended is not None else None
    return {
        "label": label,
        "seed": seed,
        "load": round(load, 2),
        "exit_code": run.exit_code,
        "wall_s": round(run.wall_s, 2),
        "timing": timing,
        "share": share,
        "calls": report.get("calls", 0),
        "findings": len(findings),
        "confirmed": sum(1 for f in findings if f.get("replays") == 3 and f.get("reproduced") == 3),
        "flaky": sum(1 for f in findings if f.get("flaky")),
        "short": sum(1 for f in findings if 0 < (f.get("replays") or 0) < 3),
        "unconfirmed": sum(1 for f in findings if f.get("unconfirmed")),
        "notes": report.get("notes", []),
    }


def measure(budget: float, rounds: int, before: Path, after: Path, transport: str = "stdio") -> dict[str, Any]:
    result: dict[str, Any] = {
        "budget_s": budget,
        "transport": transport,
        "started": time.strftime("%F %T %z"),
        "before": str(before),
        "rounds": [],
    }
    for index in range(rounds):
        seed = 7 + index
        order = [("before", before), ("after", after)]
        if index % 2:
            order.reverse()
        pair = {}
        for label, venv in order:
            log(f"verify_share: round {index + 1}, {label}, seed {seed}, {budget:g}s")
            pair[label] = _one(label, venv, WORK / "verify_share" / f"{index}-{label}", budget, seed, transport)
        before_calls = pair["before"]["calls"]
        pair["calls_ratio"] = round(pair["after"]["calls"] / before_calls, 3) if before_calls else None
        result["rounds"].append(pair)
    for label in ("before", "after"):
        shares = [r[label]["share"] for r in result["rounds"] if r[label]["share"] is not None]
        result[f"{label}_share_median"] = statistics.median(shares) if shares else None
    result["finished"] = time.strftime("%F %T %z")
    return result


def section(data: dict[str, Any] | None) -> list[str]:
    lines = ["### Fuzzing's share of a run with findings to confirm (warm spares)", ""]
    if not data:
        return [*lines, "_Not measured in this run (bench/verify_share.py)._", ""]
    lines += [
        f"`fuzzgate run` on examples/servers/buggy_server.py over {data.get('transport', 'stdio')},"
        f" `--budget {data['budget_s']:g}s --replays 3`, the"
        " defaults (sandbox, coverage collector); before (a snapshot of main) and after (warm spares) with the",
        "same seed in each round, alternating which goes first. Share: (`timing.fuzzing` − `timing.discovery`) /"
        " budget. Confirmed: findings that got all three replays and failed on each.",
        "",
        "| round | seed | load | version | first call | fuzzing ended | share | verification ended | wall | calls "
        "| findings | confirmed 3/3 | flaky | fewer replays | unconfirmed |",
        "| ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for index, pair in enumerate(data["rounds"], 1):
        for label in ("before", "after"):
            r = pair[label]
            t = r["timing"]
            share = f"{r['share']:.0%}" if r["share"] is not None else "-"
            lines.append(
                f"| {index} | {r['seed']} | {r['load']:.1f} | {label} | {t.get('discovery', 0):.1f} s "
                f"| {t.get('fuzzing', 0):.1f} s | {share} | {t.get('verification', 0):.1f} s | {r['wall_s']:.1f} s "
                f"| {r['calls']} | {r['findings']} | {r['confirmed']} | {r['flaky']} | {r['short']} "
                f"| {r['unconfirmed']} |"
            )
    medians = ", ".join(
        f"{label} {data[f'{label}_share_median']:.0%}"
        for label in ("before", "after")
        if data.get(f"{label}_share_median") is not None
    )
    ratios = [pair["calls_ratio"] for pair in data["rounds"] if pair["calls_ratio"] is not None]
    lines += ["", f"Median share: {medians}. Calls after / before, per round: {', '.join(map(str, ratios))}.", ""]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--budget", type=float, default=60.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--before", default="main", help="the revision measured as before (bench/snapshot.py)")
    parser.add_argument("--before-venv", type=Path, help="a venv whose fuzzgate is the before")
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--out", type=Path, default=RESULTS / "verify_share.json")
    parser.add_argument("--markdown", action="store_true", help="also print the Markdown section")
    ns = parser.parse_args()
    before = ns.before_venv or snapshot(ns.before)
    data = measure(ns.budget, ns.rounds, before, REPO / ".venv", ns.transport)
    save_json(ns.out, data)
    log(f"fuzzing's share, median: before {data['before_share_median']}, after {data['after_share_median']}")
    if ns.markdown:
        print("\n".join(section(data)))


if __name__ == "__main__":
    main()
