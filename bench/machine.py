"""What machine and which versions a benchmark run used, as JSON (run with the main venv's python).

python bench/machine.py OUT.json
"""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from procs import FUZZGATE, REPO, WORK


def _run(*argv: str, cwd: Path | None = None) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False, cwd=cwd)
    except OSError:
        return "not available"
    return (out.stdout or out.stderr).strip() or "?"


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "?"


def _memory() -> str:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    return "?"


def _venv_version(venv: Path, package: str) -> str:
    python = venv / "bin" / "python"
    if not python.exists():
        return "not installed"
    code = f"import importlib.metadata as m; print(m.version({package!r}))"
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=30, check=False)
    return out.stdout.strip() if out.returncode == 0 else "not installed"


def main() -> None:
    head = _run("git", "rev-parse", "--short", "HEAD", cwd=REPO)
    dirty = _run("git", "status", "--porcelain", "--", "src", cwd=REPO)
    info = {
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "cpus (nproc)": str(os.cpu_count()),
        "memory": _memory(),
        "cpu model": _cpu_model(),
        "kernel": platform.release(),
        "python": sys.version.split()[0],
        "node": _run("node", "--version"),
        "fuzzgate": f"{_run(FUZZGATE, '--version')} (git {head}"
        + (f", {len(dirty.splitlines())} uncommitted changes under src/)" if dirty not in ("", "?") else ")"),
        "mcp (SDK, fuzzgate's venv)": md.version("mcp"),
        "hypothesis": md.version("hypothesis"),
        "mcp-fuzzer": _venv_version(WORK / "venv-mcp-fuzzer", "mcp-fuzzer"),
        "matplotlib (bench venv)": _venv_version(WORK / "venv-bench", "matplotlib"),
    }
    out = Path(sys.argv[1])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(info, indent=2))  # in this order, not sorted


if __name__ == "__main__":
    main()
