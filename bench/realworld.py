"""Real servers nobody here wrote, each fuzzed by fuzzgate with its own sandbox, inside the network jail.

    python bench/realworld.py [--quick] [--budget 60] [--servers everything,filesystem,time,git]
                              [--sandbox auto|required|off] [--out FILE]

fuzzgate contains every server it starts (a throwaway layer of its scope, canaries in a watched
directory around it, and, where namespaces work, a jail with only its own loopback); `--sandbox`
is passed through (default `required`, so a run never silently falls back). The whole `fuzzgate
run` also runs inside ../shared/tools/netjail.sh `--rw WORK` (loopback only, the file system
read-only but for the run's directory WORK), so a server that could reach the network never does,
even with `--sandbox off`. netjail goes outside fuzzgate, not around the server command: inside
fuzzgate's jail netjail cannot start (`unshare: mount /proc failed: Operation not permitted`; the
jail's /proc has read-only parts, so the kernel refuses a fresh /proc in a nested namespace).
The server's scope is WORK/cwd plus the directories its arguments name; fuzzgate's layers go to
WORK/layers (`FUZZGATE_WORKDIR`).

- `@modelcontextprotocol/server-everything` (npm): its `gzip-file-as-resource` tool fetches URLs;
- `@modelcontextprotocol/server-filesystem` (npm), allowed only bench/.work/fs-scratch, which is
  re-created with a few files before the run and is netjail's only writable directory;
- `mcp-server-time` (PyPI, in bench/.work/venv-bench): no network use that we know of;
- `mcp-server-git` (PyPI, in bench/.work/venv-bench) with `--repository bench/.work/git-scratch`,
  a repository re-created with two commits before the run.

bench/run_all installs all four under bench/.work. Every finding is written with its evidence and
its whole repro (the calls before it included); the reviews in bench/reviews.json (keyed
`server/tool/kind`, or `server/tool/kind/signature` where one tool has several findings of a kind)
are a person's judgement of them.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from procs import NETJAIL, RESULTS, WORK, log, run_fuzzgate, save_json

NODE_MODULES = WORK / "node_modules"
SCRATCH = WORK / "fs-scratch"
GIT_SCRATCH = WORK / "git-scratch"
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


def reset_git_scratch() -> None:
    """A small repository with two commits and a branch, for mcp-server-git's `--repository`."""
    shutil.rmtree(GIT_SCRATCH, ignore_errors=True)
    GIT_SCRATCH.mkdir(parents=True, exist_ok=True)  # a mount point (a jail's --rw) outlives rmtree
    who = {f"GIT_{role}_{what}": value for role in ("AUTHOR", "COMMITTER")
           for what, value in (("NAME", "bench"), ("EMAIL", "bench@example.invalid"))}  # fmt: skip
    env = {**who, "PATH": "/usr/bin:/bin", "HOME": str(GIT_SCRATCH)}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=GIT_SCRATCH, env=env, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    (GIT_SCRATCH / "README.md").write_text("# scratch\n\nA repository for the mcp-server-git benchmark.\n")
    git("add", "README.md")
    git("commit", "-q", "-m", "first commit")
    (GIT_SCRATCH / "notes.txt").write_text("one\ntwo\n")
    git("add", "notes.txt")
    git("commit", "-q", "-m", "add notes")
    git("branch", "feature")
    (GIT_SCRATCH / "notes.txt").write_text("one\ntwo\nthree\n")  # an unstaged change for the diff tools


def targets() -> dict[str, dict[str, Any]]:
    everything = NODE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    filesystem = NODE_MODULES / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
    return {
        "everything": {
            "package": "@modelcontextprotocol/server-everything",
            "version": _package_version("@modelcontextprotocol/server-everything"),
            "command": ["node", str(everything), "stdio"],
        },
        "filesystem": {
            "package": "@modelcontextprotocol/server-filesystem",
            "version": _package_version("@modelcontextprotocol/server-filesystem"),
            "command": ["node", str(filesystem), str(SCRATCH)],
        },
        "time": {
            "package": "mcp-server-time",
            "version": _pip_version("mcp-server-time"),
            "command": [str(WORK / "venv-bench" / "bin" / "mcp-server-time")],
        },
        "git": {
            "package": "mcp-server-git",
            "version": _pip_version("mcp-server-git"),
            "command": [str(WORK / "venv-bench" / "bin" / "mcp-server-git"), "--repository", str(GIT_SCRATCH)],
        },
    }


def fuzz(name: str, target: dict[str, Any], budget: float, sandbox: str, work: Path | None = None) -> dict[str, Any]:
    """One jailed `fuzzgate run` on a real server, in `work` (default bench/.work/realworld/NAME), with
    `--trace work/trace.jsonl`."""
    work = work or WORK / "realworld" / name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    if name == "filesystem":
        reset_scratch()
    if name == "git":
        reset_git_scratch()
    command = target["command"]
    args = ["--command", command[0], *(f"--arg={a}" for a in command[1:])]
    args += ["--budget", f"{budget:g}s", "--seed", SEED, "--baseline", str(work / "baseline"), "--sandbox", sandbox]
    args += ["--trace", str(work / "trace.jsonl")]
    started = time.monotonic()
    (work / "cwd").mkdir()
    (work / "layers").mkdir()
    run = run_fuzzgate(
        args,
        work / "out",
        cwd=work / "cwd",
        env={"FUZZGATE_WORKDIR": str(work / "layers")},
        timeout_s=budget * 4 + 600,
        wrapper=[str(NETJAIL), "--rw", str(work), "--"],
    )
    wall = time.monotonic() - started
    (work / "console.txt").write_text(run.output)
    if run.report is None:
        raise RuntimeError(f"no report (exit {run.exit_code}):\n{run.output[-2000:]}")
    report = run.report
    findings = [
        {
            "kind": f["kind"],
            "tool": f["name"],
            "surface": f.get("surface", "tool"),
            "signature": f.get("signature") or [],
            "severity": f["severity"],
            "flaky": f["flaky"],
            "unconfirmed": f.get("unconfirmed", False),
            "message": f["message"],
            "arguments": f["repro"]["arguments"],
            "repro_tool": f["repro"].get("tool", f["name"]),
            "prefix": f["repro"].get("prefix") or [],
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
        "jail": f"{NETJAIL} --rw {work} -- fuzzgate run ...",
        "protocol": report["target"].get("protocol_version"),
        "budget_s": budget,
        "sandbox": sandbox,
        "containment": report.get("containment"),
        "wall_s": round(wall, 1),
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
    p.add_argument("--servers", default="everything,filesystem,time,git")
    p.add_argument("--sandbox", default="required", choices=("auto", "required", "off"), help="fuzzgate's --sandbox")
    p.add_argument("--out", type=Path, default=RESULTS / "realworld.json")
    ns = p.parse_args()
    if ns.quick:
        ns.budget = 5.0
    result: dict[str, Any] = {
        "settings": {"budget_s": ns.budget, "seed": SEED, "quick": ns.quick, "sandbox": ns.sandbox},
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
        log(f"fuzzgate on {target['package']} {target['version']} for {ns.budget:g}s, sandbox {ns.sandbox}, in netjail")
        try:
            entry = fuzz(name, target, ns.budget, ns.sandbox)
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
