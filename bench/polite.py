"""The bugs that answer politely: fuzzgate (several seeds) and mcp-fuzzer on the notes, toolbox,
surrogate, inventory, boundary, slowtools and gated servers; found / missed / false positives per bug class.

    python bench/polite.py [--quick] [--budget 60] [--seeds 3] [--fuzzers fuzzgate,mcp-fuzzer] [--out FILE]
    python bench/polite.py --merge BUGS.json[=WORKDIR] ... [--out FILE]
    python bench/polite.py --markdown [FILE]

Every run is bugs.py's (`run_fuzzgate_on`, `run_mcp_fuzzer_on`: the same command lines, scoring
and ground truth; mcp-fuzzer inside netjail.sh, fuzzgate with its own sandbox), in its own
directory under bench/.work/polite/. fuzzgate runs once per seed (bugs.py's default seed first,
then the stability seeds), mcp-fuzzer once (its iterations already take seeds 1, 2, ...). Each run
records its wall time and the 1-minute load average before and after it: the machine is shared.

`--merge` assembles the same result file from `bench/bugs.py --servers notes,toolbox,surrogate,inventory,boundary`
outputs made separately (one per fuzzgate seed, one for mcp-fuzzer), for runs split over time.
`section(data)` renders the Markdown for docs/benchmarks.md (bench/report.py calls it); `--markdown`
prints it. Default result file: bench/.work/results/polite.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from servers.catalog import BUGS, CLEAN_TOOLS, ROOTED_SERVERS

BENCH = Path(__file__).resolve().parent
RESULT = BENCH / ".work" / "results" / "polite.json"
SEEDS = (
    "3f1c9a7e5b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a",
    "a94b1e0c7d3f52e8b6c4d2a0f8e6c4b2a0d8f6e4",
    "07d2e5f8a1b4c7d0e3f6a9b2c5d8e1f4a7b0c3d6",
)
"""bugs.py's default seed, then the next two of stability.py's."""
FAMILY = {
    "notes": "scope",
    "toolbox": "injection",
    "surrogate": "unanswered request",
    "inventory": "stateful crash",
    "boundary": "scope boundary",
    "slowtools": "option probe on a slow many-tool server",
    "gated": "behind an accepted value",
}
ADVISORY = ("accepted_malformed", "injection_reflection")


def _git_head() -> str:
    out = subprocess.run(["git", "-C", str(BENCH.parent), "rev-parse", "--short", "HEAD"], capture_output=True,
                         text=True, check=False)  # fmt: skip
    return out.stdout.strip() or "?"


def measure(budget: float, seeds: int, fuzzers: list[str], out: Path) -> dict[str, Any]:
    from bugs import MCP_FUZZER, fresh_dir, mcp_fuzzer_version, run_fuzzgate_on, run_mcp_fuzzer_on
    from procs import WORK, log, save_json

    result: dict[str, Any] = {
        "settings": {"budget_s": budget, "seeds": list(SEEDS[:seeds]), "servers": list(ROOTED_SERVERS),
                     "fuzzgate_venv": os.environ.get("BENCH_FUZZGATE_VENV", "")},
        "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "git": _git_head(),
        "mcp_fuzzer_version": mcp_fuzzer_version(),
        "runs": [],
        "errors": [],
    }  # fmt: skip
    if "mcp-fuzzer" in fuzzers and not MCP_FUZZER.exists():
        result["errors"].append(f"mcp-fuzzer is not installed at {MCP_FUZZER}: run bench/run_all, which installs it")
        fuzzers = [f for f in fuzzers if f != "mcp-fuzzer"]
    plan = [("fuzzgate", seed) for seed in SEEDS[:seeds] if "fuzzgate" in fuzzers]
    plan += [("mcp-fuzzer", "")] if "mcp-fuzzer" in fuzzers else []
    for fuzzer, seed in plan:
        for server in ROOTED_SERVERS:
            label = f"fuzzgate-{seed[:10]}" if seed else fuzzer
            work = fresh_dir(WORK / "polite" / label / server)
            log(f"{label} on {server} for {budget:g}s")
            before = os.getloadavg()[0]
            try:
                if seed:
                    run = run_fuzzgate_on(server, budget, seed, work)
                else:
                    run = run_mcp_fuzzer_on(server, budget, 1, work)
            except Exception as exc:  # one broken run must not lose the others
                result["errors"].append(f"{label} on {server}: {exc}")
                log(f"  failed: {exc}")
                continue
            run.update(seed=seed, load_before=round(before, 2), load_after=round(os.getloadavg()[0], 2))
            result["runs"].append(run)
            save_json(out, result)
    result["finished"] = time.strftime("%Y-%m-%d %H:%M:%S %z")
    save_json(out, result)
    return result


def _with_facts(run: dict[str, Any], work: Path | None) -> dict[str, Any]:
    """A bugs.py run whose findings lack the facts `bugs.finding_facts` keeps (an output written before
    it did), completed from the run directory's report.json when there is one."""
    report = (work / run["server"] / "fuzzgate" / "out" / "report.json") if work else None
    if run["fuzzer"] != "fuzzgate" or report is None or not report.exists():
        return run
    from bugs import finding_facts

    data = json.loads(report.read_text())
    return {**run, "containment": data.get("containment"), "findings": [finding_facts(f) for f in data["findings"]]}


def merge(files: list[str]) -> dict[str, Any]:
    """One polite result from bugs.py outputs (`FILE` or `FILE=WORKDIR`, WORKDIR its `--work`); a file's
    fuzzgate runs take its settings' seed."""
    result: dict[str, Any] = {"settings": {"seeds": [], "servers": list(ROOTED_SERVERS)}, "runs": [], "errors": [],
                              "merged_from": [str(f) for f in files]}  # fmt: skip
    for spec in files:
        name, _, work = spec.partition("=")
        path = Path(name)
        data = json.loads(path.read_text())
        settings = data["settings"]
        result["settings"].setdefault("budget_s", settings["budget_s"])
        result.setdefault("started", data.get("started"))
        result["finished"] = data.get("finished")
        if data.get("mcp_fuzzer_version") and any(r["fuzzer"] == "mcp-fuzzer" for r in data["runs"]):
            result["mcp_fuzzer_version"] = data["mcp_fuzzer_version"]
        result["errors"] += data.get("errors", [])
        for run in data["runs"]:
            if run["server"] not in ROOTED_SERVERS:
                continue
            seed = settings["seed"] if run["fuzzer"] == "fuzzgate" else ""
            if seed and seed not in result["settings"]["seeds"]:
                result["settings"]["seeds"].append(seed)
            result["runs"].append({**_with_facts(run, Path(work) if work else None), "seed": seed})
    return result


# ------------------------------------------------------------------------------- the section


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    return out + ["| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in row) + " |" for row in rows]


def _fps(run: dict[str, Any]) -> list[dict[str, Any]]:
    return [*run["score"]["wrong_kind"], *run["score"]["unmapped"]]


def _cell(run: dict[str, Any] | None, bug: str) -> str:
    if run is None:
        return "not run"
    score = run["score"]
    if bug in score["reported"]:
        return f"**found** ({score['reported'][bug]:.1f} s)"
    if bug in score["triggered"]:
        return f"missed (triggered at {score['triggered'][bug]:.1f} s)"
    return "missed (never triggered)"


def section(data: dict[str, Any] | None) -> list[str]:
    """The Markdown section for docs/benchmarks.md."""
    if not data:
        return []
    seeds: list[str] = data["settings"]["seeds"]
    budget = data["settings"]["budget_s"]
    runs = data["runs"]

    def run_of(server: str, seed: str) -> dict[str, Any] | None:
        return next((r for r in runs if r["server"] == server and r.get("seed", "") == seed), None)

    columns = [(f"fuzzgate, seed {s[:7]}", s) for s in seeds] + [("mcp-fuzzer", "")]
    bugs = [b for b in BUGS if b.server in ROOTED_SERVERS]
    out = [
        "## 6. The bugs that answer politely: scope escapes, injections, unanswered requests, stateful crashes",
        "",
        f"Servers: {', '.join(f'`{s}`' for s in ROOTED_SERVERS)} in [bench/servers/](../bench/servers/BUGS.md), "
        f"{len(bugs)} planted bugs, one per class, and clean look-alikes. Budget **{budget:g} s per server per "
        f"run**; fuzzgate with {len(seeds)} seed(s) (its defaults otherwise; it sandboxes each server itself), "
        f"{data.get('mcp_fuzzer_version', 'mcp-fuzzer')} once (`--security-audit`, in iterations as in §2, "
        "inside `netjail.sh --rw WORKDIR`). Scored by `bench/scoring.py` against the servers' own ground "
        "truth, as in §2.",
        "",
    ]
    if data.get("errors"):
        out += ["Errors: " + "; ".join(f"`{e[:300]}`" for e in data["errors"]), ""]
    out += ["### Found / missed per class", "",
            "**found** = reported as that bug (seconds to its first ground-truth trigger); *missed* = triggered "
            "but not reported, or never triggered.", ""]  # fmt: skip
    class_rows = [[b.bug_class, b.id, *(_cell(run_of(b.server, s), b.id) for _, s in columns)] for b in bugs]
    out += _table(["class", "bug", *(c for c, _ in columns)], class_rows)
    out += ["", "### False positives per class", "",
            "A false positive is any report that maps to no triggered planted bug of its tool (a clean "
            "look-alike, a protocol method, another kind); reports of the SDK's own lone-surrogate drop "
            "(SDK-DROP, a real bug nobody planted) are counted apart. mcp-fuzzer's in parentheses: without its "
            "advisory categories (`accepted_malformed`, `injection_reflection`).", ""]  # fmt: skip
    rows: list[list[Any]] = []
    for server in ROOTED_SERVERS:
        looks = ", ".join(f"`{t}`" for t in CLEAN_TOOLS.get(server, ())) or "-"
        cells = []
        for _, seed in columns:
            run = run_of(server, seed)
            if run is None:
                cells.append("not run")
                continue
            fps = _fps(run)
            core = sum(1 for x in fps if x["kind"] not in ADVISORY)
            known = f"; SDK-DROP {len(run['score']['known'])}" if run["score"]["known"] else ""
            cells.append(f"{len(fps)}" + (f" ({core})" if not seed else "") + known)
        rows.append([FAMILY[server], f"`{server}`", looks, *cells])
    out += _table(["class", "server", "clean look-alikes", *(c for c, _ in columns)], rows)
    out += ["", "### Totals and time", ""]
    totals: list[list[Any]] = []
    for label, seed in columns:
        mine = [r for r in runs if r.get("seed", "") == seed]
        if not mine:
            continue
        found = sum(len(r["score"]["reported"]) for r in mine)
        missed = sum(len([b for b in bugs if b.server == r["server"] and b.id not in r["score"]["reported"]])
                     for r in mine)  # fmt: skip
        fps = [x for r in mine for x in _fps(r)]
        core = sum(1 for x in fps if x["kind"] not in ADVISORY)
        totals.append([
            label, f"**{found}** of {len(bugs)}", missed, f"{len(fps)}" + (f" ({core})" if not seed else ""),
            sum(sum(r["score"]["destructive_calls"].values()) for r in mine), f"{sum(r['calls'] for r in mine):,}",
            " / ".join(f"{r['wall_s']:.0f}" for r in mine), f"{sum(r['wall_s'] for r in mine):.0f}",
            " / ".join(f"{r.get('load_before', '-')}" for r in mine),
        ])  # fmt: skip
    out += _table(["run", "found", "missed", "false positives", "destructive calls", "calls",
                   "wall s per server (" + ", ".join(ROOTED_SERVERS) + ")", "wall s, all", "load avg at start"],
                  totals)  # fmt: skip
    out += ["", "<details><summary>every fuzzgate finding, and how it was scored</summary>", ""]
    found_rows: list[list[Any]] = []
    for r in runs:
        if r["fuzzer"] != "fuzzgate":
            continue
        verdict = {x["label"]: x["bug"] for x in r["score"]["true_reports"]}
        verdict |= {x["label"]: f"{x['bug']} (known, not planted)" for x in r["score"]["known"]}
        verdict |= {x["label"]: "**false positive**" for x in _fps(r)}
        for f in r["findings"]:
            state = "flaky" if f["flaky"] else "unconfirmed" if f.get("unconfirmed") else "confirmed"
            replays = f"{f['reproduced']}/{f['replays']}" if f.get("replays") is not None else "?"
            steps = f.get("prefix_steps")
            found_rows.append([r["seed"][:7], r["server"], f["kind"], f["name"], f"{state}, {replays}",
                         "-" if steps is None else steps + 1, verdict.get(f["fingerprint"], "?"),
                         f["message"][:170]])  # fmt: skip
    header = ["seed", "server", "kind", "tool", "state, replays", "repro calls", "scored as", "message"]
    out += _table(header, found_rows)
    out += ["", "</details>", ""]
    mf = [r for r in runs if r["fuzzer"] == "mcp-fuzzer"]
    if mf:
        counts: dict[str, int] = {}
        for x in (x for r in mf for x in _fps(r)):
            counts[x["kind"]] = counts.get(x["kind"], 0) + 1
        out += ["mcp-fuzzer's false positives by category: "
                + (", ".join(f"`{k}` {v}" for k, v in sorted(counts.items())) or "none") + ".", ""]  # fmt: skip
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--quick", action="store_true", help="5 s per run, one fuzzgate seed")
    p.add_argument("--budget", type=float, default=60.0, help="seconds per server per run")
    p.add_argument("--seeds", type=int, default=3, choices=range(1, len(SEEDS) + 1))
    p.add_argument("--fuzzers", default="fuzzgate,mcp-fuzzer")
    p.add_argument("--merge", nargs="+", metavar="FILE[=WORKDIR]", help="bugs.py results to assemble instead")
    p.add_argument("--markdown", type=Path, nargs="?", const=RESULT, help="print the section of a result file")
    p.add_argument("--out", type=Path, default=RESULT)
    ns = p.parse_args()
    if ns.markdown:
        print("\n".join(section(json.loads(ns.markdown.read_text()))))
        return
    if ns.merge:
        from procs import save_json

        save_json(ns.out, merge(ns.merge))
        print(f"wrote {ns.out}", file=sys.stderr)
        return
    if ns.quick:
        ns.budget, ns.seeds = 5.0, 1
    measure(ns.budget, ns.seeds, ns.fuzzers.split(","), ns.out)


if __name__ == "__main__":
    main()
