"""The time box: wall time of whole `fuzzgate run`s against their `--budget`.

    python bench/timebox.py [--quick] [--budgets 20,60] [--out FILE]

Each run is the real CLI, timed from spawning it to its exit (interpreter start, imports, server
start-up, discovery, fuzzing, verification, outputs and exit all count), against servers that
stress one phase each: 1, 100 and 300 trivial tools (generator setup, discovery); the example
server with planted bugs (verification: every finding replayed on fresh servers); hostile schemas
(a catastrophic regex, a huge enum, endless recursion); a tool that hangs in a server that ignores
SIGTERM (tests/servers/leaky.py: hang replays and slow stops). The promise measured: wall time <=
budget + margin, where the margin is the larger of 10 s and 10 % of the budget. The baseline each run is compared with is
its own budget, measured on the same machine in the same run.

`section(data)` renders the Markdown for docs/benchmarks.md (bench/report.py calls it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from procs import EXAMPLES, REPO, RESULTS, SERVERS, log, run_fuzzgate, save_json

TESTS_SERVERS = REPO / "tests" / "servers"
PHASES = ("startup", "discovery", "fuzzing", "verification", "outputs")


def margin_s(budget_s: float) -> float:
    """The documented margin (fuzzgate.plan.budget.margin_s; restated so report.py needs no fuzzgate)."""
    return max(10.0, 0.1 * budget_s)


def cases(work: Path) -> list[tuple[str, int | None, list[str], dict[str, str]]]:
    py = sys.executable
    many = str(SERVERS / "many_tools.py")
    out: list[tuple[str, int | None, list[str], dict[str, str]]] = [
        (f"{n} trivial tool{'s' if n > 1 else ''}", n, ["--command", py, f"--arg={many}", "--arg=--tools", f"--arg={n}"], {})
        for n in (1, 100, 300)
    ]
    out.append(("example with planted bugs", None, ["--command", py, f"--arg={EXAMPLES / 'buggy_server.py'}"], {}))
    out.append(("hostile schemas", 4, ["--command", py, f"--arg={TESTS_SERVERS / 'hostile_schemas.py'}"], {}))
    pids = work / "leaky-pids"
    pids.mkdir(parents=True, exist_ok=True)
    leaky = [f"--arg={TESTS_SERVERS / 'leaky.py'}", "--arg=--marker", "--arg=fuzzgate-timebox", "--arg=--pid-prefix"]
    stubborn = [*leaky, f"--arg={pids}/", "--arg=--ignore-sigterm", "--include", "hang", "--timeout", "2s"]
    out.append(("SIGTERM-ignoring hang", 1, ["--command", py, *stubborn], {}))
    return out


def measure(budgets: list[float], work: Path) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    for label, tools, args, env in cases(work):
        for budget in budgets:
            out = work / f"{label.replace(' ', '-')}-{budget:g}"
            log(f"timebox: {label}, budget {budget:g}s")
            markers = out / "markers"
            markers.mkdir(parents=True, exist_ok=True)
            run = run_fuzzgate(
                [*args, "--budget", f"{budget:g}s", "--seed", "7"],
                out,
                cwd=out,
                env={"FUZZGATE_EXAMPLE_MARKER_DIR": str(markers), **env},
                timeout_s=budget * 3 + 120,
            )
            report = run.report or {}
            entries = report.get("entries", [])
            rows.append(
                {
                    "server": label,
                    "tools": tools if tools is not None else len(entries),
                    "budget_s": budget,
                    "wall_s": round(run.wall_s, 2),
                    "exit_code": run.exit_code,
                    "timing": report.get("timing", {}),
                    "calls": report.get("calls", 0),
                    "tools_reached": sum(1 for e in entries if e.get("cases", 0) > 0),
                    "skipped": sum(1 for e in entries if e.get("status") == "skipped"),
                    "findings": len(report.get("findings", [])),
                    "unconfirmed": sum(1 for f in report.get("findings", []) if f.get("unconfirmed")),
                    "notes": report.get("notes", []),
                }
            )
    return {"budgets": budgets, "runs": rows}


def section(data: dict[str, Any] | None) -> list[str]:
    lines = ["## 5. The time box: wall time against the budget", ""]
    if not data:
        return [*lines, "_Not measured in this run (bench/timebox.py)._", ""]
    lines += [
        "Whole `fuzzgate run` processes, timed from spawning the CLI to its exit, against `--budget`; the",
        "documented promise is wall time <= budget + margin (the larger of 10 s and 10 %). Phase ends are",
        "report.json `timing`, in seconds since the process started.",
        "",
        "| server | tools | budget | wall | wall / budget | within margin | startup | discovery | fuzzing "
        "| verification | outputs | calls | tools reached | findings (unconfirmed) |",
        "| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in data["runs"]:
        t = r["timing"]
        within = r["wall_s"] <= r["budget_s"] + margin_s(r["budget_s"])
        marks = " | ".join(f"{t[p]:.1f}" if p in t else "-" for p in PHASES)
        lines.append(
            f"| {r['server']} | {r['tools']} | {r['budget_s']:g} s | {r['wall_s']:.1f} s | "
            f"{r['wall_s'] / r['budget_s']:.2f} | {'yes' if within else '**no**'} | {marks} | {r['calls']} | "
            f"{r['tools_reached']} | {r['findings']} ({r['unconfirmed']}) |"
        )
    notes = sorted({n for r in data["runs"] for n in r["notes"]})
    if notes:
        lines += ["", "What the runs said they cut short:", ""] + [f"- {n}" for n in notes]
    return [*lines, ""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="one 10 s budget")
    parser.add_argument("--budgets", default="20,60", help="comma-separated budgets in seconds")
    parser.add_argument("--out", type=Path, default=RESULTS / "timebox.json")
    parser.add_argument("--markdown", action="store_true", help="also print the Markdown section")
    ns = parser.parse_args()
    budgets = [10.0] if ns.quick else [float(b) for b in ns.budgets.split(",")]
    data = measure(budgets, (ns.out.parent / "timebox").resolve())
    save_json(ns.out, data)
    if ns.markdown:
        print("\n".join(section(data)))


if __name__ == "__main__":
    main()
