"""Issue 12 measured: `fuzzgate work` processes sharing one Redis store on this machine, the store's
cost per call, and workers (and Redis) killed and restarted mid-run with the store counted before
and after.

    python bench/workers.py [--seconds S | --minutes M] [--cycle S] [--poll S] [--counts 1,2,4]
                            [--parts scaling,cost,kill] [--cases N] [--rounds N] [--kill-every S]
                            [--seed N] [--quick] [--out FILE]
    python bench/workers.py --markdown [--out FILE]     # the section again, from a results file

Server: bench/servers/nested.py (six planted bugs NST-1 .. NST-6, one per tool; a Python stdio
server, so the workers' default feedback is coverage). It opens no sockets and calls nothing outside
the machine, so nothing here runs inside netjail; fuzzgate's own sandbox (`--sandbox auto`) is on as
usual. Results go to bench/.work/results/workers.json (runs under bench/.work/workers/), and the
Markdown section is printed.

- **Scaling.** For each worker count (1, 2, 4), a fresh `redis-server` on a free loopback port
  (`--appendonly yes --appendfsync always`, its own directory) and that many `fuzzgate work --store
  redis://...` processes, started together, each for the same wall-clock duration (default 180 s,
  cycles of `--cycle` seconds). Every `--poll` seconds this script reads the store itself
  (`SharedStore`): distinct planted bugs (a finding on an NST tool of a kind the catalog accepts for
  that bug; `bench/servers/catalog.py`), distinct fingerprints, corpus entries, calls (the sum of
  every worker's latest statistics). The server's own ground truth (`bench/ground_truth.py`) says
  which bugs were really triggered and when, whatever any worker reported; the machine's CPU busy
  share (/proc/stat) over the run says how much of the 2 cores the run had. At the end every
  worker gets SIGTERM (the worker process alone, as a supervisor sends it); its exit code, the
  seconds it took to exit and any of its processes alive 5 s later are kept. Each worker draws its
  cycles' seeds from its own random id, so no two runs are alike: one run per count is one sample.
- **Store cost per call.** The same deterministic `fuzzgate run --cases N --seed 1 --feedback
  behaviour` on nested with no store, with `--store DIR` and with `--store redis://...` (a fresh
  directory or Redis database each time), alternated, `--rounds` rounds; wall time and calls/s as
  ratios against the no-store run of the same round. Then SharedStore operations on Redis timed
  one by one (add_corpus of one new entry over the run's corpus, write_stats of a snapshot shaped
  like a worker's, record_findings of one record), against the mean call time of that round's
  no-store run.
- **Kill and restart.** Three workers for the duration; every `--kill-every` seconds (drawn from a
  seeded RNG: 0.7-1.3 times it, the seed printed and kept) one worker, chosen by the same RNG, gets
  SIGKILL and a new one starts; once, near the middle, redis-server gets SIGKILL and starts again
  on the same port and directory (appendfsync always: an acknowledged write is on disk). Before and
  after each event the store's finding fingerprints and corpus keys are read: what was there before
  must still be there after, and the findings view must hold each fingerprint once; at the end,
  everything any reading held must still be there. A killed worker's servers are watched (by pid
  and start time) until they exit, and the workers' logs searched for what they said while the
  store was away.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import signal
import statistics
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bugs import TRUTH_FILE, TRUTH_SOCKET, fresh_dir, server_command
from ground_truth import collector
from procs import (
    FUZZGATE,
    RESULTS,
    WORK,
    _descendants,
    free_port,
    kill_group,
    log,
    run_fuzzgate,
    save_json,
    wait_for_port,
)
from scoring import read_ground_truth
from servers.catalog import BUGS, fuzzgate_kinds
from workers_tables import markdown

RUNS = WORK / "workers"
REDIS_SERVER = os.environ.get("REDIS_SERVER", "/usr/bin/redis-server")
TARGET = "nested"
NESTED = [b for b in BUGS if b.server == "nested"]
STOP_GRACE_S = 60.0
"""How long a worker may take to exit after SIGTERM before it is killed (and counted as not exiting 0)."""


# ------------------------------------------------------------------------------- redis-server


class Redis:
    """One redis-server on 127.0.0.1:`port`, data in `data` (append-only file, fsynced on every write)."""

    def __init__(self, data: Path, port: int | None = None) -> None:
        self.data = data
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def db_url(self, db: int) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def start(self) -> None:
        self.data.mkdir(parents=True, exist_ok=True)
        argv = [REDIS_SERVER, "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(self.data)]
        argv += ["--appendonly", "yes", "--appendfsync", "always", "--save", "", "--protected-mode", "yes"]
        argv += ["--daemonize", "no", "--logfile", str(self.data / "redis.log")]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, start_new_session=True)
        self.starts += 1
        wait_for_port(self.port, 30)

    def kill(self) -> None:
        """SIGKILL: no shutdown save; only what the append-only file already holds survives."""
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc:
            kill_group(self.proc, 5.0)


@contextlib.contextmanager
def redis_server(data: Path) -> Iterator[Redis]:
    server = Redis(fresh_dir(data))
    server.start()
    try:
        yield server
    finally:
        server.stop()


# ------------------------------------------------------------------------------- workers


@dataclass
class Worker:
    """One `fuzzgate work` process (the leader of its own process group)."""

    index: int
    proc: subprocess.Popen[bytes]
    log_path: Path
    started: float
    stopped: float | None = None
    exit_code: int | None = None
    how: str = ""
    """"sigterm" or "sigkill" (by this script), or "" while it runs."""
    exit_s: float | None = None
    """Seconds from SIGTERM to its exit."""
    leftover: list[int] = field(default_factory=list)
    """Processes of its group still alive after it exited (killed then)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "pid": self.proc.pid,
            "log": str(self.log_path),
            "ran_s": round((self.stopped or time.time()) - self.started, 1),
            "exit_code": self.exit_code,
            "how": self.how,
            "exit_s": self.exit_s,
            "leftover": self.leftover,
        }


def worker_argv(store: str, truth: Path, root: Path, cycle: float) -> list[str]:
    """A worker draws each cycle's seed from its own random id: no `--seed`, and no two runs alike."""
    command = server_command(TARGET, truth, root)
    argv = [FUZZGATE, "work", "--store", store, "--name", TARGET, "--cycle", f"{cycle:g}s"]
    return [*argv, "--command", command[0], *(f"--arg={a}" for a in command[1:])]


def start_worker(index: int, store: str, truth: Path, work: Path, cycle: float) -> Worker:
    root = work / f"w{index}"
    root.mkdir(parents=True, exist_ok=True)
    log_path = work / f"worker-{index}.log"
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
    env.pop("GITHUB_ACTIONS", None)
    env.pop("GITHUB_STEP_SUMMARY", None)
    with open(log_path, "ab") as out:
        proc = subprocess.Popen(
            worker_argv(store, truth, root, cycle),
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return Worker(index, proc, log_path, time.time())


def _alive(procs: list[tuple[int, str]]) -> list[int]:
    """Those of (pid, start time) still running (a reused pid has another start time)."""
    return [pid for pid, start in procs if _start_time(pid) == start]


def _below(worker: Worker) -> list[tuple[int, str]]:
    return [(pid, start) for pid in _descendants(worker.proc.pid) if (start := _start_time(pid))]


def stop_workers(workers: list[Worker]) -> None:
    """SIGTERM every running worker at once (to the worker process only, as a supervisor would),
    then wait for each; one still running after STOP_GRACE_S is killed. Processes of a worker
    (servers, sandboxes) still alive 5 s after it exited are its `leftover` (then killed)."""
    sent = time.monotonic()
    running = [w for w in workers if w.proc.poll() is None and not w.how]
    below = {w.index: _below(w) for w in running}
    for w in running:
        w.how = "sigterm"
        with contextlib.suppress(ProcessLookupError):
            os.kill(w.proc.pid, signal.SIGTERM)
    for w in running:
        try:
            w.proc.wait(max(0.1, STOP_GRACE_S - (time.monotonic() - sent)))
            w.exit_s = round(time.monotonic() - sent, 2)
        except subprocess.TimeoutExpired:
            w.how = f"sigterm, then sigkill after {STOP_GRACE_S:g} s"
            kill_group(w.proc, 1.0)
        w.exit_code = w.proc.returncode
        w.stopped = time.time()
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline and any(_alive(procs) for procs in below.values()):
        time.sleep(0.25)
    for w in running:
        w.leftover = _alive(below[w.index])
        for pid in w.leftover:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def kill_worker(worker: Worker) -> list[tuple[int, str]]:
    """SIGKILL the worker process alone (a crash, an OOM kill); its server is left to notice. Returns
    the worker's descendants at the moment of the kill (its servers, their sandboxes), each with its
    start time, so a reused pid is never taken for one of them."""
    below = _below(worker)
    worker.how = "sigkill"
    with contextlib.suppress(ProcessLookupError):
        os.kill(worker.proc.pid, signal.SIGKILL)
    worker.proc.wait(10)
    worker.exit_code = worker.proc.returncode
    worker.stopped = time.time()
    return below


def _start_time(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


ORPHAN_WAIT_S = 60.0


def watch_orphans(procs: list[tuple[int, str]], event: dict[str, Any]) -> threading.Thread:
    """Watch a killed worker's processes (its servers, their sandboxes) in the background: how long
    they lived on after it (`orphans_gone_s`), and which were still alive after ORPHAN_WAIT_S
    (`orphans`, killed then so they cost no more CPU)."""
    killed_at = time.monotonic()

    def watch() -> None:
        while time.monotonic() - killed_at < ORPHAN_WAIT_S:
            if not _alive(procs):
                event["orphans_gone_s"] = round(time.monotonic() - killed_at, 1)
                event["orphans"] = []
                return
            time.sleep(0.25)
        event["orphans"] = []
        for pid in _alive(procs):
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            event["orphans"].append(f"{pid} {cmdline.strip()[:120]}")
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


# ------------------------------------------------------------------------------- reading the store


def open_store(url: str, retry_for: float = 5.0) -> Any:
    from fuzzgate.store.shared import SharedStore

    return SharedStore.open(url, retry_for=retry_for)


def bug_of(name: str, kind: str) -> str | None:
    """The planted bug a finding on tool `name` of kind `kind` is, or None."""
    for bug in NESTED:
        if bug.name == name and kind in fuzzgate_kinds(bug):
            return bug.id
    return None


def snapshot(store: Any) -> dict[str, Any]:
    """What the store holds now, as this script reads it (every target, though only one is fuzzed)."""
    from fuzzgate.store.shared import corpus_key, findings_key

    at = time.time()
    findings = store.findings()
    keys: list[str] = []
    raw_corpus = raw_findings = 0
    calls = behaviours = 0
    stats_workers = 0
    for target in store.targets():
        keys += [f"{target}/{e.key}" for e in store.corpus(target).entries]
        raw_corpus += len(store.db.fetch(corpus_key(target)))
        raw_findings += len(store.db.fetch(findings_key(target)))
        for snap in store.stats(target):
            stats_workers += 1
            calls += sum(t.calls for t in snap.tools.values())
            behaviours += sum(t.behaviours for t in snap.tools.values())
    fingerprints = [f"{f.target}/{f.finding.fingerprint}" for f in findings]
    per_bug = Counter(b for f in findings if (b := bug_of(f.finding.name, str(f.finding.kind))))
    bugs = sorted(per_bug)
    return {
        "at": at,
        "fingerprints": sorted(fingerprints),
        "duplicates": len(fingerprints) - len(set(fingerprints)),
        "findings": [
            {
                "fingerprint": f.finding.fingerprint,
                "kind": str(f.finding.kind),
                "name": f.finding.name,
                "state": f.state,
                "workers": len(f.workers),
                "count": f.finding.count,
                "bug": bug_of(f.finding.name, str(f.finding.kind)),
                "first_seen": f.first_seen,
            }
            for f in findings
        ],
        "bugs": bugs,
        "fingerprints_per_bug": dict(sorted(per_bug.items())),
        "corpus_keys": sorted(keys),
        "raw_corpus_values": raw_corpus,
        "raw_finding_records": raw_findings,
        "calls": calls,
        "behaviours": behaviours,
        "stats_workers": stats_workers,
        "workers_seen": len(store.workers()),
        "load": os.getloadavg()[0],
    }


def brief(snap: dict[str, Any], keep_keys: bool = False) -> dict[str, Any]:
    """A poll as kept in the results: counts (and the keys, where an event needs them)."""
    out = {k: v for k, v in snap.items() if k not in ("fingerprints", "corpus_keys", "findings")}
    out["fingerprint_count"] = len(snap["fingerprints"])
    out["corpus"] = len(snap["corpus_keys"])
    if keep_keys:
        out["fingerprints"] = snap["fingerprints"]
        out["corpus_keys"] = snap["corpus_keys"]
    return out


@dataclass
class Seen:
    """Every fingerprint and corpus key any reading of the store held: the last reading must hold them all."""

    fingerprints: set[str] = field(default_factory=set)
    corpus: set[str] = field(default_factory=set)

    def add(self, snap: dict[str, Any] | None) -> None:
        if snap:
            self.fingerprints.update(snap["fingerprints"])
            self.corpus.update(snap["corpus_keys"])

    def missing(self, final: dict[str, Any] | None) -> dict[str, Any]:
        if final is None:
            return {"error": "the store could not be read at the end"}
        return {
            "seen_fingerprints": len(self.fingerprints),
            "seen_corpus": len(self.corpus),
            "missing_fingerprints": sorted(self.fingerprints - set(final["fingerprints"])),
            "missing_corpus": sorted(self.corpus - set(final["corpus_keys"])),
        }


def read_snapshot(url: str, attempts: int = 3) -> dict[str, Any] | None:
    for attempt in range(attempts):
        try:
            with open_store(url) as store:
                return snapshot(store)
        except Exception as exc:  # a poll during a Redis restart: say so, try again
            log(f"  store read failed ({attempt + 1}/{attempts}): {exc}")
            time.sleep(1.0)
    return None


# ------------------------------------------------------------------------------- 1. scaling


def scaling_run(count: int, seconds: float, cycle: float, poll: float) -> dict[str, Any]:
    work = fresh_dir(RUNS / f"scaling-{count}")
    truth = work / TRUTH_FILE
    polls: list[dict[str, Any]] = []
    seen = Seen()
    with collector(work / TRUTH_SOCKET, truth) as socket_path, redis_server(work / "redis") as redis:
        log(f"scaling: {count} worker(s) on {redis.url} for {seconds:g} s")
        cpu0 = cpu_times()
        started = time.time()
        workers = [start_worker(i, redis.url, socket_path, work, cycle) for i in range(count)]
        try:
            deadline = started + seconds
            next_poll = started + poll
            while True:
                now = time.time()
                if now >= deadline:
                    break
                time.sleep(max(0.0, min(next_poll, deadline) - now))
                if time.time() >= next_poll:
                    snap = read_snapshot(redis.url)
                    seen.add(snap)
                    if snap:
                        snap["t"] = round(snap["at"] - started, 1)
                        polls.append(brief(snap))
                        log(f"  t={snap['t']:.0f}s: {_line(snap)}")
                    next_poll += poll
            end = read_snapshot(redis.url)
            cpu1 = cpu_times()
            seen.add(end)
            stop_workers(workers)
        finally:
            for w in workers:
                if w.proc.poll() is None:
                    kill_group(w.proc)
        after = read_snapshot(redis.url)
    gt = read_ground_truth(truth)
    result = {
        "workers": count,
        "cpu_busy": busy_share(cpu0, cpu1),
        "kept": seen.missing(after),
        "seconds": seconds,
        "started": started,
        "polls": polls,
        "end": brief(end, keep_keys=True) if end else None,
        "after_stop": brief(after, keep_keys=True) if after else None,
        "findings": after["findings"] if after else [],
        "triggered": {b: round(t - started, 1) for b, t in sorted(gt.first_trigger.items())},
        "triggers": dict(gt.triggers),
        "worker_exits": [w.to_json() for w in workers],
    }
    if end:
        end["t"] = round(end["at"] - started, 1)
        result["end"]["t"] = end["t"]
    return result


def cpu_times() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine, from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


def busy_share(start: tuple[int, int], end: tuple[int, int]) -> float:
    """The share of the machine's CPU time (all cores) that was busy between two readings."""
    total = end[1] - start[1]
    return round((end[0] - start[0]) / total, 3) if total else 0.0


def _line(snap: dict[str, Any]) -> str:
    return (
        f"{len(snap['bugs'])} bugs {snap['bugs']}, {len(snap['fingerprints'])} fingerprints, "
        f"{len(snap['corpus_keys'])} corpus, {snap['calls']} calls, load {snap['load']:.1f}"
    )


# ------------------------------------------------------------------------------- 2. store cost


def cost_runs(cases: int, rounds: int, micro_ops: int) -> dict[str, Any]:
    work = fresh_dir(RUNS / "cost")
    runs: list[dict[str, Any]] = []
    micro: list[dict[str, Any]] = []
    with collector(work / TRUTH_SOCKET, work / TRUTH_FILE) as socket_path, redis_server(work / "redis") as redis:
        for k in range(1, rounds + 1):
            # Alternate the order so no mode always runs first (a warm page cache, a cooler CPU).
            modes = ["none", "dir", "redis"]
            modes = modes[k - 1 :] + modes[: k - 1]
            for mode in modes:
                run_dir = fresh_dir(work / f"round{k}-{mode}")
                store = {"none": None, "dir": str(run_dir / "store"), "redis": redis.db_url(k)}[mode]
                runs.append(cost_run(mode, k, store, run_dir, socket_path, cases))
            base = next(r for r in runs if r["round"] == k and r["mode"] == "none")
            micro.append(micro_measure(redis.db_url(k), redis.db_url(8 + k), micro_ops, base))
    return {"cases": cases, "rounds": rounds, "runs": runs, "micro": micro}


def cost_run(mode: str, k: int, store: str | None, run_dir: Path, truth: Path, cases: int) -> dict[str, Any]:
    root = run_dir / "root"
    root.mkdir()
    command = server_command(TARGET, truth, root)
    args = ["--command", command[0], *(f"--arg={a}" for a in command[1:]), "--name", TARGET]
    args += ["--cases", str(cases), "--budget", "600s", "--seed", "1", "--feedback", "behaviour"]
    args += ["--baseline", str(run_dir / "baseline"), "--corpus", str(run_dir / "corpus")]
    args += ["--store", store] if store else []
    log(f"cost: round {k}, {mode}" + (f" ({store})" if store else ""))
    run = run_fuzzgate(args, run_dir / "out", cwd=root, timeout_s=900)
    (run_dir / "console.txt").write_text(run.output)
    report = run.report or {}
    result = {
        "mode": mode,
        "round": k,
        "store": store,
        "exit_code": run.exit_code,
        "wall_s": round(run.wall_s, 2),
        "calls": report.get("calls"),
        "duration_s": report.get("duration_s"),
        "run_rate": round(run.run_rate, 1),
        "loop_rate": round(run.loop_rate, 1),
        "findings": len(report.get("findings") or []),
    }
    log(f"  {result}")
    return result


def micro_measure(source_url: str, url: str, ops: int, base: dict[str, Any]) -> dict[str, Any]:
    """SharedStore operations on Redis, one at a time, over a copy of a run's store (its corpus and
    statistics, so each operation reads and writes what a worker's would)."""
    from fuzzgate.model.corpus import CorpusEntry
    from fuzzgate.model.findings import Finding, Kind, Repro, Severity, Surface
    from fuzzgate.store.corpus_store import entry_bytes
    from fuzzgate.store.records import Environment, FindingRecord, StatsSnapshot, TimelinePoint, ToolStats
    from fuzzgate.store.shared import corpus_key

    with open_store(source_url) as source, open_store(url) as store:
        source.copy_to(store)  # db `url` is new: nothing else is in it
        held = store.corpus(TARGET).entries
        template = held[0] if held else CorpusEntry(tool="render_theme", arguments={"theme": "plain", "depth": 1})
        timings: dict[str, list[float]] = {"add_corpus": [], "write_stats": [], "record_findings": []}
        env = Environment(fuzzgate="bench", server=None, commit=None)
        now = time.time()
        timeline = tuple(TimelinePoint(now + i, i * 10, i, i, 0) for i in range(240))
        tools = {b.name: ToolStats(calls=1000, seconds=10.0, behaviours=50, corpus_added=20) for b in NESTED}
        repro = Repro(seed=1, case_index=0, arguments={"theme": "xylophone-7", "depth": 9}, transport="stdio")
        for i in range(ops):
            entry = replace(template, arguments={**template.arguments, "bench_probe": i})
            t0 = time.perf_counter()
            store.add_corpus(TARGET, [entry])
            timings["add_corpus"].append(time.perf_counter() - t0)
            store.db.delete(corpus_key(TARGET), entry_bytes(entry))  # keep the corpus at the run's size
            snap = StatsSnapshot("bench-micro", TARGET, env, i + 1, time.time(), tools, timeline)
            t0 = time.perf_counter()
            store.write_stats(snap)
            timings["write_stats"].append(time.perf_counter() - t0)
            finding = Finding(
                Kind.CRASH, Severity.CRITICAL, Surface.TOOL, "render_theme", "bench", f"bench-{i % 10}", repro
            )
            record = FindingRecord(TARGET, finding, "seen", "bench-micro", env, now, time.time())
            t0 = time.perf_counter()
            store.record_findings([record])
            timings["record_findings"].append(time.perf_counter() - t0)
        corpus_size = len(held)
    call_ms = 1000.0 / base["loop_rate"] if base.get("loop_rate") else None
    out: dict[str, Any] = {"round": base["round"], "ops": ops, "corpus": corpus_size, "call_ms": call_ms}
    for name, values in timings.items():
        ms = sorted(v * 1000 for v in values)
        out[name] = {
            "median_ms": round(statistics.median(ms), 3),
            "p90_ms": round(ms[int(len(ms) * 0.9) - 1], 3),
            "of_call": round(statistics.median(ms) / call_ms, 3) if call_ms else None,
        }
    log(f"  micro: {out}")
    return out


# ------------------------------------------------------------------------------- 3. kill and restart


def kill_run(seconds: float, cycle: float, every: float, seed: int, settle: float) -> dict[str, Any]:
    rng = random.Random(seed)
    work = fresh_dir(RUNS / "kill")
    truth = work / TRUTH_FILE
    events: list[dict[str, Any]] = []
    watchers: list[threading.Thread] = []
    seen = Seen()
    log(f"kill: 3 workers for {seconds:g} s, a kill every ~{every:g} s, RNG seed {seed}")
    with collector(work / TRUTH_SOCKET, truth) as socket_path, redis_server(work / "redis") as redis:
        started = time.time()
        index = 0
        workers: list[Worker] = []
        for _ in range(3):
            workers.append(start_worker(index, redis.url, socket_path, work, cycle))
            index += 1
        deadline = started + seconds
        times: list[float] = []
        t = started
        while True:
            t += every * rng.uniform(0.7, 1.3)
            if t > deadline - settle:
                break
            times.append(t)
        # Redis goes down once, between the two kills nearest the middle.
        middle = started + seconds / 2
        redis_at = min(times, key=lambda x: abs(x - middle)) + every * 0.5 if times else middle
        plan = sorted([(x, "kill") for x in times] + [(redis_at, "redis")])
        try:
            for at, what in plan:
                time.sleep(max(0.0, at - time.time()))
                before = read_snapshot(redis.url)
                seen.add(before)
                event: dict[str, Any] = {"what": what, "t": round(time.time() - started, 1)}
                if what == "kill":
                    alive = [w for w in workers if w.proc.poll() is None and not w.how]
                    victim = rng.choice(alive)
                    watchers.append(watch_orphans(kill_worker(victim), event))
                    new = start_worker(index, redis.url, socket_path, work, cycle)
                    index += 1
                    workers.append(new)
                    event.update(killed=victim.index, started=new.index)
                    log(f"  t={event['t']:.0f}s: SIGKILL worker {victim.index}, started worker {new.index}")
                else:
                    redis.kill()
                    down = time.time()
                    time.sleep(3.0)  # the workers see the store gone and retry with backoff
                    redis.start()
                    event["down_s"] = round(time.time() - down, 1)
                    log(f"  t={event['t']:.0f}s: redis-server SIGKILLed and restarted ({event['down_s']} s down)")
                time.sleep(settle)
                after = read_snapshot(redis.url)
                seen.add(after)
                event.update(compare(before, after))
                event["alive_after"] = sum(1 for w in workers if w.proc.poll() is None)
                events.append(event)
                log(f"    {json.dumps({k: v for k, v in event.items() if k not in ('lost_fingerprints',)})}")
            time.sleep(max(0.0, deadline - time.time()))
            end = read_snapshot(redis.url)
            seen.add(end)
            stop_workers(workers)
        finally:
            for w in workers:
                if w.proc.poll() is None:
                    kill_group(w.proc)
        after = read_snapshot(redis.url)
    for watcher in watchers:
        watcher.join()
    gt = read_ground_truth(truth)
    return {
        "seed": seed,
        "store_messages": store_messages(workers),
        "kept": seen.missing(after),
        "seconds": seconds,
        "every": every,
        "settle_s": settle,
        "events": events,
        "end": brief(end) if end else None,
        "after_stop": brief(after) if after else None,
        "final": compare(end, after),
        "findings": after["findings"] if after else [],
        "triggered": {b: round(t - started, 1) for b, t in sorted(gt.first_trigger.items())},
        "worker_exits": [w.to_json() for w in workers],
    }


def store_messages(workers: list[Worker]) -> dict[str, int]:
    """What the workers said about the store being away (the Redis restart): each distinct line,
    numbers blurred and the worker's id left out, with how many times it was said."""
    said: dict[str, int] = {}
    for w in workers:
        for line in w.log_path.read_text(errors="replace").splitlines():
            text = re.sub(r"^\[[^]]+\] ", "", line)
            routine = text.startswith(("fuzzing ", "stopped after", "stopping ")) or (
                text.startswith("cycle ") and " failed" not in text
            )
            if not routine and re.search(r"\bstore\b|redis|cannot connect|retry|retrying|waiting", text, re.I):
                key = re.sub(r"\d+(\.\d+)?", "N", text)[:200]
                said[key] = said.get(key, 0) + 1
    return said


def compare(before: dict[str, Any] | None, after: dict[str, Any] | None) -> dict[str, Any]:
    if before is None or after is None:
        return {"error": "the store could not be read " + ("before" if before is None else "after")}
    lost_fp = sorted(set(before["fingerprints"]) - set(after["fingerprints"]))
    lost_corpus = sorted(set(before["corpus_keys"]) - set(after["corpus_keys"]))
    return {
        "fingerprints_before": len(before["fingerprints"]),
        "fingerprints_after": len(after["fingerprints"]),
        "corpus_before": len(before["corpus_keys"]),
        "corpus_after": len(after["corpus_keys"]),
        "calls_before": before["calls"],
        "calls_after": after["calls"],
        "bugs_before": before["bugs"],
        "bugs_after": after["bugs"],
        "lost_fingerprints": lost_fp,
        "lost_corpus": lost_corpus,
        "duplicates_after": after["duplicates"],
        "raw_finding_records_after": after["raw_finding_records"],
    }


# ------------------------------------------------------------------------------- the measurement


def measure(ns: argparse.Namespace) -> dict[str, Any]:
    parts = ns.parts.split(",")
    result: dict[str, Any] = {
        "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(ns).items() if k != "markdown"},
        "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "fuzzgate": _fuzzgate_version(),
        "commit": _git_head(),
        "fuzzgate_venv": os.environ.get("BENCH_FUZZGATE_VENV", ""),
        "src_changes": _src_changes(),
        "cpus": os.cpu_count(),
        "redis": _redis_version(),
        "scaling": [],
        "cost": None,
        "kill": None,
        "errors": [],
    }
    log(f"kill schedule RNG seed {ns.seed}")
    if "scaling" in parts:
        for count in (int(c) for c in ns.counts.split(",")):
            try:
                result["scaling"].append(scaling_run(count, ns.seconds, ns.cycle, ns.poll))
            except Exception as exc:  # one broken run must not lose the others
                result["errors"].append(f"scaling {count}: {exc!r}")
                log(f"  failed: {exc!r}")
            save_json(ns.out, result)
    if "cost" in parts:
        try:
            result["cost"] = cost_runs(ns.cases, ns.rounds, ns.micro_ops)
        except Exception as exc:
            result["errors"].append(f"cost: {exc!r}")
            log(f"  failed: {exc!r}")
        save_json(ns.out, result)
    if "kill" in parts:
        try:
            result["kill"] = kill_run(ns.seconds, ns.cycle, ns.kill_every, ns.seed, ns.settle)
        except Exception as exc:
            result["errors"].append(f"kill: {exc!r}")
            log(f"  failed: {exc!r}")
    result["finished"] = time.strftime("%Y-%m-%d %H:%M:%S %z")
    save_json(ns.out, result)
    return result


def _fuzzgate_version() -> str:
    out = subprocess.run([FUZZGATE, "--version"], capture_output=True, text=True, check=False)
    return (out.stdout or out.stderr).strip()


def _redis_version() -> str:
    out = subprocess.run([REDIS_SERVER, "--version"], capture_output=True, text=True, check=False)
    return out.stdout.strip()


def _src_changes() -> int:
    """Uncommitted changes under src/ (a snapshot venv runs the commit, not these)."""
    out = subprocess.run(["git", "status", "--porcelain", "--", "src"], capture_output=True, text=True, check=False)
    return len(out.stdout.splitlines())


def _git_head() -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
    return out.stdout.strip()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    length = p.add_mutually_exclusive_group()
    length.add_argument("--seconds", type=float, help="wall-clock seconds per scaling run and for the kill run (180)")
    length.add_argument("--minutes", type=float, help="the same in minutes")
    p.add_argument("--cycle", type=float, default=30.0, help="seconds per worker cycle (fuzzgate work --cycle)")
    p.add_argument("--poll", type=float, default=10.0, help="seconds between reads of the store")
    p.add_argument("--counts", help="worker counts of the scaling runs (1,2,4; quick 1,2)")
    p.add_argument("--parts", default="scaling,cost,kill")
    p.add_argument("--cases", type=int, help="--cases of each store-cost run (100; quick 30)")
    p.add_argument("--rounds", type=int, help="rounds of the store-cost runs (3; quick 1)")
    p.add_argument("--micro-ops", type=int, help="timed SharedStore operations of each kind per round (200; quick 50)")
    p.add_argument("--kill-every", type=float, default=30.0, help="mean seconds between worker kills")
    p.add_argument("--settle", type=float, default=8.0, help="seconds after an event before the store is read again")
    p.add_argument("--seed", type=int, help="seed of the kill schedule (default: drawn, printed, kept)")
    p.add_argument("--quick", action="store_true", help="25 s runs, 1 and 2 workers, 1 cost round of 30 cases")
    p.add_argument("--out", type=Path, default=RESULTS / "workers.json")
    p.add_argument("--markdown", action="store_true", help="print the section of --out and stop")
    ns = p.parse_args()
    if ns.markdown:
        print(markdown(json.loads(ns.out.read_text())))
        return
    if ns.minutes is not None:
        ns.seconds = ns.minutes * 60
    defaults = {"counts": "1,2,4", "rounds": 3, "cases": 100, "micro_ops": 200}
    if ns.quick:
        ns.seconds = ns.seconds or 25.0
        defaults = {"counts": "1,2", "rounds": 1, "cases": 30, "micro_ops": 50}
        ns.cycle, ns.poll, ns.kill_every = min(ns.cycle, 10.0), min(ns.poll, 5.0), min(ns.kill_every, 8.0)
        ns.settle = min(ns.settle, 3.0)
    for key, value in defaults.items():
        if getattr(ns, key) is None:
            setattr(ns, key, value)
    ns.seconds = ns.seconds or 180.0
    if ns.seed is None:
        ns.seed = random.SystemRandom().randrange(1, 2**31)
    del ns.minutes
    result = measure(ns)
    print(markdown(result))
    log(f"wrote {ns.out}")


if __name__ == "__main__":
    main()
