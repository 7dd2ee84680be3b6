"""Bug finding: fuzzgate and mcp-fuzzer, the same time budget, the same planted-bug servers.

    python bench/bugs.py [--quick] [--budget 60] [--servers ledger,jobs,...] [--fuzzers fuzzgate,mcp-fuzzer]
                         [--seed SHA] [--out FILE] [--work DIR]

For each server in bench/servers/ and each fuzzer, a fresh work directory WORK holding the
ground-truth file and the Unix socket that collects it (`ground_truth.py`); the server command is
`/usr/bin/env BENCH_GROUND_TRUTH=WORK/truth.sock python SERVER.py [--root WORK/root]` for both
fuzzers (each of them passes the server only a filtered environment). The servers touch no
network. WORK/root, empty but for what the server puts there, is the working directory of the
fuzzer and so of the server: it is the server's whole scope, and the socket is outside it.

- fuzzgate: `fuzzgate run --budget B --seed SEED` with every other setting at its default
  (3 replays, 5 s timeout, concurrency 1, mixed mode), plus `--trace`, and a config file with
  `[allow_destructive]` for the tools `catalog.ALLOWED_DESTRUCTIVE` names. fuzzgate sandboxes the
  servers it starts itself.
- mcp-fuzzer has no time budget, only a number of runs per tool. It is run in iterations
  (`--mode all --phase both --runs R --seed SEED+i --security-audit`, its defaults otherwise:
  concurrency 5) until B seconds have passed; the iteration running at B is allowed to finish (a
  run killed mid-way writes no report at all), up to a hard cap of 3 B, and its wall time is
  recorded. `--security-audit` turns on its command-injection and path-traversal output oracles,
  its only ones for the scope and injection bugs. It has no sandbox, so on the servers that take
  `--root` (which run shell input and make folders anywhere) it runs inside
  `netjail.sh --rw WORK` with HOME=WORK/home.

Results (raw reports, ground truth and scores) go to one JSON file, default
bench/.work/results/bugs.json.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ground_truth import collector
from procs import NETJAIL, PYTHON, RESULTS, SERVERS, WORK, kill_group, log, run_fuzzgate, save_json
from scoring import fuzzgate_reports, mcp_fuzzer_calls, mcp_fuzzer_reports, read_ground_truth, score
from servers.catalog import ALLOWED_DESTRUCTIVE, ROOTED_SERVERS
from servers.catalog import SERVERS as SERVER_NAMES

MCP_FUZZER = WORK / "venv-mcp-fuzzer" / "bin" / "mcp-fuzzer"
DEFAULT_SEED = "3f1c9a7e5b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a"
MCP_FUZZER_RUNS = 10
TOOL_TIMEOUT_S = 5


TRUTH_FILE = "ground_truth.jsonl"
TRUTH_SOCKET = "truth.sock"


def server_command(server: str, truth: Path, root: Path, interpreter: Sequence[str] = (PYTHON,)) -> list[str]:
    """The server's command line; `truth` is where it records (the collector's socket); `interpreter`
    runs the script (bench/corpus.py puts it under covserve.py)."""
    command = ["/usr/bin/env", f"BENCH_GROUND_TRUTH={truth}", *interpreter, str(SERVERS / f"{server}.py")]
    return [*command, "--root", str(root)] if server in ROOTED_SERVERS else command


def scope_dir(work: Path) -> Path:
    """The fuzzer's and the server's working directory, the server's `--root` if it takes one."""
    root = work / "root"
    root.mkdir(exist_ok=True)
    return root


def fuzzgate_config(server: str, work: Path) -> list[str]:
    """`--config FILE` allowing the tools destructive by name only, or nothing."""
    tools = ALLOWED_DESTRUCTIVE.get(server)
    if not tools:
        return []
    config = work / "fuzzgate.toml"
    config.write_text("[allow_destructive]\ntools = [" + ", ".join(f'"{t}"' for t in tools) + "]\n")
    return ["--config", str(config)]


def fresh_dir(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def run_fuzzgate_on(
    server: str, budget: float, seed: str, work: Path, baseline: Path | None = None, extra: Sequence[str] = ()
) -> dict[str, Any]:
    """One `fuzzgate run` on a benchmark server, scored against its ground truth; `extra` goes on
    its command line."""
    truth = work / TRUTH_FILE
    root = scope_dir(work)
    with collector(work / TRUTH_SOCKET, truth) as socket_path:
        command = server_command(server, socket_path, root)
        args = ["--command", command[0], *(f"--arg={a}" for a in command[1:]), *fuzzgate_config(server, work)]
        args += ["--budget", f"{budget:g}s", "--seed", seed, "--baseline", str(baseline or work / "baseline")]
        args += ["--trace", str(work / "trace.jsonl"), *extra]
        started = time.time()
        run = run_fuzzgate(args, work / "out", cwd=root, timeout_s=budget * 4 + 600)
    if run.report is None:
        raise RuntimeError(f"fuzzgate on {server} wrote no report (exit {run.exit_code}):\n{run.output[-3000:]}")
    (work / "console.txt").write_text(run.output)
    reports = fuzzgate_reports(run.report)
    s = score(server, "fuzzgate", reports, read_ground_truth(truth), started)
    blocked = [e["name"] for e in run.report["entries"] if e["status"] == "blocked"]
    restarts = run.output.count("restarted the server (")
    return {
        "server": server,
        "fuzzer": "fuzzgate",
        "budget_s": budget,
        "wall_s": round(run.wall_s, 1),
        "fuzz_s": run.report["duration_s"],
        "calls": run.report["calls"],
        "exit_code": run.exit_code,
        "blocked": blocked,
        "restarts": restarts,
        "reports": [_as_dict(r) for r in reports],
        "work": str(work),
        "containment": run.report.get("containment"),
        "findings": [finding_facts(f) for f in run.report["findings"]],
        "score": s.to_json(),
    }


def finding_facts(finding: dict[str, Any]) -> dict[str, Any]:
    """What the results keep of one report.json finding: enough to review it without the run's files."""
    keys = ("fingerprint", "kind", "name", "flaky", "baseline_state", "message", "count", "replays", "reproduced")
    return {
        **{k: finding.get(k) for k in keys},
        "unconfirmed": bool(finding.get("unconfirmed")),
        "arguments": finding["repro"].get("arguments"),
        "prefix_steps": len(finding["repro"].get("prefix") or ()),
    }


def _as_dict(report: Any) -> dict[str, Any]:
    return {k: getattr(report, k) for k in report.__slots__}


def run_mcp_fuzzer_on(
    server: str, budget: float, seed: int, work: Path, interpreter: Sequence[str] = (PYTHON,)
) -> dict[str, Any]:
    truth = work / TRUTH_FILE
    with collector(work / TRUTH_SOCKET, truth) as socket_path:
        started = time.time()
        iterations, i, killed = _mcp_fuzzer_iterations(server, budget, seed, work, socket_path, interpreter)
        wall = time.time() - started
    reports = mcp_fuzzer_reports(iterations)
    s = score(server, "mcp-fuzzer", reports, read_ground_truth(truth), started)
    return {
        "server": server,
        "fuzzer": "mcp-fuzzer",
        "budget_s": budget,
        "wall_s": round(wall, 1),
        "fuzz_s": round(wall, 1),
        "calls": mcp_fuzzer_calls(iterations),
        "iterations": i,
        "iterations_with_report": len(iterations),
        "iterations_killed": killed,
        "reports": [_as_dict(r) for r in reports],
        "score": s.to_json(),
    }


def _mcp_fuzzer_iterations(
    server: str, budget: float, seed: int, work: Path, truth: Path, interpreter: Sequence[str] = (PYTHON,)
) -> tuple[list[Path], int, int]:
    """(output dirs of the iterations that wrote a report, iterations run, iterations killed)."""
    root = scope_dir(work)
    endpoint = " ".join(server_command(server, truth, root, interpreter))
    jail: list[str] = []
    env = dict(os.environ)
    if server in ROOTED_SERVERS:
        jail = [str(NETJAIL), "--rw", str(work), "--"]
        env["HOME"] = str(work / "home")
        (work / "home").mkdir(exist_ok=True)
    deadline = time.monotonic() + budget
    hard_stop = time.monotonic() + 3 * budget
    iterations: list[Path] = []
    killed = 0
    i = 0
    while time.monotonic() < deadline:
        out = work / f"iteration-{i:02d}"
        argv = [
            *jail, str(MCP_FUZZER), "--mode", "all", "--phase", "both", "--protocol", "stdio", "--endpoint", endpoint,
            "--runs", str(MCP_FUZZER_RUNS), "--seed", str(seed + i), "--tool-timeout", str(TOOL_TIMEOUT_S),
            "--output-dir", str(out), "--fs-root", str(work / "fs-root"), "--security-audit",
        ]  # fmt: skip
        with open(work / f"iteration-{i:02d}.log", "wb") as logfile:
            proc = subprocess.Popen(
                argv,
                cwd=root if jail else work,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=logfile,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            try:
                proc.wait(max(1.0, hard_stop - time.monotonic()))
            except subprocess.TimeoutExpired:
                killed += 1
            finally:
                kill_group(proc)
        if (out / "findings.json").exists():
            iterations.append(out)
        i += 1
    return iterations, i, killed


def mcp_fuzzer_version() -> str:
    if not MCP_FUZZER.exists():
        return "not installed"
    out = subprocess.run([str(MCP_FUZZER), "--version"], capture_output=True, text=True, check=False)
    return (out.stdout or out.stderr).strip().splitlines()[-1] if (out.stdout or out.stderr).strip() else "?"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--quick", action="store_true", help="5 s per server per fuzzer")
    p.add_argument("--budget", type=float, default=60.0, help="seconds per server per fuzzer")
    p.add_argument("--servers", default=",".join(SERVER_NAMES))
    p.add_argument("--fuzzers", default="fuzzgate,mcp-fuzzer")
    p.add_argument("--seed", default=DEFAULT_SEED, help="fuzzgate's seed (a commit SHA)")
    p.add_argument("--mcp-fuzzer-seed", type=int, default=1)
    p.add_argument("--out", type=Path, default=RESULTS / "bugs.json")
    p.add_argument("--work", type=Path, default=WORK / "bugs", help="run directories: DIR/SERVER/FUZZER")
    ns = p.parse_args()
    if ns.quick:
        ns.budget = 5.0
    fuzzers = ns.fuzzers.split(",")
    result: dict[str, Any] = {
        "settings": {"budget_s": ns.budget, "seed": ns.seed, "mcp_fuzzer_seed": ns.mcp_fuzzer_seed,
                     "mcp_fuzzer_runs_per_iteration": MCP_FUZZER_RUNS, "mcp_fuzzer_security_audit": True,
                     "jailed_servers": [s for s in ROOTED_SERVERS if s in ns.servers.split(",")], "quick": ns.quick},
        "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "mcp_fuzzer_version": mcp_fuzzer_version(),
        "runs": [],
        "errors": [],
    }  # fmt: skip
    if "mcp-fuzzer" in fuzzers and not MCP_FUZZER.exists():
        result["errors"].append(f"mcp-fuzzer is not installed at {MCP_FUZZER}: run bench/run_all, which installs it")
        fuzzers.remove("mcp-fuzzer")
    for server in ns.servers.split(","):
        for fuzzer in fuzzers:
            work = fresh_dir(ns.work.resolve() / server / fuzzer)
            log(f"{fuzzer} on {server} for {ns.budget:g}s")
            load_before = os.getloadavg()[0]  # the machine is shared: say how busy it was
            try:
                if fuzzer == "fuzzgate":
                    run = run_fuzzgate_on(server, ns.budget, ns.seed, work)
                else:
                    run = run_mcp_fuzzer_on(server, ns.budget, ns.mcp_fuzzer_seed, work)
            except Exception as exc:  # one broken run must not lose the others
                result["errors"].append(f"{fuzzer} on {server}: {exc}")
                log(f"  failed: {exc}")
                continue
            run.update(load_before=round(load_before, 2), load_after=round(os.getloadavg()[0], 2))
            sc = run["score"]
            log(
                f"  triggered {len(sc['triggered'])}, reported {len(sc['reported'])}, "
                f"false positives {sc['false_positives']}, known unplanted {len(sc['known'])}, "
                f"destructive calls {sum(sc['destructive_calls'].values())}"
            )
            result["runs"].append(run)
            save_json(ns.out, result)
    result["finished"] = time.strftime("%Y-%m-%d %H:%M:%S %z")
    save_json(ns.out, result)
    log(f"wrote {ns.out}")


if __name__ == "__main__":
    main()
