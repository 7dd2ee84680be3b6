"""Throughput against the limit: fuzzgate's calls/s next to a bare `mcp` SDK client loop.

    python bench/throughput.py [--quick] [--rounds 3] [--seconds 10] [--concurrency 8]
                               [--memory-seconds 600] [--out FILE]

Three measurements, written as one JSON file (default bench/.work/results/throughput.json):

1. rates: for stdio and streamable HTTP, one call at a time and `--concurrency` in flight, the bare
   SDK loop (`mcp.Client(...).session.call_tool` in a tight loop, or N such loops in an anyio task
   group) and `fuzzgate run` (the real CLI), interleaved: every round measures every cell, bare and
   fuzzgate back to back, the order flipped each round. Each measurement gets a fresh server
   (`examples/servers/fast_server.py`, one tool that answers at once). HTTP servers listen on a free
   127.0.0.1 port.
2. tools: the same, stdio one at a time, against `bench/servers/many_tools.py` with 1, 10 and 100
   tools (the bare loop round-robins over the tools, as fuzzgate's scheduler does).
3. memory: one long `fuzzgate run` (`--memory-seconds`) with fuzzgate's and the server's RSS
   sampled from /proc once a second.

For fuzzgate two rates are kept: the loop rate (calls between its first progress line and the end
of fuzzing, see `procs.FuzzgateRun.loop_rate`) compares with the bare loop, which also excludes
connecting; the run rate is report.json's `calls / duration_s`, start-up and discovery included.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from procs import EXAMPLES, PYTHON, RESULTS, SERVERS, WORK, free_port, http_server, log, run_fuzzgate, save_json

FAST_SERVER = EXAMPLES / "fast_server.py"
MANY_TOOLS = SERVERS / "many_tools.py"


# ------------------------------------------------------------------------------- the bare loop


async def _bare_loop(target: Any, tools: list[str], seconds: float, concurrency: int) -> dict[str, float]:
    import anyio
    from mcp import Client

    async with Client(target) as client:
        session = client.session
        await session.call_tool(tools[0], {"n": 0})  # warm-up, not counted
        count = 0
        start = time.perf_counter()
        deadline = start + seconds

        async def worker(first: int) -> None:
            nonlocal count
            i = first
            while time.perf_counter() < deadline:
                await session.call_tool(tools[i % len(tools)], {"n": i})
                count += 1
                i += concurrency

        async with anyio.create_task_group() as tg:
            for w in range(concurrency):
                tg.start_soon(worker, w)
        elapsed = time.perf_counter() - start
    return {"calls": count, "seconds": elapsed, "rate": count / elapsed}


def _bare_main(ns: argparse.Namespace) -> None:
    """`throughput.py _bare ...`: one bare measurement in a fresh interpreter; prints JSON."""
    import anyio
    from mcp import StdioServerParameters

    tools = ns.tools.split(",")
    target: Any = ns.url if ns.url else StdioServerParameters(command=ns.server[0], args=ns.server[1:])
    print(json.dumps(anyio.run(_bare_loop, target, tools, ns.seconds, ns.concurrency)))


def bare(server: list[str], transport: str, tools: list[str], seconds: float, concurrency: int) -> float:
    def measure(url: str | None) -> float:
        argv = [PYTHON, __file__, "_bare", "--seconds", str(seconds), "--concurrency", str(concurrency)]
        argv += ["--tools", ",".join(tools)]
        argv += ["--url", url] if url else ["--server", *server]
        out = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 120, check=False)
        if out.returncode != 0:
            raise RuntimeError(f"bare loop failed: {out.stderr[-2000:]}")
        return float(json.loads(out.stdout.strip().splitlines()[-1])["rate"])

    if transport == "stdio":
        return measure(None)
    port = free_port()
    with http_server([*server, "--transport", "http", "--port", str(port)], port) as url:
        return measure(url)


# ------------------------------------------------------------------------------- fuzzgate's loop


def fuzzgate(
    server: list[str], transport: str, seconds: float, concurrency: int, *, sample_rss: bool = False
) -> dict[str, Any]:
    flags = ["--budget", f"{seconds:g}s", "--seed", "1", "--replays", "0", "--concurrency", str(concurrency)]
    with tempfile.TemporaryDirectory(dir=WORK) as tmp:
        out = Path(tmp) / "out"
        flags += ["--baseline", str(Path(tmp) / "baseline")]
        if transport == "stdio":
            target = ["--command", server[0], *(f"--arg={arg}" for arg in server[1:])]
            run = run_fuzzgate([*target, *flags], out, cwd=Path(tmp), sample_rss=sample_rss, timeout_s=seconds + 300)
        else:
            port = free_port()
            with http_server([*server, "--transport", "http", "--port", str(port)], port) as url:
                run = run_fuzzgate(["--url", url, *flags], out, cwd=Path(tmp), sample_rss=sample_rss)
    if run.report is None:
        raise RuntimeError(f"fuzzgate run failed (exit {run.exit_code}):\n{run.output[-3000:]}")
    findings = [f"{f['kind']} in {f['name']}" for f in run.report["findings"]]
    return {
        "loop_rate": run.loop_rate,
        "run_rate": run.run_rate,
        "calls": run.report["calls"],
        "duration_s": run.report["duration_s"],
        "wall_s": run.wall_s,
        "exit_code": run.exit_code,
        "findings": findings,
        "peak_rss_kib": run.peak_rss_kib,
        "server_peak_rss_kib": run.server_peak_rss_kib,
        "rss_samples": run.rss_samples,
    }


# ------------------------------------------------------------------------------- the experiments


def _summary(bare_rates: list[float], fg: list[dict[str, Any]]) -> dict[str, Any]:
    loop = [r["loop_rate"] for r in fg]
    run = [r["run_rate"] for r in fg]
    bare_median = statistics.median(bare_rates)
    paired = [f / b for f, b in zip(loop, bare_rates, strict=True) if b]
    return {
        "ratio_loop_paired": statistics.median(paired) if paired else 0.0,
        "bare": bare_rates,
        "fuzzgate_loop": loop,
        "fuzzgate_run": run,
        "bare_median": bare_median,
        "fuzzgate_loop_median": statistics.median(loop),
        "fuzzgate_run_median": statistics.median(run),
        "ratio_loop": statistics.median(loop) / bare_median if bare_median else 0.0,
        "ratio_run": statistics.median(run) / bare_median if bare_median else 0.0,
        "fuzzgate_findings": sorted({f for r in fg for f in r["findings"]}),
    }


def rates(rounds: int, seconds: float, concurrency: int) -> list[dict[str, Any]]:
    server = [PYTHON, str(FAST_SERVER)]
    cells = [(t, c) for t in ("stdio", "http") for c in (1, concurrency)]
    bare_rates: dict[tuple[str, int], list[float]] = {cell: [] for cell in cells}
    fg_runs: dict[tuple[str, int], list[dict[str, Any]]] = {cell: [] for cell in cells}
    loads: dict[tuple[str, int], list[float]] = {cell: [] for cell in cells}
    for r in range(rounds):
        for transport, conc in cells:
            order = ("bare", "fuzzgate") if r % 2 == 0 else ("fuzzgate", "bare")
            for who in order:
                loads[(transport, conc)].append(os.getloadavg()[0])
                if who == "bare":
                    rate = bare(server, transport, ["ping_fast"], seconds, conc)
                    bare_rates[(transport, conc)].append(rate)
                    log(f"round {r + 1} {transport} c={conc} bare: {rate:.0f} calls/s")
                else:
                    fg = fuzzgate(server, transport, seconds, conc)
                    fg_runs[(transport, conc)].append(fg)
                    log(
                        f"round {r + 1} {transport} c={conc} fuzzgate: loop {fg['loop_rate']:.0f}, "
                        f"run {fg['run_rate']:.0f} calls/s"
                    )
    return [
        {"transport": t, "concurrency": c, "loadavg_1m": loads[(t, c)], **_summary(bare_rates[(t, c)], fg_runs[(t, c)])}
        for t, c in cells
    ]


def tool_counts(rounds: int, seconds: float, counts: tuple[int, ...]) -> list[dict[str, Any]]:
    results = []
    bare_rates: dict[int, list[float]] = {n: [] for n in counts}
    fg_runs: dict[int, list[dict[str, Any]]] = {n: [] for n in counts}
    for r in range(rounds):
        for n in counts:
            server = [PYTHON, str(MANY_TOOLS), "--tools", str(n)]
            tools = [f"ping_{i}" for i in range(n)]
            order = ("bare", "fuzzgate") if r % 2 == 0 else ("fuzzgate", "bare")
            for who in order:
                if who == "bare":
                    bare_rates[n].append(bare(server, "stdio", tools, seconds, 1))
                else:
                    fg_runs[n].append(fuzzgate(server, "stdio", seconds, 1))
            fg_rate = fg_runs[n][-1]["loop_rate"]
            log(f"round {r + 1} {n} tools: bare {bare_rates[n][-1]:.0f}, fuzzgate loop {fg_rate:.0f}")
    for n in counts:
        results.append({"tools": n, **_summary(bare_rates[n], fg_runs[n])})
    return results


def memory(seconds: float) -> dict[str, Any]:
    log(f"memory run: fuzzgate for {seconds:g}s on the fast server (stdio)")
    fg = fuzzgate([PYTHON, str(FAST_SERVER)], "stdio", seconds, 1, sample_rss=True)
    samples = fg["rss_samples"]
    # RSS at about 10%, 50% and 100% of the run shows growth, not just the peak.
    marks = {}
    for fraction in (0.1, 0.5, 1.0):
        at = [s for s in samples if s[0] <= fraction * fg["wall_s"]]
        if at:
            marks[f"{int(fraction * 100)}%"] = {"t": at[-1][0], "fuzzgate_kib": at[-1][1], "server_kib": at[-1][2]}
    return {
        "seconds": seconds,
        "calls": fg["calls"],
        "run_rate": fg["run_rate"],
        "peak_rss_kib": fg["peak_rss_kib"],
        "server_peak_rss_kib": fg["server_peak_rss_kib"],
        "marks": marks,
        "samples": samples,
    }


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_bare":
        p = argparse.ArgumentParser()
        p.add_argument("_bare")
        p.add_argument("--seconds", type=float, required=True)
        p.add_argument("--concurrency", type=int, required=True)
        p.add_argument("--tools", required=True)
        p.add_argument("--url")
        p.add_argument("--server", nargs="+")
        _bare_main(p.parse_args())
        return
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--quick", action="store_true", help="1 round of 8 s, 1 and 10 tools, a 10 s memory run")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seconds", type=float, default=10.0, help="seconds per measurement (fuzzgate's --budget)")
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--memory-seconds", type=float, default=600.0)
    p.add_argument("--tool-counts", default="1,10,100")
    p.add_argument("--skip", action="append", default=[], choices=["rates", "tools", "memory"])
    p.add_argument("--out", type=Path, default=RESULTS / "throughput.json")
    ns = p.parse_args()
    if ns.quick:
        # 8 s, not less: starting the sandbox and the server takes 2-7 s of the budget on a busy machine.
        ns.rounds, ns.seconds, ns.memory_seconds, ns.tool_counts = 1, 8.0, 10.0, "1,10"
    WORK.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {
        "settings": {
            "rounds": ns.rounds,
            "seconds": ns.seconds,
            "concurrency": ns.concurrency,
            "memory_seconds": ns.memory_seconds,
            "quick": ns.quick,
        },
        "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
    }
    if "rates" not in ns.skip:
        result["rates"] = rates(ns.rounds, ns.seconds, ns.concurrency)
        save_json(ns.out, result)
    if "tools" not in ns.skip:
        counts = tuple(int(n) for n in ns.tool_counts.split(","))
        result["tools"] = tool_counts(max(1, ns.rounds - 1), ns.seconds, counts)
        save_json(ns.out, result)
    if "memory" not in ns.skip:
        result["memory"] = memory(ns.memory_seconds)
    result["finished"] = time.strftime("%Y-%m-%d %H:%M:%S %z")
    save_json(ns.out, result)
    log(f"wrote {ns.out}")


if __name__ == "__main__":
    main()
