"""Real servers nobody here wrote, each fuzzed by fuzzgate inside the network jail.

    python bench/realworld.py [--quick] [--budget 60] [--servers everything,filesystem,time] [--out FILE]

- `@modelcontextprotocol/server-everything` (npm): its `gzip-file-as-resource` tool fetches URLs,
  so it runs in /work/shared/tools/netjail.sh (loopback only, read-only file system);
- `@modelcontextprotocol/server-filesystem` (npm), allowed only bench/.work/fs-scratch, which is
  re-created with a few files before the run and is the jail's only writable directory;
- `mcp-server-time` (PyPI, in bench/.work/venv-bench): no network use that we know of, jailed
  anyway.

bench/run_all installs all three under bench/.work. Every finding is written with its evidence;
the reviews in bench/reviews.json (keyed `server/tool/kind`) are a person's judgement of them.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path
from typing import Any

from procs import NETJAIL, RESULTS, WORK, log, run_fuzzgate, save_json

NODE_MODULES = WORK / "node_modules"
SCRATCH = WORK / "fs-scratch"
SEED = "3f1c9a7e5b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a"


def _package_version(name: str) -> str:
    try:
        return str(json.loads((NODE_MODULES / name / "package.json").read_text())["version"])
    except (OSError, ValueError, KeyError):
        return "not installed"


def _pip_version(name: str) -> str:
    import importlib.metadata as md

    for dist in md.distributions(path=[str(p) for p in (WORK / "venv-bench" / "lib").glob("python*/site-packages")]):
        if dist.metadata["Name"].lower() == name:
            return dist.version
    return "not installed"


def reset_scratch() -> None:
    shutil.rmtree(SCRATCH, ignore_errors=True)
    (SCRATCH / "notes").mkdir(parents=True)
    (SCRATCH / "readme.txt").write_text("scratch directory for the filesystem server benchmark\n")
    (SCRATCH / "notes" / "todo.md").write_text("- water the plants\n- fuzz the servers\n")
    (SCRATCH / "data.json").write_text('{"answer": 42}\n')


def targets() -> dict[str, dict[str, Any]]:
    everything = NODE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    filesystem = NODE_MODULES / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
    return {
        "everything": {
            "package": "@modelcontextprotocol/server-everything",
            "version": _package_version("@modelcontextprotocol/server-everything"),
            "command": [str(NETJAIL), "node", str(everything), "stdio"],
        },
        "filesystem": {
            "package": "@modelcontextprotocol/server-filesystem",
            "version": _package_version("@modelcontextprotocol/server-filesystem"),
            "command": [str(NETJAIL), "--rw", str(SCRATCH), "node", str(filesystem), str(SCRATCH)],
        },
        "time": {
            "package": "mcp-server-time",
            "version": _pip_version("mcp-server-time"),
            "command": [str(NETJAIL), str(WORK / "venv-bench" / "bin" / "mcp-server-time")],
        },
    }


def fuzz(name: str, target: dict[str, Any], budget: float) -> dict[str, Any]:
    work = WORK / "realworld" / name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    if name == "filesystem":
        reset_scratch()
    command = target["command"]
    args = ["--command", command[0], *(f"--arg={a}" for a in command[1:])]
    args += ["--budget", f"{budget:g}s", "--seed", SEED, "--baseline", str(work / "baseline")]
    args += ["--trace", str(work / "trace.jsonl")]
    run = run_fuzzgate(args, work / "out", cwd=work, timeout_s=budget * 4 + 600)
    (work / "console.txt").write_text(run.output)
    if run.report is None:
        raise RuntimeError(f"no report (exit {run.exit_code}):\n{run.output[-2000:]}")
    report = run.report
    findings = [
        {
            "kind": f["kind"],
            "tool": f["name"],
            "severity": f["severity"],
            "flaky": f["flaky"],
            "message": f["message"],
            "arguments": f["repro"]["arguments"],
            "error": (f["details"].get("error") or "")[:400],
            "stderr": "\n".join((f["details"].get("stderr") or "").splitlines()[-6:])[:600],
            "fingerprint": f["fingerprint"],
            "reproduced": f"{f['reproduced']}/{f['replays']}",
        }
        for f in report["findings"]
    ]
    return {
        "server": name,
        "package": target["package"],
        "version": target["version"],
        "command": " ".join(command),
        "protocol": report["target"].get("protocol_version"),
        "budget_s": budget,
        "calls": report["calls"],
        "duration_s": report["duration_s"],
        "run_rate": run.run_rate,
        "loop_rate": run.loop_rate,
        "exit_code": run.exit_code,
        "restarts": run.output.count("restarted the server ("),
        "entries": [(e["name"], e["status"], e.get("reason"), e.get("cases", 0)) for e in report["entries"]],
        "findings": findings,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--quick", action="store_true", help="5 s per server")
    p.add_argument("--budget", type=float, default=60.0)
    p.add_argument("--servers", default="everything,filesystem,time")
    p.add_argument("--out", type=Path, default=RESULTS / "realworld.json")
    ns = p.parse_args()
    if ns.quick:
        ns.budget = 5.0
    result: dict[str, Any] = {
        "settings": {"budget_s": ns.budget, "seed": SEED, "quick": ns.quick},
        "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "servers": [],
        "errors": [],
    }
    all_targets = targets()
    for name in ns.servers.split(","):
        target = all_targets[name]
        if target["version"] == "not installed":
            result["errors"].append(f"{target['package']} is not installed under bench/.work (run bench/run_all)")
            continue
        log(f"fuzzgate on {target['package']} {target['version']} for {ns.budget:g}s (in netjail)")
        try:
            entry = fuzz(name, target, ns.budget)
        except Exception as exc:
            result["errors"].append(f"{name}: {exc}")
            log(f"  failed: {exc}")
            continue
        log(f"  {entry['calls']} calls, {len(entry['findings'])} findings")
        result["servers"].append(entry)
        save_json(ns.out, result)
    result["finished"] = time.strftime("%Y-%m-%d %H:%M:%S %z")
    save_json(ns.out, result)
    log(f"wrote {ns.out}")


if __name__ == "__main__":
    main()
