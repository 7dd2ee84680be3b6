"""Whole runs of 12 s: what a user's `fuzzgate run --budget 12s` gets done against what a bare SDK
client loop, started the same way, gets done in the same 12 s of wall time.

    python bench/wholerun.py [--quick] [--rounds 3] [--seconds 12] [--transports stdio,http] [--sandbox auto]
                             [--out FILE]
    python bench/wholerun.py --markdown [FILE]
    python bench/wholerun.py --profile DIR [--transports stdio] [--seconds 12]

Server: `examples/servers/fast_server.py` (one tool that answers at once).

- **fuzzgate**: the real CLI, `fuzzgate run --command PY --arg=fast_server.py --budget 12s --seed 1`
  (or `--url` for HTTP), its defaults otherwise (3 replays, concurrency 1, `--sandbox auto`, so the
  server is sandboxed where namespaces work, as for a user). Counted: report.json `calls`; timed: the
  process's wall time from spawn to exit (start-up, the sandbox, discovery, fuzzing, verification and
  outputs included; fuzzgate's budget is one deadline for all of them).
- **bare**: a fresh interpreter that imports `mcp`, connects `mcp.Client` to the same server command
  (or URL) and calls `call_tool("ping_fast", {"n": i})` in a tight loop; counted: the calls finished
  before spawn + 12 s (its start-up and connecting inside the window).
- For HTTP the bench starts the server on a free 127.0.0.1 port before either process and stops it
  after; its start-up is in neither window.

Rounds are interleaved: every round measures every transport, bare and fuzzgate back to back, the
order flipped each round. The ratio is fuzzgate calls / bare calls per round; the table gives the
median over the rounds. Results: bench/.work/results/wholerun.json.

`--profile DIR` runs two whole runs (the first transport; `--trace` into DIR): one in-process with
every thread's stack sampled every 5 ms (`wholerun.py _sample`: own and inclusive sample counts
before and after the first call, and the CPU time of fuzzgate and of its reaped children), one
under `python -m cProfile -o DIR/fuzzgate.prof`; and prints both.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from procs import (
    EXAMPLES,
    PYTHON,
    RESULTS,
    WORK,
    free_port,
    fuzzgate_version,
    http_server,
    log,
    run_fuzzgate,
    save_json,
)

FAST_SERVER = EXAMPLES / "fast_server.py"
RESULT = RESULTS / "wholerun.json"


# ------------------------------------------------------------------------------- the bare loop


async def _bare_loop(target: Any, deadline: float, replayed: list[dict[str, Any]] | None) -> dict[str, Any]:
    """`replayed`: the arguments to send, in order and round again, instead of `{"n": i}` (a
    fuzzgate run's own, from its trace: what they cost the server, with no fuzzer's work around
    them); a call the SDK or the server refuses still counts, as it reached the server."""
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    spawned = deadline - float(os.environ["WHOLERUN_SECONDS"])
    calls = 0
    async with Client(target) as client:
        connected = time.time() - spawned
        while True:
            arguments = replayed[calls % len(replayed)] if replayed else {"n": calls}
            with contextlib.suppress(MCPError):
                await client.session.call_tool("ping_fast", arguments)
            if time.time() > deadline:
                break
            calls += 1
    return {"calls": calls, "connected_s": round(connected, 3)}


def _bare_main(ns: argparse.Namespace) -> None:
    """`wholerun.py _bare ...`: one bare measurement in a fresh interpreter; prints JSON."""
    import anyio
    from mcp import StdioServerParameters

    target: Any = ns.url if ns.url else StdioServerParameters(command=ns.server[0], args=ns.server[1:])
    replayed = json.loads(Path(ns.arguments).read_text()) if ns.arguments else None
    print(json.dumps(anyio.run(_bare_loop, target, ns.deadline, replayed)))


def bare(transport: str, seconds: float, url: str | None, arguments: Path | None = None) -> dict[str, Any]:
    """`arguments`: a JSON list of argument objects to send in turn (`_bare_loop`)."""
    spawned = time.time()
    argv = [PYTHON, __file__, "_bare", "--deadline", repr(spawned + seconds)]
    argv += ["--arguments", str(arguments)] if arguments else []
    argv += ["--url", url] if url else ["--server", PYTHON, str(FAST_SERVER)]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 120, check=False,
                         env={**os.environ, "WHOLERUN_SECONDS": repr(seconds)})  # fmt: skip
    if out.returncode != 0:
        raise RuntimeError(f"bare loop failed: {out.stderr[-2000:]}")
    return {**json.loads(out.stdout.strip().splitlines()[-1]), "wall_s": round(time.time() - spawned, 2)}


# ------------------------------------------------------------------------------- fuzzgate


def _fuzzgate_args(seconds: float, tmp: Path, url: str | None, sandbox: str) -> list[str]:
    target = ["--url", url] if url else ["--command", PYTHON, f"--arg={FAST_SERVER}"]
    return [*target, "--budget", f"{seconds:g}s", "--seed", "1", "--baseline", str(tmp / "baseline"),
            "--sandbox", sandbox]  # fmt: skip


def fuzzgate(seconds: float, url: str | None, sandbox: str) -> dict[str, Any]:
    WORK.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=WORK) as name:
        tmp = Path(name)
        run = run_fuzzgate(_fuzzgate_args(seconds, tmp, url, sandbox), tmp / "out", cwd=tmp, timeout_s=seconds + 300)
    if run.report is None:
        raise RuntimeError(f"fuzzgate run failed (exit {run.exit_code}):\n{run.output[-3000:]}")
    return {
        "calls": run.report["calls"],
        "wall_s": round(run.wall_s, 2),
        "duration_s": run.report["duration_s"],
        "first_line_s": round(run.started_at or 0.0, 2),
        "first_progress_s": round(run.progress[0][0], 2) if run.progress else None,
        "exit_code": run.exit_code,
        "containment": run.report.get("containment"),
        "findings": [f"{f['kind']} in {f['name']}" for f in run.report["findings"]],
    }


# ------------------------------------------------------------------------------- the experiment


def measure(rounds: int, seconds: float, transports: list[str], sandbox: str) -> dict[str, Any]:
    cells: dict[str, dict[str, list[Any]]] = {t: {"bare": [], "fuzzgate": [], "load": []} for t in transports}
    for r in range(rounds):
        for transport in transports:
            order = ("bare", "fuzzgate") if r % 2 == 0 else ("fuzzgate", "bare")
            for who in order:
                cells[transport]["load"].append(round(os.getloadavg()[0], 2))
                url = None
                if transport == "http":
                    port = free_port()
                    with http_server([PYTHON, str(FAST_SERVER), "--transport", "http", "--port", str(port)],
                                     port) as url:  # fmt: skip
                        m = bare(transport, seconds, url) if who == "bare" else fuzzgate(seconds, url, sandbox)
                else:
                    m = bare(transport, seconds, None) if who == "bare" else fuzzgate(seconds, None, sandbox)
                cells[transport][who].append(m)
                log(f"round {r + 1} {transport} {who}: {m['calls']} calls in {m['wall_s']} s wall")
    out = []
    for transport, c in cells.items():
        ratios = [f["calls"] / b["calls"] for f, b in zip(c["fuzzgate"], c["bare"], strict=True) if b["calls"]]
        out.append({
            "transport": transport,
            "bare": c["bare"],
            "fuzzgate": c["fuzzgate"],
            "loadavg_1m": c["load"],
            "ratios": [round(x, 3) for x in ratios],
            "ratio_median": round(statistics.median(ratios), 3) if ratios else 0.0,
            "bare_calls_median": statistics.median(b["calls"] for b in c["bare"]),
            "fuzzgate_calls_median": statistics.median(f["calls"] for f in c["fuzzgate"]),
            "fuzzgate_wall_median": statistics.median(f["wall_s"] for f in c["fuzzgate"]),
        })  # fmt: skip
    return {"cells": out}


def section(data: dict[str, Any]) -> list[str]:
    """The subsection of docs/benchmarks.md §1."""
    s = data["settings"]
    out = [
        f"### Whole runs of {s['seconds']:g} s",
        "",
        f"`bench/wholerun.py` ({data.get('started', '?')[:16]}, fuzzgate at git {data.get('git', '?')}): a whole "
        f"`fuzzgate run --budget {s['seconds']:g}s --seed 1` (its defaults otherwise: 3 replays, one call at a "
        f"time, `--sandbox {s['sandbox']}`) against the fast server, timed from spawn to exit (start-up, sandbox, "
        "discovery, fuzzing, verification and outputs included), against a bare `mcp.Client` + `call_tool` loop "
        f"in a fresh interpreter counting the calls it finishes within {s['seconds']:g} s of its spawn (imports "
        f"and connecting included). {s['rounds']} interleaved rounds; the ratio is fuzzgate calls / bare calls, "
        "median of the per-round ratios. Aim: ≥ 0.8.",
        "",
    ]
    rows = []
    for c in data["cells"]:
        rows.append([
            c["transport"], f"{c['bare_calls_median']:,.0f}", f"{c['fuzzgate_calls_median']:,.0f}",
            f"**{c['ratio_median']:.2f}**", " / ".join(f"{x:.2f}" for x in c["ratios"]),
            " / ".join(f"{f['wall_s']:.1f}" for f in c["fuzzgate"]),
            " / ".join(f"{f['first_progress_s']}" for f in c["fuzzgate"]),
            " / ".join(f"{b['connected_s']:.2f}" for b in c["bare"]),
            " / ".join(str(x) for x in c["loadavg_1m"]),
        ])  # fmt: skip
    header = ["transport", "bare calls", "fuzzgate calls", "ratio", "ratio per round", "fuzzgate wall s",
              "fuzzgate first call at s", "bare connected at s", "load avg (1 min)"]  # fmt: skip
    out += ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return out


# ------------------------------------------------------------------------------- profiling

SAMPLE_EVERY_S = 0.005
TIMED = (
    "fuzzgate.engine.execute:contain", "fuzzgate.engine.execute:discover", "fuzzgate.engine.execute:probe_server",
    "fuzzgate.engine.execute:select", "fuzzgate.engine.verdict:observe",
    "fuzzgate.engine.steps:call_and_follow", "fuzzgate.sandbox.workspace:Layer.snapshot",
    "fuzzgate.plan.selection:ToolPlan.case",
    "fuzzgate.generate._worker:GenerationWorker.request", "fuzzgate.generate._worker:GenerationWorker.warm_up",
    "fuzzgate.learn.feed:Feed.seen", "fuzzgate.learn.feed:Feed.override", "fuzzgate.learn.feed:Feed.after_call",
    "fuzzgate.learn.feed:Feed.next_chain_case", "fuzzgate.report.console:ConsoleReporter.__call__",
    "fuzzgate.report.trace:TraceWriter.__call__",
)  # fmt: skip
"""Functions `_sample` times (count, total, first start, last end); a name that does not exist is skipped."""


def _time_functions(started: float) -> dict[str, dict[str, float]]:
    """Wrap every TIMED function that exists in place; returns the live table of its timings."""
    import functools
    import importlib
    import inspect

    table: dict[str, dict[str, float]] = {}
    for spec in TIMED:
        module_name, _, path = spec.partition(":")
        owner: Any = importlib.import_module(module_name)
        *parents, attr = path.split(".")
        for part in parents:
            owner = getattr(owner, part, None)
        original = getattr(owner, attr, None) if owner is not None else None
        if original is None:
            continue
        row = table.setdefault(spec, {"count": 0, "total_s": 0.0, "first_s": -1.0, "last_s": 0.0})

        def note(begin: float, row: dict[str, float] = row) -> None:
            end = time.monotonic()
            row["count"] += 1
            row["total_s"] += end - begin
            row["first_s"] = begin - started if row["first_s"] < 0 else row["first_s"]
            row["last_s"] = end - started

        if inspect.iscoroutinefunction(original):

            @functools.wraps(original)
            async def timed_async(*a: Any, __f: Any = original, __note: Any = note, **k: Any) -> Any:
                begin = time.monotonic()
                try:
                    return await __f(*a, **k)
                finally:
                    __note(begin)

            setattr(owner, attr, timed_async)
        else:

            @functools.wraps(original)
            def timed(*a: Any, __f: Any = original, __note: Any = note, **k: Any) -> Any:
                begin = time.monotonic()
                try:
                    return __f(*a, **k)
                finally:
                    __note(begin)

            setattr(owner, attr, timed)
    return table


def _short(filename: str) -> str:
    for marker in ("/fuzzgate/", "/site-packages/", "/lib/python3.11/"):
        if marker in filename:
            return filename.split(marker, 1)[1].removesuffix(".py")
    return Path(filename).stem


def _sample_main(out: Path, args: list[str]) -> None:
    """`wholerun.py _sample OUT ARGS...`: `fuzzgate ARGS` in this process with every thread's stack
    sampled every 5 ms; writes the samples' aggregates (and the CPU time of this process and of its
    reaped children: the generation worker, the server) to OUT as JSON."""
    import resource
    import threading
    from collections import Counter

    started = time.monotonic()
    samples: list[tuple[float, str, tuple[str, ...]]] = []
    stop = threading.Event()

    def sampler() -> None:
        me = threading.get_ident()
        while not stop.wait(SAMPLE_EVERY_S):
            now = time.monotonic() - started
            names = {t.ident: t.name for t in threading.enumerate()}
            for ident, frame in sys._current_frames().items():
                if ident == me:
                    continue
                stack: list[str] = []
                f: Any = frame
                while f is not None:
                    stack.append(f"{_short(f.f_code.co_filename)}:{f.f_code.co_name}")
                    f = f.f_back
                samples.append((now, names.get(ident, "?"), tuple(reversed(stack))))

    from fuzzgate.cli.main import main as fuzzgate_main

    imported_s = time.monotonic() - started
    timings = _time_functions(started)
    thread = threading.Thread(target=sampler, name="sampler", daemon=True)
    thread.start()

    try:
        code = fuzzgate_main(args)
    finally:
        stop.set()
        thread.join()
    wall = time.monotonic() - started
    sent = timings.get("fuzzgate.engine.steps:call_and_follow", {})
    first_call = sent["first_s"] if sent.get("count") else wall

    def aggregate(rows: list[tuple[float, str, tuple[str, ...]]]) -> dict[str, Any]:
        own: Counter[str] = Counter()
        inclusive: Counter[str] = Counter()
        for _, name, stack in rows:
            own[f"{name}: {stack[-1]}"] += 1
            for frame in set(stack):
                if not frame.startswith(("threading:", "runpy:", "wholerun:")):
                    inclusive[f"{name}: {frame}"] += 1
        return {"samples": len(rows), "own": own.most_common(30), "inclusive": inclusive.most_common(60)}

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    result = {
        "exit_code": code,
        "wall_s": round(wall, 2),
        "first_call_s": round(first_call, 2),
        "sample_every_s": SAMPLE_EVERY_S,
        "cpu_self_s": round(me.ru_utime + me.ru_stime, 2),
        "cpu_children_s": round(kids.ru_utime + kids.ru_stime, 2),
        "cli_imported_s": round(imported_s, 2),
        "timed": {k: {n: round(v, 4) for n, v in row.items()} for k, row in timings.items()},
        "before_first_call": aggregate([r for r in samples if r[0] < first_call]),
        "after_first_call": aggregate([r for r in samples if r[0] >= first_call]),
    }
    out.write_text(json.dumps(result, indent=1))


def profile(out_dir: Path, seconds: float, transport: str, sandbox: str) -> None:
    """One whole run with its stacks sampled (`_sample`), and one under cProfile, each with its trace;
    prints where the time went."""
    out_dir = out_dir.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    WORK.mkdir(parents=True, exist_ok=True)
    for how in ("sample", "cprofile"):
        with tempfile.TemporaryDirectory(dir=WORK) as name:
            tmp = Path(name)

            def run(url: str | None, how: str = how, tmp: Path = tmp) -> subprocess.CompletedProcess[str]:
                trace = out_dir / f"trace-{how}.jsonl"
                args = ["run", *_fuzzgate_args(seconds, tmp, url, sandbox), "--trace", str(trace),
                        "--out", str(tmp / "out")]  # fmt: skip
                if how == "sample":
                    argv = [PYTHON, __file__, "_sample", str(out_dir / "samples.json"), *args]
                else:
                    argv = [PYTHON, "-m", "cProfile", "-o", str(out_dir / "fuzzgate.prof"), "-m", "fuzzgate", *args]
                return subprocess.run(argv, cwd=tmp, capture_output=True, text=True, check=False,
                                      env={**os.environ, "COLUMNS": "200"})  # fmt: skip

            started = time.monotonic()
            if transport == "http":
                port = free_port()
                argv = [PYTHON, str(FAST_SERVER), "--transport", "http", "--port", str(port)]
                with http_server(argv, port) as url:
                    done = run(url)
            else:
                done = run(None)
            wall = time.monotonic() - started
            report_file = tmp / "out" / "report.json"
            report = json.loads(report_file.read_text()) if report_file.exists() else {}
        (out_dir / f"console-{how}.txt").write_text(done.stdout + done.stderr)
        print(f"== {how}: wall {wall:.2f} s, calls {report.get('calls')}, duration_s {report.get('duration_s')}")
    data = json.loads((out_dir / "samples.json").read_text())
    print(f"sampled run: wall {data['wall_s']} s, first call at {data['first_call_s']} s, CPU: fuzzgate "
          f"{data['cpu_self_s']} s, its reaped children (generation worker, server) "
          f"{data['cpu_children_s']} s")  # fmt: skip
    print(f"fuzzgate.cli.main imported at {data['cli_imported_s']} s (sampling starts then); timed functions "
          "(calls, total s, first start s, last end s; nested and concurrent times overlap):")  # fmt: skip
    for name, row in data["timed"].items():
        print(f"  {name:60s} {row['count']:6.0f} {row['total_s']:8.3f} {row['first_s']:8.3f} {row['last_s']:8.3f}")
    for phase in ("before_first_call", "after_first_call"):
        agg = data[phase]
        print(f"\n-- {phase}: {agg['samples']} samples (all threads)")
        print("own:")
        for frame, n in agg["own"][:20]:
            print(f"  {n:6d}  {frame}")
        print("inclusive:")
        for frame, n in agg["inclusive"][:45]:
            print(f"  {n:6d}  {frame}")
    print("\n== cProfile (its overhead slows the Python-heavy parts most; read proportions, not times)")
    stats = pstats.Stats(str(out_dir / "fuzzgate.prof"), stream=sys.stdout)
    stats.sort_stats("cumulative").print_stats(40)
    stats.sort_stats("tottime").print_stats(25)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "_sample":
        _sample_main(Path(sys.argv[2]), sys.argv[3:])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "_bare":
        p = argparse.ArgumentParser()
        p.add_argument("_bare")
        p.add_argument("--deadline", type=float, required=True)
        p.add_argument("--url")
        p.add_argument("--arguments")
        p.add_argument("--server", nargs="+")
        _bare_main(p.parse_args())
        return
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--quick", action="store_true", help="one round")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seconds", type=float, default=12.0)
    p.add_argument("--transports", default="stdio,http")
    p.add_argument("--sandbox", default="auto", choices=("auto", "required", "off"))
    p.add_argument("--out", type=Path, default=RESULT)
    p.add_argument("--markdown", type=Path, nargs="?", const=RESULT, help="print the §1 subsection of a result file")
    p.add_argument("--profile", type=Path, metavar="DIR", help="profile one whole run instead (first transport)")
    ns = p.parse_args()
    if ns.markdown:
        print("\n".join(section(json.loads(ns.markdown.read_text()))))
        return
    if ns.quick:
        ns.rounds = 1
    if ns.profile:
        profile(ns.profile, ns.seconds, ns.transports.split(",")[0], ns.sandbox)
        return
    git = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=EXAMPLES, capture_output=True, text=True,
                         check=False).stdout.strip()  # fmt: skip
    result: dict[str, Any] = {
        "settings": {"rounds": ns.rounds, "seconds": ns.seconds, "sandbox": ns.sandbox},
        "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "git": git,
        "fuzzgate_version": fuzzgate_version(),
    }
    result |= measure(ns.rounds, ns.seconds, ns.transports.split(","), ns.sandbox)
    result["finished"] = time.strftime("%Y-%m-%d %H:%M:%S %z")
    save_json(ns.out, result)
    print("\n".join(section(result)))
    log(f"wrote {ns.out}")


if __name__ == "__main__":
    main()
