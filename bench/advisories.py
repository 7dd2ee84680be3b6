"""Real servers at releases with published advisories, and the release that fixed them: does fuzzgate
find the advisory's bug on the vulnerable release and stay quiet on the fixed one?

    python bench/advisories.py [--budget 60] [--pairs filesystem,git] [--install-only] [--out FILE]

Each pair is one package at two versions, installed side by side under bench/.work/advisories/
(npm packages with `npm install --prefix`, PyPI packages each in its own venv, each with the
dependencies of its time pinned: today's resolution gives the old releases a zod or an `mcp` they
do not run on), and fuzzed with
realworld.py's `fuzz` (the same command line: fuzzgate's sandbox `required`, the whole run inside
../shared/tools/netjail.sh, the same seed) with a plain config: no hints, no allowlist. The
expected finding kinds are what the advisory describes; a security finding (scope_escape,
injection, ssrf) on the fixed release is a false alarm unless a reviewer says otherwise.

- `@modelcontextprotocol/server-filesystem` 2025.3.28 (a path check by string prefix lets a
  sibling directory whose name extends the allowed one through, CVE-2025-53110; symlinks in the
  allowed directory are followed outside it, CVE-2025-53109) against 2025.7.1;
- `mcp-server-git` 2025.7.1 (option injection through ref arguments of `git_diff` and
  `git_checkout`, CVE-2025-68144; `repo_path` not confined to `--repository`, CVE-2025-68145)
  against 2025.12.18.

Default result file: bench/.work/results/advisories.json.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from procs import RESULTS, WORK, log, save_json
from realworld import GIT_SCRATCH, SCRATCH, fuzz

HOME = WORK / "advisories"
SECURITY_KINDS = frozenset({"scope_escape", "injection", "ssrf"})
PAIRS: dict[str, dict[str, Any]] = {
    "filesystem": {
        "package": "@modelcontextprotocol/server-filesystem",
        "ecosystem": "npm",
        "vulnerable": "2025.3.28",
        "fixed": "2025.7.1",
        "advisories": "CVE-2025-53110 (prefix sibling), CVE-2025-53109 (symlink)",
        "expected": ("scope_escape",),
        "pins": ("zod@3.24.2", "zod-to-json-schema@3.24.5"),
    },
    "git": {
        "package": "mcp-server-git",
        "ecosystem": "pypi",
        "vulnerable": "2025.7.1",
        "fixed": "2025.12.18",
        "advisories": "CVE-2025-68144 (option injection), CVE-2025-68145 (repo_path outside --repository)",
        "expected": ("injection", "scope_escape"),
        "pins": ("mcp<2",),
    },
}


def _install(name: str, pair: dict[str, Any], version: str) -> list[str]:
    """Install one release (once) and return the server's command line."""
    where = HOME / f"{name}-{version}"
    if pair["ecosystem"] == "npm":
        entry = where / "node_modules" / pair["package"] / "dist" / "index.js"
        if not entry.is_file():
            where.mkdir(parents=True, exist_ok=True)
            subprocess.run(
                ["npm", "install", "--prefix", str(where), "--no-fund", "--no-audit", "--loglevel=error",
                 f"{pair['package']}@{version}", *pair["pins"]],
                check=True,
            )  # fmt: skip
        return ["node", str(entry), str(SCRATCH)]
    binary = where / "bin" / pair["package"]
    if not binary.is_file():
        subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
        pip = [str(where / "bin" / "pip"), "install", "-q", f"{pair['package']}=={version}", *pair["pins"]]
        subprocess.run(pip, check=True)
    return [str(binary), "--repository", str(GIT_SCRATCH)]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--budget", type=float, default=60.0)
    p.add_argument("--pairs", default=",".join(PAIRS))
    p.add_argument("--sandbox", default="required", choices=("auto", "required", "off"))
    p.add_argument("--install-only", action="store_true")
    p.add_argument("--out", type=Path, default=RESULTS / "advisories.json")
    ns = p.parse_args()
    result: dict[str, Any] = {
        "settings": {"budget_s": ns.budget, "sandbox": ns.sandbox},
        "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "runs": [],
        "errors": [],
    }
    for name in ns.pairs.split(","):
        pair = PAIRS[name]
        for release in ("vulnerable", "fixed"):
            version = pair[release]
            command = _install(name, pair, version)
            if ns.install_only:
                continue
            log(f"fuzzgate on {pair['package']} {version} ({release}) for {ns.budget:g}s")
            target = {"package": pair["package"], "version": version, "command": command}
            try:
                entry = fuzz(name, target, ns.budget, ns.sandbox, work=WORK / "advisories-runs" / f"{name}-{version}")
            except Exception as exc:
                result["errors"].append(f"{name} {version}: {exc}")
                log(f"  failed: {exc}")
                continue
            kinds = sorted({f["kind"] for f in entry["findings"]})
            entry.update(
                release=release,
                advisories=pair["advisories"],
                expected=list(pair["expected"]),
                found_expected=sorted(set(pair["expected"]) & set(kinds)),
                security_findings=sum(f["kind"] in SECURITY_KINDS for f in entry["findings"]),
            )
            log(f"  {entry['calls']} calls, {len(entry['findings'])} findings, kinds {kinds}")
            result["runs"].append(entry)
            save_json(ns.out, result)
    result["finished"] = time.strftime("%Y-%m-%d %H:%M:%S %z")
    if not ns.install_only:
        save_json(ns.out, result)
        log(f"wrote {ns.out}")


if __name__ == "__main__":
    main()
