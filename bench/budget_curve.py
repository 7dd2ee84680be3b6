"""What a short budget finds of what a long one does: fuzzgate on the planted-bug servers at 20 s and
at 60 s, the same seed, scored against each server's own ground truth (`bugs.py`).

    python bench/budget_curve.py [--budgets 20,60] [--servers ledger,jobs,orders,docs,nested] [--out FILE]
    python bench/budget_curve.py --markdown [FILE]

For every server, one run per budget back to back (the order flipped on every other server, so
neither budget always runs on the warmer machine); a planted bug counts as found when fuzzgate
reported it (`score.reported`). The figure: bugs found at the short budget / bugs found at the long
one, over all servers (the issue's aim: at least 0.9 for 20 s against 60 s). Results:
bench/.work/results/budget_curve.json.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from bugs import DEFAULT_SEED, fresh_dir, run_fuzzgate_on
from procs import RESULTS, WORK, fuzzgate_version, log, save_json

RESULT = RESULTS / "budget_curve.json"
SERVERS = ("ledger", "jobs", "orders", "docs", "nested")
SANDBOX_OFF = ("--sandbox", "off")
"""The servers report their ground truth on a Unix socket outside their scope, which fuzzgate's
sandbox (an allowlist: no host socket is reachable) now keeps them from: these servers touch no
network and write nowhere, so they run without it, and the servers that take `--root` are not here."""


def measure(servers: list[str], budgets: list[float], seed: str) -> list[dict[str, Any]]:
    runs = []
    for i, server in enumerate(servers):
        order = budgets if i % 2 == 0 else list(reversed(budgets))
        for budget in order:
            work = fresh_dir(WORK / "budget_curve" / server / f"{budget:g}")
            load = round(os.getloadavg()[0], 2)
            run = run_fuzzgate_on(server, budget, seed, work, extra=SANDBOX_OFF)
            found = sorted(run["score"]["reported"])
            log(f"{server} at {budget:g}s: {len(found)} found {found}, {run['calls']} calls, load {load}")
            runs.append({
                "server": server, "budget_s": budget, "found": found, "calls": run["calls"],
                "false_positives": run["score"]["false_positives"], "wall_s": run["wall_s"], "load": load,
            })  # fmt: skip
    return runs


def section(data: dict[str, Any]) -> list[str]:
    short, long = data["budgets"][0], data["budgets"][-1]
    by = {(r["server"], r["budget_s"]): r for r in data["runs"]}
    servers = list(dict.fromkeys(r["server"] for r in data["runs"]))
    total = {b: sum(len(by[(s, b)]["found"]) for s in servers if (s, b) in by) for b in (short, long)}
    ratio = total[short] / total[long] if total[long] else 0.0
    out = [
        f"### What {short:g} s finds of what {long:g} s finds",
        "",
        f"`bench/budget_curve.py` ({data['started'][:16]}, {data['fuzzgate']}, seed {data['seed'][:12]}): one "
        f"fuzzgate run per budget on each planted-bug server, back to back, scored against the server's ground "
        f"truth. Found at {short:g} s / found at {long:g} s over all servers: **{ratio:.2f}** "
        f"({total[short]} of {total[long]}).",
        "",
        f"| server | found at {short:g} s | found at {long:g} s | calls at {short:g} s | calls at {long:g} s "
        "| false positives |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for s in servers:
        a, b = by.get((s, short)), by.get((s, long))
        if a is None or b is None:
            continue
        out.append(
            f"| {s} | {len(a['found'])} | {len(b['found'])} | {a['calls']:,} | {b['calls']:,} | "
            f"{a['false_positives']} / {b['false_positives']} |"
        )
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--budgets", default="20,60")
    p.add_argument("--servers", default=",".join(SERVERS))
    p.add_argument("--seed", default=DEFAULT_SEED)
    p.add_argument("--out", type=Path, default=RESULT)
    p.add_argument("--markdown", nargs="?", const=str(RESULT), default=None)
    ns = p.parse_args()
    if ns.markdown:
        print("\n".join(section(json.loads(Path(ns.markdown).read_text()))))
        return
    budgets = sorted(float(b) for b in ns.budgets.split(","))
    data: dict[str, Any] = {"started": time.strftime("%Y-%m-%d %H:%M"), "fuzzgate": fuzzgate_version(),
                            "seed": ns.seed, "budgets": budgets}  # fmt: skip
    data["runs"] = measure(ns.servers.split(","), budgets, ns.seed)
    save_json(ns.out, data)
    print("\n".join(section(data)))


if __name__ == "__main__":
    main()
