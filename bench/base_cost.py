"""What `--base` costs a 60 s run: the same run with and without the base check, in one session.

    python bench/base_cost.py [--budget 60] [--seeds 2] [--out FILE]

The server is tests/servers/revision.py at two revisions (the head adds one buggy tool to a base
that has an old bug): with `--base` the head's bug stays new and the old one is pre-existing. Both
runs use the same seed and budget, one after the other, each alternating which goes first; the
figures are ratios within a pair (calls sent, wall time), never absolute speeds, as the machine is
shared. Default result file: bench/.work/results/base_cost.json.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from procs import REPO, RESULTS, WORK, log, run_fuzzgate, save_json

SERVER = REPO / "tests" / "servers" / "revision.py"


def _checkouts(root: Path) -> tuple[Path, Path]:
    shutil.rmtree(root, ignore_errors=True)
    head, base = root / "head", root / "base"
    for directory in (head, base):
        directory.mkdir(parents=True)
        shutil.copy(SERVER, directory / "server.py")
    (head / "head.txt").write_text("the head adds `ratio`\n")
    return head, base


def _one(head: Path, out: Path, budget: float, seed: int, base: Path | None) -> dict[str, Any]:
    args = ["--command", sys.executable, "--arg", "server.py", "--budget", f"{budget:g}s", "--seed", str(seed)]
    args += ["--feedback", "behaviour", "--baseline", str(out / "baseline"), "--corpus", str(out / "corpus")]
    if base is not None:
        args += ["--base", str(base)]
    # The head is its own repository (here it lies inside fuzzgate's checkout, whose git top level
    # would be taken for the repository's root and every path under it, the interpreter too, mapped).
    run = run_fuzzgate(args, out, cwd=head, env={"GITHUB_WORKSPACE": str(head)}, timeout_s=budget * 3 + 120)
    report = run.report or {}
    states: dict[str, str] = {}
    for finding in report.get("findings", []):
        states[f"{finding['name']}/{finding['kind']}"] = finding.get("baseline_state", "?")
    timing = report.get("timing", {})
    return {
        "base": base is not None,
        "exit_code": run.exit_code,
        "wall_s": round(run.wall_s, 2),
        "calls": report.get("calls", 0),
        "fuzzing_ended_s": timing.get("fuzzing"),
        "verification_ended_s": timing.get("verification"),
        "states": states,
        "notes": report.get("notes", []),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--budget", type=float, default=60.0)
    p.add_argument("--seeds", type=int, default=2)
    p.add_argument("--out", type=Path, default=RESULTS / "base_cost.json")
    ns = p.parse_args()
    result: dict[str, Any] = {"settings": {"budget_s": ns.budget}, "started": time.strftime("%F %T %z"), "pairs": []}
    for seed in range(1, ns.seeds + 1):
        pair = []
        order = (False, True) if seed % 2 else (True, False)
        for with_base in order:
            head, base = _checkouts(WORK / "base_cost" / f"{seed}-{'base' if with_base else 'plain'}")
            log(f"seed {seed}: {'with' if with_base else 'without'} --base, {ns.budget:g}s")
            pair.append(_one(head, head / "out", ns.budget, seed, base if with_base else None))
        plain = next(r for r in pair if not r["base"])
        based = next(r for r in pair if r["base"])
        result["pairs"].append(
            {
                "seed": seed,
                "plain": plain,
                "base": based,
                "calls_ratio": round(based["calls"] / plain["calls"], 3) if plain["calls"] else None,
                "wall_ratio": round(based["wall_s"] / plain["wall_s"], 3) if plain["wall_s"] else None,
            }
        )
        save_json(ns.out, result)
    ratios = [pair["calls_ratio"] for pair in result["pairs"] if pair["calls_ratio"] is not None]
    result["calls_ratio_median"] = statistics.median(ratios) if ratios else None
    result["finished"] = time.strftime("%F %T %z")
    save_json(ns.out, result)
    log(f"calls with --base / without: {result['calls_ratio_median']}; wrote {ns.out}")


if __name__ == "__main__":
    main()
