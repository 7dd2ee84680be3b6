"""Issue 11 measured: feedback off, behaviour only and coverage (`auto`), against mcp-fuzzer, on the
nested-condition server and real Python servers; the collector's cost; a warm start from a corpus.

    python bench/corpus.py [--quick] [--seeds N] [--budget S] [--real-seeds N] [--real-budget S]
                           [--targets nested,nested_clean,time,git] [--modes off,behaviour,auto,mcp-fuzzer]
                           [--step S] [--no-warm] [--no-cost] [--out FILE]
    python bench/corpus.py --markdown [--out FILE]      # the tables again, from a results file
    python bench/corpus.py --replay-again --targets time,git   # re-measure kept runs from their traces

Every run has the same budget per target and one seed each (fuzzgate: `--seed 1`, `2`, ...;
mcp-fuzzer: its `--seed`); results go to bench/.work/results/corpus.json (runs under
bench/.work/corpus/), and a Markdown summary is printed.

- **Targets.** `nested` (bench/servers/nested.py, NST-1 .. NST-6) and its clean twin `nested_clean`,
  with their ground truth (`bench/ground_truth.py`), scored by `bench/scoring.py` as in bugs.py;
  `time` and `git` (mcp-server-time, mcp-server-git from bench/.work/venv-bench, git on
  realworld.py's scratch repository), where the whole `fuzzgate run` goes inside
  ../shared/tools/netjail.sh `--rw WORK` as in realworld.py (fuzzgate's own sandbox inside it).
  `nested_clean` is run in `auto` only (its one question: does coverage feedback bring false
  positives).
- **Modes.** `fuzzgate run --feedback off|behaviour|auto --corpus WORK/corpus` (an empty corpus: a
  cold start) with `--trace`; and mcp-fuzzer where bench/bugs.py runs it (the planted servers only:
  `nested`), in bugs.py's iterations, its server under covserve.py.
- **Coverage, measured apart from any run's guidance.** Each fuzzgate run's `--trace` is replayed
  afterwards, call by call in order, against the same server under coverage.py (covreplay.py,
  covserve.py; real servers inside netjail, in a fresh copy of their scope laid out as fuzzgate's
  layer was, with the trace's layer paths rewritten to it), following the run's server restarts;
  coverage is read after the call the run had reached at each `--step` seconds (the trace's
  `elapsed_s`, or the CLI's progress lines for an older fuzzgate). So `off`, `behaviour` and `auto`
  are measured by the same instrument, one that never guided any of them, and over time within one
  run (not by several runs of growing budgets, which would cost three times the machine time).
  Fidelity: each call's outcome (ok, tool error, ...) in the replay against the run's is in the
  results (`coverage.agreement`); a 25 s run on nested measured directly under covserve.py and by
  its replay gave the same 152 arcs, one on git 592 and 589 (the 3: the server's own shutdown).
  Measured code: the server's directory (bench/servers, less its ground-truth plumbing) or its
  package. mcp-fuzzer's servers run under covserve.py directly (mcp-fuzzer has no per-call trace),
  their data files read every step while it runs. Counts are coverage.py arcs (line pairs, entry
  and exit included) and lines; fuzzgate's own figures for `auto` (report.json `feedback`, counted
  by its collector, bench/servers/_truth.py included) are kept beside them.
- **Behaviours**, the same way for every mode: distinct (tool, outcome class, JSON-RPC code, reply
  text with numbers, quoted values, hex ids and paths blurred) in the trace up to each step; and
  report.json's `feedback.behaviours` where the run has one.
- **Warm start.** For each target, the first `auto` run's corpus is copied and a second run (seed
  101) starts from it; the time for it to reach the first run's final coverage (arcs, by the
  replay) against the time the first run took to reach it, both from the first call's end (start-up
  takes the same either way). Aim: a fifth. Also the arcs right after the warm run replayed its
  seeds: what the corpus itself brings back (a finding's input is not a corpus entry, so the arcs
  only a crash or a hang reached come back only when it is found again).
- **The collector's cost**: bench/collector_cost.py (the collector helper's) run as it is; its
  ratio of call rates with and without the collector. Aim: at most 30%.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bugs import TRUTH_FILE, TRUTH_SOCKET, finding_facts, fresh_dir, run_mcp_fuzzer_on, scope_dir, server_command
from corpus_tables import MODES, markdown
from covreplay import CoverageReader, count
from ground_truth import collector
from procs import BENCH, NETJAIL, PYTHON, RESULTS, SERVERS, WORK, FuzzgateRun, log, run_fuzzgate, save_json
from realworld import GIT_SCRATCH, reset_git_scratch
from scoring import fuzzgate_reports, read_ground_truth, score

BENCH_VENV = WORK / "venv-bench"
RUNS = WORK / "corpus"
WARM_SEED = "101"
"""The warm run's seed: not one of the cold runs' (a later pull request draws other values)."""
MCP_FUZZER_AUTOSAVE_S = 0.5
"""mcp-fuzzer ends its servers with SIGKILL: covserve.py saves this often, so at most this much of a
server's life is lost."""
_RESTART = re.compile(r"restarted the server \((.+?) case (\d+): ")


@dataclass(frozen=True, slots=True)
class Target:
    name: str
    planted: bool
    """A bench server with ground truth (else a real server, run inside netjail)."""
    command: tuple[str, ...] = ()
    """A real server's command line (planted ones: bugs.server_command)."""
    python: str = PYTHON
    script: str = ""
    """What covserve.py runs: the script or console script (its arguments follow it in `command`)."""
    source: str = ""
    """What covserve.py measures (a directory or a package)."""
    scopes: tuple[Path, ...] = ()
    """Directories named in `command` (fuzzgate makes them part of the server's scope)."""


def targets() -> dict[str, Target]:
    bench_python = str(BENCH_VENV / "bin" / "python")
    time_server = str(BENCH_VENV / "bin" / "mcp-server-time")
    git_server = str(BENCH_VENV / "bin" / "mcp-server-git")
    return {
        "nested": Target("nested", True, script=str(SERVERS / "nested.py"), source=str(SERVERS)),
        "nested_clean": Target("nested_clean", True, script=str(SERVERS / "nested_clean.py"), source=str(SERVERS)),
        "time": Target("time", False, (time_server,), bench_python, time_server, "mcp_server_time"),
        "git": Target(
            "git",
            False,
            (git_server, "--repository", str(GIT_SCRATCH)),
            bench_python,
            git_server,
            "mcp_server_git",
            (GIT_SCRATCH,),
        ),
    }


def covserve(target: Target, data: str, control: str | None = None, autosave: float | None = None) -> list[str]:
    """The interpreter part of a command line that runs `target`'s server under covserve.py."""
    command = [target.python, str(BENCH / "covserve.py"), "--data", data, "--source", target.source]
    command += ["--control", control] if control else []
    return command + (["--autosave", f"{autosave:g}"] if autosave else [])


# ------------------------------------------------------------------------------- one run


def _target_args(command: list[str]) -> list[str]:
    return ["--command", command[0], *(f"--arg={a}" for a in command[1:])]


def fuzzgate_run(target: Target, mode: str, seed: str, budget: float, work: Path, corpus: Path) -> dict[str, Any]:
    """One `fuzzgate run --feedback MODE --corpus CORPUS` on `target`, its trace kept in WORK."""
    args = ["--budget", f"{budget:g}s", "--seed", seed, "--baseline", str(work / "baseline"), "--feedback", mode]
    args += ["--corpus", str(corpus), "--trace", str(work / "trace.jsonl")]
    timeout = budget * 4 + 600
    truth_score: dict[str, Any] | None = None
    started = time.time()
    if target.planted:
        truth = work / TRUTH_FILE
        with collector(work / TRUTH_SOCKET, truth) as socket_path:
            command = server_command(target.name, socket_path, scope_dir(work))
            started = time.time()
            run = run_fuzzgate([*_target_args(command), *args], work / "out", cwd=work / "root", timeout_s=timeout)
        if run.report is not None:
            reports = fuzzgate_reports(run.report)
            truth_score = score(target.name, "fuzzgate", reports, read_ground_truth(truth), started).to_json()
    else:
        if target.name == "git":
            reset_git_scratch()
        for sub in ("cwd", "layers"):
            (work / sub).mkdir(exist_ok=True)
        run = run_fuzzgate(
            [*_target_args(list(target.command)), *args, "--sandbox", "required"],
            work / "out",
            cwd=work / "cwd",
            env={"FUZZGATE_WORKDIR": str(work / "layers")},
            timeout_s=timeout,
            wrapper=[str(NETJAIL), "--rw", str(work), "--"],
        )
    (work / "console.txt").write_text(run.output)
    if run.report is None:
        raise RuntimeError(f"fuzzgate wrote no report (exit {run.exit_code}):\n{run.output[-3000:]}")
    report = run.report
    return {
        "target": target.name,
        "fuzzer": "fuzzgate",
        "mode": mode,
        "seed": seed,
        "budget_s": budget,
        "work": str(work),
        "wall_s": round(run.wall_s, 1),
        "calls": report["calls"],
        "duration_s": report["duration_s"],
        "timing": report.get("timing"),
        "exit_code": run.exit_code,
        "feedback": report.get("feedback"),
        "corpus": report.get("corpus"),
        "progress": _progress(run, report),
        "restarts": [f"{m.group(1)}#{m.group(2)}" for m in _RESTART.finditer(run.output)],
        "findings": [finding_facts(f) for f in report["findings"]],
        "score": truth_score,
    }


def _progress(run: FuzzgateRun, report: dict[str, Any]) -> list[tuple[float, int]]:
    """(seconds since the CLI started, calls so far): the progress lines, and the end of fuzzing."""
    points = [(0.0, 0), *run.progress]
    end = (report.get("timing") or {}).get("fuzzing")
    if end is not None:
        points.append((float(end), int(report["calls"])))
    return sorted(points)


def mcp_fuzzer_run(target: Target, seed: int, budget: float, work: Path, step: float) -> dict[str, Any]:
    """bugs.py's mcp-fuzzer iterations on a planted server, the server under covserve.py; its data
    files are read every `step` seconds while it runs (mcp-fuzzer has no per-call trace to replay)."""
    (work / "cov").mkdir(parents=True, exist_ok=True)
    interpreter = covserve(target, str(work / "cov" / "m.cov"), autosave=MCP_FUZZER_AUTOSAVE_S)
    points: list[dict[str, Any]] = []
    stop = threading.Event()
    started = time.monotonic()

    def sample() -> None:
        reader = CoverageReader(work / "cov")
        while not stop.wait(step - (time.monotonic() - started) % step):
            lines, arcs = reader.read()
            points.append({"t": round(time.monotonic() - started, 1), "lines": len(lines), "arcs": len(arcs)})

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        run = run_mcp_fuzzer_on(target.name, budget, seed, work, interpreter)
    finally:
        stop.set()
        sampler.join()
    return {**run, "target": target.name, "mode": "mcp-fuzzer", "seed": str(seed), "work": str(work),
            "coverage": {"points": points, "final": count(work / "cov")}}  # fmt: skip


def _steps(budget: float, step: float) -> list[float]:
    return [round(step * k, 3) for k in range(1, int(budget / step) + 1)]


# ------------------------------------------------------------------------------- measuring a run


def trace_records(trace: Path) -> list[dict[str, Any]]:
    if not trace.exists():
        return []
    records = []
    for line in trace.read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            continue  # a line cut short
    return records


def calls_at(progress: list[tuple[float, int]], records: list[dict[str, Any]], t: float) -> int:
    """How many calls the run had finished `t` seconds after its CLI started."""
    if records and "elapsed_s" in records[-1]:
        return sum(1 for r in records if float(r.get("elapsed_s", 0.0)) <= t)
    for (t0, c0), (t1, c1) in itertools.pairwise(progress):
        if t0 <= t <= t1:
            return int(c0 + (c1 - c0) * ((t - t0) / (t1 - t0) if t1 > t0 else 1.0))
    return progress[-1][1] if progress else 0


_BLUR = [
    (re.compile(r"'[^']*'|\"[^\"]*\""), "'…'"),
    (re.compile(r"(?:/[\w.@%+~-]+)+/?"), "/…"),
    (re.compile(r"\b[0-9a-f]{7,}\b|\b[0-9a-f-]{36}\b", re.IGNORECASE), "H"),
    (re.compile(r"-?\d+(?:\.\d+)?"), "N"),
]


def behaviour_key(record: dict[str, Any]) -> tuple[str, str, str, str]:
    text = str(record.get("text") or "")
    for pattern, repl in _BLUR:
        text = pattern.sub(repl, text)
    return str(record.get("tool")), str(record.get("status")), str(record.get("rpc_code")), " ".join(text.split())[:200]


def behaviours_at(records: list[dict[str, Any]], at: list[int]) -> list[int]:
    seen: set[tuple[str, str, str, str]] = set()
    counts: list[int] = []
    marks = sorted(at)
    for index, record in enumerate(records):
        while marks and marks[0] <= index:
            marks.pop(0)
            counts.append(len(seen))
        seen.add(behaviour_key(record))
    counts += [len(seen)] * len(marks)
    return counts


def replay_coverage(target: Target, run: dict[str, Any], step: float) -> dict[str, Any]:
    """The run's trace replayed under coverage.py (covreplay.py): arcs and lines at each step."""
    work = Path(run["work"])
    records = trace_records(work / "trace.jsonl")
    times = _steps(run["budget_s"], step)
    progress = [(float(t), int(n)) for t, n in run["progress"]]
    at = [calls_at(progress, records, t) for t in times]
    data = fresh_dir(work / "cov")
    argv = [PYTHON, str(BENCH / "covreplay.py"), "--trace", str(work / "trace.jsonl"), "--data-dir", str(data)]
    argv += ["--out", str(work / "replay.json"), *(f"--at={n}" for n in at)]
    argv += [f"--restart-after={r}" for r in run["restarts"]]
    wrapper: list[str] = []
    if target.planted:
        server = [*covserve(target, "{data}", "{control}"), target.script]
    else:
        # The server in a copy of its scope, laid out as fuzzgate's layer was (covreplay.py).
        layer = {str(p): "{scope:" + p.name + "}" for p in target.scopes}
        server = [*covserve(target, "{data}", "{control}"), *(layer.get(a, a) for a in target.command)]
        argv += ["--outside", str(fresh_dir(work / "layer")), "--cwd", "cwd"]
        argv += [f"--scope={p}" for p in (work / "cwd", *target.scopes)]
        wrapper = [str(NETJAIL), "--rw", str(work), "--"]
    cwd = work / "root" if target.planted else work / "cwd"
    proc = subprocess.run([*wrapper, *argv, "--", *server], cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0 or not (work / "replay.json").exists():
        raise RuntimeError(f"replay failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
    result: dict[str, Any] = json.loads((work / "replay.json").read_text())
    by_calls = {p["calls"]: p for p in result["points"]}
    behaviours = behaviours_at(records, at)
    result["points"] = [{"t": t, **by_calls[n], "behaviours": b} for t, n, b in zip(times, at, behaviours, strict=True)]
    result["final"]["behaviours"] = len({behaviour_key(r) for r in records})
    return result


def first_call_s(run: dict[str, Any]) -> float:
    """Seconds from the CLI's start to the end of the run's first call."""
    records = trace_records(Path(run["work"]) / "trace.jsonl")[:1]
    if records and "elapsed_s" in records[0]:
        return float(records[0]["elapsed_s"])
    return next((float(t) for t, n in run["progress"] if n >= 1), 0.0)


def time_to(points: list[dict[str, Any]], key: str, level: int) -> float | None:
    """The first step at which `key` reached `level`."""
    return next((p["t"] for p in points if p[key] >= level), None)


# ------------------------------------------------------------------------------- the measurement


def ensure_coverage(python: str) -> None:
    """coverage.py in bench/.work/venv-bench (bench/run_all makes it without), the version fuzzgate's has."""
    if subprocess.run([python, "-c", "import coverage"], capture_output=True, check=False).returncode == 0:
        return
    import coverage

    log(f"installing coverage=={coverage.__version__} into {Path(python).parent.parent}")
    subprocess.run([python, "-m", "pip", "install", "-q", f"coverage=={coverage.__version__}"], check=True)


def measure(ns: argparse.Namespace) -> dict[str, Any]:
    all_targets = targets()
    for name in ns.targets.split(","):
        if not all_targets[name].planted:
            ensure_coverage(all_targets[name].python)
    result: dict[str, Any] = {
        "settings": {k: v for k, v in vars(ns).items() if k not in ("out", "markdown")},
        "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "runs": [],
        "warm": [],
        "collector_cost": None,
        "errors": [],
    }
    modes = ns.modes.split(",")
    for name in ns.targets.split(","):
        target = all_targets[name]
        real = not target.planted
        budget, seeds = (ns.real_budget, ns.real_seeds) if real else (ns.budget, ns.seeds)
        for mode in modes if name != "nested_clean" else [m for m in modes if m == "auto"]:
            if mode == "mcp-fuzzer" and real:
                continue
            for k in range(1, (1 if name == "nested_clean" else seeds) + 1):
                work = fresh_dir(RUNS / name / f"{mode}-{k}")
                log(f"{name}: {mode}, seed {k}, {budget:g} s")
                try:
                    if mode == "mcp-fuzzer":
                        run = mcp_fuzzer_run(target, k, budget, work, ns.step)
                    else:
                        run = fuzzgate_run(target, mode, str(k), budget, work, work / "corpus")
                        run["coverage"] = replay_coverage(target, run, ns.step)
                except Exception as exc:  # one broken run must not lose the others
                    result["errors"].append(f"{name} {mode} seed {k}: {exc}")
                    log(f"  failed: {exc}")
                    continue
                result["runs"].append(run)
                log("  " + _one_line(run))
                save_json(ns.out, result)
        if not ns.no_warm and "auto" in modes and name != "nested_clean":
            try:
                result["warm"].append(warm_start(target, budget, ns.step, result["runs"]))
                log("  warm: " + json.dumps({k: v for k, v in result["warm"][-1].items() if k != "warm_run"}))
            except Exception as exc:
                result["errors"].append(f"{name} warm: {exc}")
                log(f"  warm failed: {exc}")
            save_json(ns.out, result)
    if not ns.no_cost:
        result["collector_cost"] = collector_cost(ns.quick)
    result["finished"] = time.strftime("%Y-%m-%d %H:%M:%S %z")
    save_json(ns.out, result)
    return result


def warm_start(target: Target, budget: float, step: float, runs: list[dict[str, Any]]) -> dict[str, Any]:
    cold = next(r for r in runs if r["target"] == target.name and r["mode"] == "auto")
    work = fresh_dir(RUNS / target.name / "auto-warm")
    shutil.copytree(Path(cold["work"]) / "corpus", work / "corpus")
    log(f"{target.name}: auto from the corpus of seed {cold['seed']}, {budget:g} s")
    warm = fuzzgate_run(target, "auto", WARM_SEED, budget, work, work / "corpus")
    warm["coverage"] = replay_coverage(target, warm, step)
    return warm_against_cold(cold, warm)


def warm_against_cold(cold: dict[str, Any], warm: dict[str, Any]) -> dict[str, Any]:
    """When each run reached the cold run's final arcs (by the replay)."""
    final = cold["coverage"]["final"]["arcs"]
    cold_t = time_to(cold["coverage"]["points"], "arcs", final)
    warm_t = time_to(warm["coverage"]["points"], "arcs", final)
    # Start-up and discovery take the same seconds warm or cold: the fuzzing is compared from the
    # first call's end on.
    cold_f = None if cold_t is None else round(cold_t - first_call_s(cold), 2)
    warm_f = None if warm_t is None else round(warm_t - first_call_s(warm), 2)
    # What the corpus itself brought back: the arcs at the first reading after the seeds' replay
    # (the run's first calls, origin `corpus:KEY`).
    records = trace_records(Path(warm["work"]) / "trace.jsonl")
    seeds = next((i for i, r in enumerate(records) if not str(r.get("origin")).startswith("corpus:")), len(records))
    after = next((p for p in warm["coverage"]["points"] if p["calls"] >= seeds), None)
    return {
        "target": cold["target"],
        "cold_final_arcs": final,
        "cold_time_s": cold_t,
        "warm_time_s": warm_t,
        "cold_fuzzing_s": cold_f,
        "warm_fuzzing_s": warm_f,
        "ratio": round(warm_f / cold_f, 3) if warm_f is not None and cold_f else None,
        "warm_final_arcs": warm["coverage"]["final"]["arcs"],
        "after_seeds_arcs": after["arcs"] if after else None,
        "after_seeds_s": round(after["t"] - first_call_s(warm), 2) if after else None,
        "warm_corpus": warm.get("corpus"),
        "warm_run": warm,
    }


def replay_again(result: dict[str, Any], step: float, names: list[str]) -> None:
    """Every kept fuzzgate run of `names` replayed again (after a change to the replay), in place."""
    all_targets = targets()
    for run in result["runs"]:
        if run["target"] in names and run["mode"] != "mcp-fuzzer":
            log(f"replaying {run['target']} {run['mode']} seed {run['seed']}")
            run["coverage"] = replay_coverage(all_targets[run["target"]], run, step)
            log("  " + _one_line(run))
    for i, warm in enumerate(result["warm"]):
        if warm["target"] in names:
            run = warm["warm_run"]
            log(f"replaying {run['target']} warm")
            run["coverage"] = replay_coverage(all_targets[run["target"]], run, step)
            cold = next(r for r in result["runs"] if r["target"] == run["target"] and r["mode"] == "auto")
            result["warm"][i] = warm_against_cold(cold, run)


def collector_cost(quick: bool) -> dict[str, Any] | None:
    out = RESULTS / "collector_cost-corpus.json"
    seconds, rounds = ("2", "1") if quick else ("5", "3")
    log(f"collector cost: bench/collector_cost.py --seconds {seconds} --rounds {rounds}")
    argv = [PYTHON, str(BENCH / "collector_cost.py"), "--seconds", seconds, "--rounds", rounds, "--out", str(out)]
    proc = subprocess.run(argv, cwd=BENCH.parent, capture_output=True, text=True, check=False)
    if proc.returncode != 0 or not out.exists():
        log(f"  failed: {proc.stderr[-1000:]}")
        return {"error": proc.stderr[-1000:]}
    data: dict[str, Any] = json.loads(out.read_text())
    return {"summary": data.get("summary"), "server": data.get("server"), "tool": data.get("tool")}


def _one_line(run: dict[str, Any]) -> str:
    cov = run.get("coverage") or {}
    final = cov.get("final") or {}
    text = f"{run.get('calls')} calls, {final.get('lines')} lines, {final.get('arcs')} arcs"
    if "behaviours" in final:
        text += f", {final['behaviours']} behaviours"
    if run.get("score"):
        text += f", bugs {sorted(run['score']['reported'])}, false positives {run['score']['false_positives']}"
    if run.get("feedback"):
        text += f", fuzzgate's own: {run['feedback']}"
    if cov.get("agreement"):
        text += f", replay {cov['agreement']}"
    return text


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--quick", action="store_true", help="one seed, 15 s per run, a short cost probe")
    p.add_argument("--seeds", type=int, help="runs per mode on the planted servers (default 2, quick 1)")
    p.add_argument("--budget", type=float, help="seconds per run on the planted servers (default 60, quick 15)")
    p.add_argument("--real-seeds", type=int, default=1, help="runs per mode on the real servers")
    p.add_argument("--real-budget", type=float, help="seconds per run on the real servers (default 30, quick 15)")
    p.add_argument("--targets", default="nested,nested_clean,time,git")
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--step", type=float, default=0.5, help="seconds between coverage readings")
    p.add_argument("--no-warm", action="store_true")
    p.add_argument("--no-cost", action="store_true")
    p.add_argument("--out", type=Path, default=RESULTS / "corpus.json")
    p.add_argument("--markdown", action="store_true", help="print the tables of --out and stop")
    p.add_argument("--replay-again", action="store_true", help="re-measure --out's runs of --targets from their traces")
    ns = p.parse_args()
    if ns.markdown or ns.replay_again:
        result = json.loads(ns.out.read_text())
        if ns.replay_again:
            replay_again(result, ns.step, ns.targets.split(","))
            save_json(ns.out, result)
        print(markdown(result))
        return
    quick = {"seeds": 1, "budget": 15.0, "real_budget": 15.0} if ns.quick else {}
    for key, default in {"seeds": 2, "budget": 60.0, "real_budget": 30.0}.items():
        if getattr(ns, key) is None:
            setattr(ns, key, quick.get(key, default))
    result = measure(ns)
    print(markdown(result))
    log(f"wrote {ns.out}")


if __name__ == "__main__":
    main()
