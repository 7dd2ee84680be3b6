"""What `--base` costs a 60 s run: the same run with and without the base check, in one session.

    python bench/base_cost.py [--budget 60] [--seeds 2] [--out FILE]

The server is tests/servers/revision.py at two revisions (the head adds one buggy tool to a base
that has an old bug): with `--base` the head's bug stays new and the old one is pre-existing. Both
runs use the same seed and budget, one after the other, each alternating which goes first; the
figures are ratios within a pair (calls sent, wall time), never absolute speeds, as the machine is
shared. Default result file: bench/.work/results/base_cost.json.

What the base replays themselves cost is watched from outside, as report.json records only their
outcome (each finding's `baseline_state` and the note "N of M new finding(s) fail there too"):
every base replay runs on a fresh server started from the base checkout, so a thread reads the
run's processes from /proc every 50 ms and groups them by server start. Under containment a start
is one layer slot (`<workdir>/fuzzgate-XXXX/sN`), and the base revision has a containment of its
own, created at its first replay, so a start whose root is not the head's (the root of the run's
first server) is a base replay; without containment a base replay is a process whose working
directory lies in the base checkout. Per run: the base replays counted, their server-seconds (the
sum of their lifetimes, sandbox set-up included), the wall time during which at least one ran, and
the CPU seconds their processes used (read while they ran, so a little short).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from procs import REPO, RESULTS, WORK, _descendants, log, run_fuzzgate, save_json

SERVER = REPO / "tests" / "servers" / "revision.py"
BASE_ATTEMPTS = 2  # fuzzgate.engine.base_check.BASE_ATTEMPTS: a finding not failing on the base gets two
POLL_S = 0.05
_SLOT = re.compile(r"^(?P<root>.*/fuzzgate-[^/]+)/s\d+(?:/|$)")
_TICK_S = 1 / os.sysconf("SC_CLK_TCK")


@dataclass
class _Start:
    """One server start as seen from /proc: its processes' first and last sightings and CPU."""

    first_s: float
    last_s: float
    cpu_s: dict[int, float] = field(default_factory=dict)


class ServerWatch:
    """The server starts under this process (the CLI's and its servers'), sampled until `stop`."""

    def __init__(self, base: Path | None) -> None:
        self.base = str(base.resolve()) if base is not None else None
        self.starts: dict[str, _Start] = {}
        self.head_root: str | None = None
        self._stop = threading.Event()
        self._t0 = time.monotonic()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._stop.is_set():
            now = time.monotonic() - self._t0
            for pid in _descendants(os.getpid()):
                key = self._start_of(pid)
                if key is None:
                    continue
                start = self.starts.setdefault(key, _Start(now, now))
                start.last_s = now
                start.cpu_s[pid] = max(start.cpu_s.get(pid, 0.0), _cpu_s(pid))
            self._stop.wait(POLL_S)

    def _start_of(self, pid: int) -> str | None:
        """The server start `pid` belongs to: its containment slot, else its own pid when it is a
        process of a checkout's server (uncontained); None for anything else (the CLI, probes)."""
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            return None
        if m := _SLOT.match(cwd + "/"):
            if "fuzzgate-probe-" in m.group("root"):
                return None
            if self.head_root is None:
                self.head_root = m.group("root")
            return m.group(0).rstrip("/")
        if self.base is not None and (cwd == self.base or cwd.startswith(self.base + "/")):
            return f"base:{pid}"
        return None

    def is_base(self, key: str) -> bool:
        if key.startswith("base:"):
            return True
        m = _SLOT.match(key + "/")
        return m is not None and self.head_root is not None and m.group("root") != self.head_root

    def base_cost(self) -> dict[str, Any]:
        starts = sorted((s for k, s in self.starts.items() if self.is_base(k)), key=lambda s: s.first_s)
        busy = 0.0
        end = float("-inf")
        for start in starts:  # the union of their lifetimes
            busy += max(0.0, start.last_s - max(start.first_s, end))
            end = max(end, start.last_s)
        return {
            "base_replays": len(starts),
            "base_server_s": round(sum(s.last_s - s.first_s for s in starts), 2),
            "base_busy_wall_s": round(busy, 2),
            "base_cpu_s": round(sum(sum(s.cpu_s.values()) for s in starts), 2),
            "head_server_starts": len(self.starts) - len(starts),
        }


def _cpu_s(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) * _TICK_S  # utime, stime


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
    watch = ServerWatch(base)
    try:
        run = run_fuzzgate(args, out, cwd=head, env={"GITHUB_WORKSPACE": str(head)}, timeout_s=budget * 3 + 120)
    finally:
        watch.stop()
    report = run.report or {}
    states: dict[str, str] = {}
    for finding in report.get("findings", []):
        states[f"{finding['name']}/{finding['kind']}"] = finding.get("baseline_state", "?")
    timing = report.get("timing", {})
    cost = watch.base_cost()
    pre = sum(state == "pre-existing" for state in states.values())
    new = sum(state == "new" for state in states.values())
    return {
        "base": base is not None,
        "exit_code": run.exit_code,
        "verdict": report.get("verdict"),
        "wall_s": round(run.wall_s, 2),
        "calls": report.get("calls", 0),
        "fuzzing_ended_s": timing.get("fuzzing"),
        "verification_ended_s": timing.get("verification"),
        "states": states,
        "pre_existing": pre,
        "new": new,
        **cost,
        # What the report implies at least: one replay per pre-existing finding, two per new one
        # (a finding the budget left unchecked on the base would be fewer: its note says so).
        "base_replays_implied": pre + BASE_ATTEMPTS * new if base is not None else 0,
        "base_share_of_budget": round(cost["base_server_s"] / budget, 3),
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
                "load_average": [round(x, 2) for x in os.getloadavg()],
            }
        )
        save_json(ns.out, result)
        log(f"seed {seed}: {_line(result['pairs'][-1])}")
    ratios = [pair["calls_ratio"] for pair in result["pairs"] if pair["calls_ratio"] is not None]
    result["calls_ratio_median"] = statistics.median(ratios) if ratios else None
    for key in ("base_replays", "base_server_s", "base_busy_wall_s", "base_cpu_s", "base_share_of_budget"):
        result[f"{key}_median"] = statistics.median(pair["base"][key] for pair in result["pairs"])
    result["finished"] = time.strftime("%F %T %z")
    result["load_average"] = [round(x, 2) for x in os.getloadavg()]
    save_json(ns.out, result)
    log(
        f"calls with --base / without: {result['calls_ratio_median']}; base replays "
        f"{result['base_replays_median']}, {result['base_server_s_median']} server-s "
        f"({result['base_share_of_budget_median']:.1%} of the budget); wrote {ns.out}"
    )


def _line(pair: dict[str, Any]) -> str:
    based, plain = pair["base"], pair["plain"]
    return (
        f"calls {based['calls']} / {plain['calls']} = {pair['calls_ratio']}; {based['base_replays']} base replays "
        f"(report implies {based['base_replays_implied']}), {based['base_server_s']} server-s, "
        f"{based['base_busy_wall_s']} s wall, {based['base_cpu_s']} CPU-s; {based['pre_existing']} pre-existing, "
        f"{based['new']} new; exits {based['exit_code']} / {plain['exit_code']}"
    )


if __name__ == "__main__":
    main()
