"""Gate stability: the same servers, five commit-like seeds, one baseline.

    python bench/stability.py [--quick] [--budget 12] [--servers ledger,...] [--out FILE]

For each benchmark server: `fuzzgate run` with the first seed, `fuzzgate baseline accept`, then
`fuzzgate run --baseline DIR` with each of the other four seeds, all with the same budget. Nothing
about the server changes between runs, so every finding a later run calls `new` is spurious from
the gate's point of view (the target is 0). Each is classified:

- `fingerprint drift`: it maps to a planted bug the baseline already holds under another
  fingerprint (the fingerprint is not stable across seeds);
- `coverage`: it maps to a planted bug the first seed did not report;
- `false positive`: it maps to no triggered planted bug.

A run "fails the gate" when fuzzgate exits 1 (a new, confirmed finding at or above fail-on);
flaky new findings are counted but never fail the gate.
"""

from __future__ import annotations

import argparse
import subprocess
import time
from pathlib import Path
from typing import Any

from bugs import fresh_dir, run_fuzzgate_on
from procs import FUZZGATE, RESULTS, WORK, log, save_json
from servers.catalog import SERVERS as SERVER_NAMES

SEEDS = (
    "3f1c9a7e5b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a",
    "a94b1e0c7d3f52e8b6c4d2a0f8e6c4b2a0d8f6e4",
    "07d2e5f8a1b4c7d0e3f6a9b2c5d8e1f4a7b0c3d6",
    "c3b8a5f2e9d6c3b0a7f4e1d8c5b2a9f6e3d0c7b4",
    "5e0a4f8b2c6d1e9f3a7b5c0d8e2f6a4b9c1d7e3f",
)
"""Five fixed SHA-like seeds (the first is bugs.py's default), so every run of the benchmark uses the
same ones."""


SANDBOX_OFF = ("--sandbox", "off")
"""The servers report their ground truth on a Unix socket outside their scope, which fuzzgate's
sandbox keeps them from (each instrumented bug then fails as a sandbox error and gates nothing):
as in budget_curve.py, the servers that take no `--root` run without it."""


def accept(out: Path, baseline: Path) -> None:
    subprocess.run(
        [FUZZGATE, "baseline", "accept", "--out", str(out), "--baseline", str(baseline), "--command", "true"],
        check=True,
        capture_output=True,
        cwd=out.parent,
    )


def fingerprints_by_bug(run: dict[str, Any]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for report in run["score"]["true_reports"]:
        found.setdefault(report["bug"], set()).add(report["label"])
    return found


def classify_new(run: dict[str, Any], base: dict[str, set[str]]) -> list[dict[str, Any]]:
    """The findings this run calls new, each with why it is spurious."""
    bug_of = {r["label"]: r["bug"] for r in run["score"]["true_reports"]}
    spurious = []
    for finding in run["findings"]:
        if finding["baseline_state"] != "new":
            continue
        bug = bug_of.get(finding["fingerprint"])
        if bug is None:
            why = "false positive"
        elif bug in base:
            why = "fingerprint drift"
        else:
            why = "coverage"
        spurious.append({**finding, "bug": bug, "why": why})
    return spurious


def stability(server: str, budget: float) -> dict[str, Any]:
    root = fresh_dir(WORK / "stability" / server)
    baseline = root / "baseline"
    runs = []
    first = run_fuzzgate_on(server, budget, SEEDS[0], fresh_dir(root / "seed-1"), baseline, extra=SANDBOX_OFF)
    accept(root / "seed-1" / "out", baseline)
    base = fingerprints_by_bug(first)
    log(f"  seed 1: {len(first['findings'])} findings accepted into the baseline")
    for i, seed in enumerate(SEEDS[1:], start=2):
        run = run_fuzzgate_on(server, budget, seed, fresh_dir(root / f"seed-{i}"), baseline, extra=SANDBOX_OFF)
        spurious = classify_new(run, base)
        runs.append(
            {
                "seed": seed,
                "exit_code": run["exit_code"],
                "findings": len(run["findings"]),
                "new": spurious,
                "new_gating": [s for s in spurious if not s["flaky"]],
                "bugs_reported": sorted(run["score"]["reported"]),
                "fingerprints": {b: sorted(f) for b, f in fingerprints_by_bug(run).items()},
            }
        )
        log(f"  seed {i}: {len(spurious)} new (exit {run['exit_code']})")
    drifted = {}
    for bug, prints in base.items():
        others = set().union(*(set(r["fingerprints"].get(bug, ())) for r in runs))
        if others - prints:
            drifted[bug] = {"baseline": sorted(prints), "other_seeds": sorted(others - prints)}
    return {
        "server": server,
        "baseline_findings": len(first["findings"]),
        "baseline_bugs": sorted(first["score"]["reported"]),
        "baseline_fingerprints": {b: sorted(f) for b, f in base.items()},
        "runs": runs,
        "drifted": drifted,
        "spurious_new": sum(len(r["new"]) for r in runs),
        "gate_failures": sum(1 for r in runs if r["exit_code"] == 1),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--quick", action="store_true", help="3 s per run, servers orders and docs only")
    p.add_argument("--budget", type=float, default=12.0, help="seconds per run")
    p.add_argument("--servers", default=None, help="default: all five (quick: orders,docs)")
    p.add_argument("--out", type=Path, default=RESULTS / "stability.json")
    ns = p.parse_args()
    if ns.quick:
        ns.budget = 3.0
    servers = ns.servers or ("orders,docs" if ns.quick else ",".join(SERVER_NAMES))
    result: dict[str, Any] = {
        "settings": {"budget_s": ns.budget, "seeds": list(SEEDS), "quick": ns.quick},
        "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "servers": [],
        "errors": [],
    }
    for server in servers.split(","):
        log(f"stability of {server}: 5 seeds x {ns.budget:g}s")
        try:
            result["servers"].append(stability(server, ns.budget))
        except Exception as exc:
            result["errors"].append(f"{server}: {exc}")
            log(f"  failed: {exc}")
        save_json(ns.out, result)
    result["finished"] = time.strftime("%Y-%m-%d %H:%M:%S %z")
    save_json(ns.out, result)
    log(f"wrote {ns.out}")


if __name__ == "__main__":
    main()
