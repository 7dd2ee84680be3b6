"""The Node coverage collector: what it costs, what it finds, what it reaches on real npm servers.

    python bench/node_coverage.py [--parts cost,bugs,rate,real] [--budget 60] [--seeds 1,2]
                                  [--seconds 10] [--rounds 3] [--rate-budget 30] [--out FILE]

- `cost`: the planted-bug server (tests/servers/node_nested, on the official TypeScript SDK from
  tests/.tools) called one call at a time for `--seconds` through fuzzgate's own connection, a
  fresh server each time, in three modes: `behaviour` (no collector: the baseline), `preload`
  (the collector measuring, never asked) and `collect` (`collect()` after every call, what a run
  pays). Rounds are interleaved, the order rotated each round; printed are the median rates and
  their ratio to `behaviour`.
- `bugs`: `fuzzgate run --budget B` on the planted server with coverage feedback and with
  behaviour feedback, per seed: which of NB-1..NB-4 each found (by tool and kind), any finding
  on the clean look-alikes (a false positive), and the whole run's call rate under each.
- `rate`: a whole `fuzzgate run` (generation, checks, corpus and all) on the planted server's clean
  look-alikes only, with coverage feedback and with behaviour feedback, `--rounds` interleaved
  rounds of `--rate-budget` seconds: the call rates and their ratio (the bug runs above hit their
  bugs again and again, whose restarts and timeouts would be counted as the collector's cost).
- `real`: the npm reference servers bench/run_all installs under bench/.work (server-everything,
  server-filesystem), each a cold run (no corpus) and a warm one (from a copy of what the cold one
  kept): the coverage reached (lines, blocks, constants), the corpus loaded and replayed, and
  every finding with its message, to be read.

Everything runs in fuzzgate's default sandbox. All of it goes to one JSON file, default
bench/.work/results/node_coverage.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from procs import REPO, RESULTS, WORK, log, save_json

from fuzzgate.config.model import Config, FeedbackMode, SandboxMode, TargetConfig, TargetKind
from fuzzgate.config.views import ServerSettings
from fuzzgate.model.outcome import OutcomeStatus
from fuzzgate.sandbox.containment import contain
from fuzzgate.target.call import call_tool
from fuzzgate.target.connection import open_connection

SERVER = REPO / "tests" / "servers" / "node_nested"
SDK_MODULES = REPO / "tests" / ".tools" / "node_modules"
REAL_MODULES = WORK / "node_modules"
PLANTED = {
    "NB-1": ("render_theme", "crash"),
    "NB-2": ("allocate_buffer", "hang"),
    "NB-3": ("run_batch", "crash"),
    "NB-4": ("export_report", "secret_leak"),
}
LOOK_ALIKES = ("render_preview", "allocate_pool", "export_summary")
MODES = ("behaviour", "preload", "collect")
CALL = ("render_preview", {"theme": "plain", "depth": 3})


def _project(where: Path) -> Path:
    project = where / "node_nested"
    shutil.copytree(SERVER, project)
    return project


async def _measure(config: Config, mode: str, seconds: float) -> dict[str, Any]:
    containment = contain(config.target, 1)
    assert containment is not None
    tool, arguments = CALL
    try:
        async with open_connection(ServerSettings.of(config), containment=containment) as connection:
            channel = connection.coverage
            if mode != "behaviour" and channel is None:
                raise SystemExit(f"the collector did not start: {connection.feedback_note}")
            for _ in range(20):  # warm-up, not counted
                await call_tool(connection, tool, arguments, 10)
            if channel is not None:
                await channel.collect(5)
            calls = 0
            collect_s = 0.0
            start = time.perf_counter()
            while time.perf_counter() < start + seconds:
                outcome = await call_tool(connection, tool, arguments, 10)
                if outcome.status is not OutcomeStatus.OK:
                    raise SystemExit(f"{tool} failed: {outcome}")
                if mode == "collect" and channel is not None:
                    asked = time.perf_counter()
                    if await channel.collect(5) is None:
                        raise SystemExit(f"collect failed: {channel.failure}")
                    collect_s += time.perf_counter() - asked
                calls += 1
            elapsed = time.perf_counter() - start
            note = connection.feedback_note
    finally:
        containment.close()
    collect_ms = 1000 * collect_s / calls if mode == "collect" else None
    rate = calls / elapsed
    return {"mode": mode, "calls": calls, "seconds": elapsed, "rate": rate, "collect_ms": collect_ms, "note": note}


def cost(seconds: float, rounds: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="node-cost-"))
    project = _project(work)

    def config(mode: str) -> Config:
        target = TargetConfig(
            kind=TargetKind.STDIO,
            command="node",
            args=("server.js",),
            cwd=project,
            env={"NODE_PATH": str(SDK_MODULES)},
            sandbox=SandboxMode.AUTO,
            feedback=FeedbackMode.BEHAVIOUR if mode == "behaviour" else FeedbackMode.AUTO,
        )
        return Config(target=target)

    measurements: list[dict[str, Any]] = []
    for round_ in range(rounds):
        for mode in MODES[round_ % 3 :] + MODES[: round_ % 3]:
            result = anyio.run(_measure, config(mode), mode, seconds)
            result["round"] = round_
            measurements.append(result)
            extra = f", collect {result['collect_ms']:.3f} ms/call" if result["collect_ms"] is not None else ""
            log(f"cost round {round_} {mode:9} {result['rate']:7.1f} calls/s ({result['calls']} calls){extra}")
    shutil.rmtree(work, ignore_errors=True)
    medians = {mode: statistics.median(m["rate"] for m in measurements if m["mode"] == mode) for mode in MODES}
    summary = {mode: {"rate": medians[mode], "ratio": medians[mode] / medians["behaviour"]} for mode in MODES}
    for mode in MODES:
        log(f"cost {mode:9} median {medians[mode]:7.1f} calls/s, ratio {summary[mode]['ratio']:.3f}")
    return {"seconds": seconds, "rounds": rounds, "measurements": measurements, "summary": summary}


def _fuzzgate(args: list[str], cwd: Path, out: Path, timeout_s: float) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FUZZGATE_", "GITHUB_"))}
    command = [sys.executable, "-m", "fuzzgate", "run", *args, "--out", str(out)]
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout_s, check=False)
    report_file = out / "report.json"
    if not report_file.exists():
        raise RuntimeError(f"no report (exit {done.returncode}):\n{(done.stdout + done.stderr)[-2000:]}")
    report: dict[str, Any] = json.loads(report_file.read_text())
    report["_exit"] = done.returncode
    return report


def _findings(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "tool": f["name"],
            "kind": f["kind"],
            "severity": f["severity"],
            "flaky": f["flaky"],
            "message": f["message"],
            "arguments": f["repro"].get("arguments"),
            "prefix": f["repro"].get("prefix") or [],
        }
        for f in report["findings"]
    ]


def bugs(budget: float, seeds: list[str]) -> list[dict[str, Any]]:
    results = []
    for seed in seeds:
        for feedback in ("auto", "behaviour"):
            work = Path(tempfile.mkdtemp(prefix="node-bugs-"))
            project = _project(work)
            (project / "fuzzgate.toml").write_text(
                '[target]\ncommand = "node"\nargs = ["server.js"]\n'
                f"env = {{ NODE_PATH = {json.dumps(str(SDK_MODULES))} }}\n"
            )
            args = ["--budget", f"{budget:g}s", "--seed", seed, "--feedback", feedback]
            report = _fuzzgate(args, project, work / "out", budget * 4 + 300)
            found = {
                bug
                for bug, (tool, kind) in PLANTED.items()
                if any(f["name"] == tool and f["kind"] == kind for f in report["findings"])
            }
            false = [f for f in _findings(report) if f["tool"] in LOOK_ALIKES]
            results.append(
                {
                    "seed": seed,
                    "feedback": feedback,
                    "found": sorted(found),
                    "false_positives": false,
                    "calls": report["calls"],
                    "duration_s": report["duration_s"],
                    "signal": report["feedback"],
                    "findings": _findings(report),
                }
            )
            log(f"bugs seed {seed} {feedback:9} found {sorted(found)} ({len(false)} false), {report['calls']} calls")
            shutil.rmtree(work, ignore_errors=True)
    return results


def run_rate(budget: float, rounds: int) -> dict[str, Any]:
    """A whole run's call rate with and without the collector, on the clean look-alikes only (a
    planted bug hit again and again costs restarts and timeouts that are no collector's doing),
    rounds interleaved, the order rotated."""
    work = Path(tempfile.mkdtemp(prefix="node-rate-"))
    project = _project(work)
    (project / "fuzzgate.toml").write_text(
        f'[target]\ncommand = "node"\nargs = ["server.js"]\nenv = {{ NODE_PATH = {json.dumps(str(SDK_MODULES))} }}\n'
    )
    include = [f"--include={tool}" for tool in LOOK_ALIKES]
    measured: list[dict[str, Any]] = []
    for round_ in range(rounds):
        for feedback in ("auto", "behaviour") if round_ % 2 == 0 else ("behaviour", "auto"):
            corpus = work / f"corpus-{round_}-{feedback}"  # every run starts cold
            args = ["--budget", f"{budget:g}s", "--seed", "1", "--feedback", feedback, "--corpus", str(corpus)]
            args += include
            report = _fuzzgate(args, project, work / f"out-{round_}-{feedback}", budget * 4 + 300)
            rate = report["calls"] / report["duration_s"]
            measured.append({"round": round_, "feedback": feedback, "calls": report["calls"], "rate": rate})
            log(f"run rate round {round_} {feedback:9} {rate:6.1f} calls/s ({report['calls']} calls)")
    shutil.rmtree(work, ignore_errors=True)
    medians = {f: statistics.median(m["rate"] for m in measured if m["feedback"] == f) for f in ("auto", "behaviour")}
    ratio = medians["auto"] / medians["behaviour"]
    log(f"run rate: coverage {medians['auto']:.1f} calls/s, behaviour {medians['behaviour']:.1f}, ratio {ratio:.3f}")
    return {"budget_s": budget, "measurements": measured, "medians": medians, "ratio": ratio}


def real(budget: float) -> list[dict[str, Any]]:
    scratch = WORK / "fs-scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    (scratch / "readme.txt").write_text("scratch directory for the filesystem server benchmark\n")
    packages = REAL_MODULES / "@modelcontextprotocol"
    servers = {
        "everything": [str(packages / "server-everything" / "dist" / "index.js"), "stdio"],
        "filesystem": [str(packages / "server-filesystem" / "dist" / "index.js"), str(scratch)],
    }
    results = []
    for name, argv in servers.items():
        if not Path(argv[0]).exists():
            log(f"real {name}: not installed under bench/.work (run bench/run_all)")
            continue
        work = WORK / "node_coverage" / name
        shutil.rmtree(work, ignore_errors=True)
        (work / "cwd").mkdir(parents=True)
        corpus = work / "corpus"
        base = ["--command", "node", *(f"--arg={a}" for a in argv), "--budget", f"{budget:g}s", "--seed", "1"]
        runs: dict[str, Any] = {}
        for start in ("cold", "warm"):
            if start == "warm":
                shutil.copytree(corpus, work / "corpus-warm")
            where = corpus if start == "cold" else work / "corpus-warm"
            args = [*base, "--feedback", "auto", "--corpus", str(where)]
            report = _fuzzgate(args, work / "cwd", work / f"out-{start}", budget * 4 + 300)
            runs[start] = {
                "signal": report["feedback"],
                "corpus": report.get("corpus"),
                "calls": report["calls"],
                "duration_s": report["duration_s"],
                "findings": _findings(report),
            }
            fb = report["feedback"]
            log(f"real {name} {start}: {fb['note']}; {fb['lines']} lines, {fb['arcs']} blocks, {report['calls']} calls")
            for finding in runs[start]["findings"]:
                log(f"    {finding['kind']} in {finding['tool']}: {finding['message'][:160]}")
        results.append({"server": name, "command": " ".join(["node", *argv]), "runs": runs})
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", default="cost,bugs,rate,real")
    parser.add_argument("--rate-budget", type=float, default=30.0)
    parser.add_argument("--budget", type=float, default=60.0)
    parser.add_argument("--seeds", default="1,2")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS / "node_coverage.json")
    ns = parser.parse_args()
    parts = set(ns.parts.split(","))
    load = os.getloadavg()
    log(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    result: dict[str, Any] = {"load_before": load}
    if "cost" in parts:
        result["cost"] = cost(ns.seconds, ns.rounds)
    if "bugs" in parts:
        result["bugs"] = bugs(ns.budget, ns.seeds.split(","))
        # A whole run's call rate (generation, checks, corpus included), with and without the collector.
        runs = result["bugs"]
        rates = {
            feedback: statistics.median(r["calls"] / r["duration_s"] for r in runs if r["feedback"] == feedback)
            for feedback in ("auto", "behaviour")
        }
        ratio = rates["auto"] / rates["behaviour"]
        result["run_rate"] = {**rates, "ratio": ratio}
        log(f"run rate: coverage {rates['auto']:.1f} calls/s, behaviour {rates['behaviour']:.1f}, ratio {ratio:.3f}")
    if "rate" in parts:
        result["rate"] = run_rate(ns.rate_budget, ns.rounds)
    if "real" in parts:
        result["real"] = real(ns.budget)
    result["load_after"] = os.getloadavg()
    save_json(ns.out, result)
    log(f"wrote {ns.out}")


if __name__ == "__main__":
    main()
