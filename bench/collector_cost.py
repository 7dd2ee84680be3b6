"""The coverage collector's cost on the call rate of a Python server.

    python bench/collector_cost.py [--seconds 10] [--rounds 3] [--tool add] [--sandbox off|auto]
                                   [--server PATH] [--python PATH] [--every 8] [--out FILE]

The same server (default `examples/servers/buggy_server.py`, its fast clean tool `add`) is called
one call at a time for `--seconds` through fuzzgate's own connection (`open_connection`,
`call_tool`, as the engine calls it) in three modes, a fresh server each time:

- `behaviour`: `feedback = "behaviour"`, no collector (the baseline);
- `tracer`: the collector injected, never asked (what coverage.py's tracer alone costs);
- `collect`: the collector injected and `collect()` after every call (what a run pays);
- `sampled`: what a run pays on a tool's coverage plateau (`fuzzgate.learn.sampling`): one call in
  `--every` measured (`measure(True)` before it, `collect()` after it), the others not
  (`measure(False)`: a collector that can switch off does, else their collects are skipped).

Rounds are interleaved (every round measures every mode, the order rotated each round) so that
load from elsewhere on the machine falls on all modes alike. Printed: each measurement, then the
median rate per mode and its ratio to `behaviour` (the cost is `1 - ratio`), and the median of each
round's ratio, and the CPU time per call of the server (from /proc, the collector's thread
included) and of fuzzgate's side: on a loaded machine the CPU times are the steadier figures. All of it goes to one
JSON file, default bench/.work/results/collector_cost.json.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from procs import EXAMPLES, RESULTS, log, save_json

from fuzzgate.config.model import Config, FeedbackMode, SandboxMode, TargetConfig, TargetKind
from fuzzgate.config.views import ServerSettings
from fuzzgate.model.outcome import OutcomeStatus
from fuzzgate.sandbox.containment import contain
from fuzzgate.target.call import call_tool
from fuzzgate.target.connection import open_connection

MODES = ("behaviour", "tracer", "collect", "sampled")
ARGUMENTS = {"add": {"a": 2, "b": 40}, "echo": {"text": "hello"}}


async def _measure(config: Config, mode: str, tool: str, seconds: float, every: int) -> dict[str, Any]:
    containment = contain(config.target, 1)
    assert containment is not None
    arguments = ARGUMENTS.get(tool, {})
    try:
        async with open_connection(ServerSettings.of(config), containment=containment) as connection:
            channel = connection.coverage
            if mode != "behaviour" and channel is None:
                raise SystemExit(f"the collector did not start: {connection.feedback_note}")
            for _ in range(20):  # warm-up, not counted
                await call_tool(connection, tool, arguments, 10)
            if channel is not None:
                await channel.collect(5)
            calls = arcs = collected_calls = 0
            collect_s = 0.0
            pid = connection.server.pid if connection.server is not None else None
            server_cpu = _cpu_s(pid)
            own_cpu = time.process_time()
            start = time.perf_counter()
            deadline = start + seconds
            while time.perf_counter() < deadline:
                measured = mode == "collect" or (mode == "sampled" and calls % every == 0)
                if mode == "sampled" and channel is not None:
                    await channel.measure(measured, 5)
                outcome = await call_tool(connection, tool, arguments, 10)
                if outcome.status is not OutcomeStatus.OK:
                    raise SystemExit(f"{tool} failed: {outcome}")
                if measured and channel is not None:
                    collected_calls += 1
                    asked = time.perf_counter()
                    collected = await channel.collect(5)
                    collect_s += time.perf_counter() - asked
                    if collected is None:
                        raise SystemExit(f"collect failed: {channel.failure}")
                    arcs += len(collected.arcs) + len(collected.lines)
                calls += 1
            elapsed = time.perf_counter() - start
            server_cpu = _cpu_s(pid) - server_cpu
            own_cpu = time.process_time() - own_cpu
            note = connection.feedback_note
    finally:
        containment.close()
    return {
        "mode": mode,
        "calls": calls,
        "seconds": elapsed,
        "rate": calls / elapsed,
        "server_cpu_ms": 1000 * server_cpu / calls,
        "fuzzgate_cpu_ms": 1000 * own_cpu / calls,
        "collect_ms": 1000 * collect_s / collected_calls if collected_calls else None,
        "features_per_call": arcs / collected_calls if collected_calls else None,
        "note": note,
        "pause": bool(channel is not None and channel.info is not None and channel.info.pause),
    }


def _cpu_s(pid: int | None) -> float:
    """The CPU time (user + system) the process has used, from /proc: steadier than a call rate on a
    machine others load (0 without a pid, or when the sandbox hides it)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tool", default="add")
    parser.add_argument("--sandbox", choices=[m.value for m in SandboxMode], default="off")
    parser.add_argument("--server", type=Path, default=EXAMPLES / "buggy_server.py")
    parser.add_argument("--python", default=sys.executable, help="the server's interpreter (it needs `mcp`)")
    parser.add_argument("--every", type=int, default=8, help="`sampled`: one call in this many measured")
    parser.add_argument("--out", type=Path, default=RESULTS / "collector_cost.json")
    ns = parser.parse_args()

    # An empty working directory: the server's scope, copied (or overlaid) at every start.
    work = Path(tempfile.mkdtemp(prefix="collector-cost-"))

    def config(mode: str) -> Config:
        feedback = FeedbackMode.BEHAVIOUR if mode == "behaviour" else FeedbackMode.AUTO
        target = TargetConfig(
            kind=TargetKind.STDIO,
            command=ns.python,
            args=(str(ns.server.resolve()),),
            cwd=work,
            sandbox=SandboxMode(ns.sandbox),
            feedback=feedback,
        )
        return Config(target=target)

    measurements: list[dict[str, Any]] = []
    for round_ in range(ns.rounds):
        order = MODES[round_ % len(MODES) :] + MODES[: round_ % len(MODES)]
        for mode in order:
            result = anyio.run(_measure, config(mode), mode, ns.tool, ns.seconds, ns.every)
            result["round"] = round_
            measurements.append(result)
            extra = ""
            if result["collect_ms"] is not None:
                extra = f", collect {result['collect_ms']:.3f} ms/call, {result['features_per_call']:.1f} arcs+lines"
                extra += " (switched off between)" if mode == "sampled" and result["pause"] else ""
            cpu = f", CPU ms/call: server {result['server_cpu_ms']:.3f}, fuzzgate {result['fuzzgate_cpu_ms']:.3f}"
            log(f"round {round_} {mode:9} {result['rate']:7.1f} calls/s ({result['calls']} calls){cpu}{extra}")

    work.rmdir()
    medians = {mode: statistics.median(m["rate"] for m in measurements if m["mode"] == mode) for mode in MODES}
    # On a loaded machine the rate moves from round to round: a round's ratio (its modes measured
    # back to back) moves less than the medians of the rates.
    rates = {(m["round"], m["mode"]): m["rate"] for m in measurements}
    in_round = {
        mode: statistics.median(rates[(r, mode)] / rates[(r, "behaviour")] for r in range(ns.rounds)) for mode in MODES
    }
    cpu = {mode: statistics.median(m["server_cpu_ms"] for m in measurements if m["mode"] == mode) for mode in MODES}
    own = {mode: statistics.median(m["fuzzgate_cpu_ms"] for m in measurements if m["mode"] == mode) for mode in MODES}
    summary = {
        mode: {
            "rate": medians[mode],
            "ratio": medians[mode] / medians["behaviour"],
            "round_ratio": in_round[mode],
            "server_cpu_ms": cpu[mode],
            "fuzzgate_cpu_ms": own[mode],
        }
        for mode in MODES
    }
    for mode in MODES:
        print(
            f"{mode:9} median {medians[mode]:7.1f} calls/s  ratio {summary[mode]['ratio']:.3f}"
            f"  (cost {100 * (1 - summary[mode]['ratio']):.1f}%)  median of the rounds' ratios {in_round[mode]:.3f}"
            f"  server CPU {cpu[mode]:.3f} ms/call ({cpu[mode] / cpu['behaviour']:.2f}x)"
            f"  fuzzgate CPU {own[mode]:.3f} ms/call ({own[mode] / own['behaviour']:.2f}x)"
        )
    notes = sorted({m["note"] for m in measurements})
    print("\n".join(notes))
    save_json(
        ns.out,
        {
            "server": str(ns.server),
            "python": ns.python,
            "tool": ns.tool,
            "seconds": ns.seconds,
            "rounds": ns.rounds,
            "every": ns.every,
            "sandbox": ns.sandbox,
            "measurements": measurements,
            "summary": summary,
        },
    )


if __name__ == "__main__":
    main()
