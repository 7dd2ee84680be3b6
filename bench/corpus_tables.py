"""The Markdown tables of bench/corpus.py's results (`python bench/corpus.py --markdown`): planted bugs
found per feedback mode, coverage and behaviours over time, warm against cold, the collector's cost.
Pure functions of the results JSON."""

from __future__ import annotations

import statistics
from collections import Counter
from typing import Any

from scoring import ADVISORY_CATEGORIES

MODES = ("off", "behaviour", "auto", "mcp-fuzzer")


def _spread(given: list[float | int | None]) -> str:
    values = [v for v in given if v is not None]
    if not values:
        return "-"
    median = statistics.median(values)
    text = f"{median:.0f}"
    return text + (f" ({min(values):.0f}–{max(values):.0f})" if len(values) > 1 and min(values) != max(values) else "")


def markdown(result: dict[str, Any]) -> str:
    from servers.catalog import BUGS

    runs = result["runs"]
    out: list[str] = []
    s = result["settings"]
    out += [f"Budget {s['budget']:g} s (real servers {s['real_budget']:g} s), {s['seeds']} seed(s) "
            f"({s['real_seeds']} on real servers); {result.get('started', '')[:16]}.", ""]  # fmt: skip
    planted = [r for r in runs if r["target"] == "nested"]
    modes = [m for m in MODES if any(r["mode"] == m for r in planted)]
    if planted:
        out += ["| bug | " + " | ".join(modes) + " |", "| --- |" + " --- |" * len(modes)]
        for bug in (b for b in BUGS if b.server == "nested"):
            cells = [
                _bug_cell(bug.id, [r["score"] for r in planted if r["mode"] == m and r.get("score")]) for m in modes
            ]
            out.append(f"| {bug.id} {bug.bug_class} | " + " | ".join(cells) + " |")
        fps = [_false_positives([r for r in planted if r["mode"] == m]) for m in modes]
        out += ["| false positives | " + " | ".join(fps) + " |"]
        clean = [r for r in runs if r["target"] == "nested_clean" and r.get("score")]
        if clean:
            out += ["", f"nested_clean (auto): {sum(r['score']['false_positives'] for r in clean)} false positive(s)."]
        out.append("")
    out += ["| target | mode | calls | arcs at " + " / ".join(f"{t:g}" for t in _marks(result)) + " s | final arcs "
            "| final lines | behaviours at the same steps | final behaviours | fuzzgate's own (auto) |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]  # fmt: skip
    for name in dict.fromkeys(r["target"] for r in runs):
        for mode in MODES:
            of = [r for r in runs if r["target"] == name and r["mode"] == mode and r.get("coverage")]
            if not of:
                continue
            arcs = " / ".join(_spread([_at(r, t, "arcs") for r in of]) for t in _marks(result))
            beh = " / ".join(_spread([_at(r, t, "behaviours") for r in of]) for t in _marks(result))
            own = "; ".join(_own(r.get("feedback")) for r in of if r.get("feedback")) or "-"
            out.append(f"| {name} | {mode} | {_spread([r.get('calls') or 0 for r in of])} | {arcs} "
                       f"| {_spread([r['coverage']['final']['arcs'] for r in of])} "
                       f"| {_spread([r['coverage']['final']['lines'] for r in of])} | {beh} "
                       f"| {_spread([r['coverage']['final'].get('behaviours') for r in of])} | {own} |")  # fmt: skip
    if result.get("warm"):
        out += ["", "Seconds from the first call's end (from the CLI's start in brackets) to the cold run's final "
                "arcs:", "", "| target | cold final arcs | cold run | warm run | warm / cold | warm: arcs after its "
                "seeds' replay | warm final arcs | corpus loaded, replayed, added |",
                "| --- | --- | --- | --- | --- | --- | --- | --- |"]  # fmt: skip
        for w in result["warm"]:
            c = w.get("warm_corpus") or {}
            out.append(f"| {w['target']} | {w['cold_final_arcs']} | {w.get('cold_fuzzing_s')} ({w['cold_time_s']}) "
                       f"| {w.get('warm_fuzzing_s')} ({w['warm_time_s']}) | {w['ratio']} "
                       f"| {w.get('after_seeds_arcs')} at {w.get('after_seeds_s')} s | {w['warm_final_arcs']} "
                       f"| {c.get('loaded')}, {c.get('replayed')} in {c.get('replay_s')} s, "
                       f"{c.get('added')} |")  # fmt: skip
    cost = result.get("collector_cost")
    if cost and cost.get("summary"):
        rates = [f"{mode} {v['rate']:.0f} calls/s (ratio {v['ratio']:.2f})" for mode, v in cost["summary"].items()]
        out += ["", "Collector cost (bench/collector_cost.py): " + ", ".join(rates) + "."]
    if result.get("errors"):
        out += ["", "Errors: " + "; ".join(f"`{e[:200]}`" for e in result["errors"])]
    return "\n".join(out)


def _false_positives(runs: list[dict[str, Any]]) -> str:
    """Reports on a clean surface or of the wrong kind, over `runs`, by kind; mcp-fuzzer's advisory
    categories (scoring.ADVISORY_CATEGORIES) apart."""
    kinds = Counter(
        f"{x['kind']} on {x['name']}" if x["kind"] not in ADVISORY_CATEGORIES else x["kind"] + " (advisory)"
        for r in runs
        if r.get("score")
        for x in (*r["score"]["wrong_kind"], *r["score"]["unmapped"])
    )
    return str(sum(kinds.values())) + (": " + ", ".join(f"{n}× {k}" for k, n in sorted(kinds.items())) if kinds else "")


def _bug_cell(bug: str, scores: list[dict[str, Any]]) -> str:
    """`found/runs (seconds to the first trigger of each found)`, and the runs that only triggered it."""
    found = sorted(s["reported"][bug] for s in scores if bug in s["reported"])
    unreported = sum(1 for s in scores if bug in s["triggered"] and bug not in s["reported"])
    cell = f"{len(found)}/{len(scores)}" + (f" ({', '.join(f'{t:.0f} s' for t in found)})" if found else "")
    return cell + (f", {unreported} triggered unreported" if unreported else "")


def _marks(result: dict[str, Any]) -> list[float]:
    budgets = [result["settings"]["budget"], result["settings"]["real_budget"]]
    return sorted({round(b * f) for b in budgets for f in (1 / 6, 1 / 3, 2 / 3)} | {min(budgets)})


def _at(run: dict[str, Any], t: float, key: str) -> int | None:
    points = [p for p in run["coverage"]["points"] if p["t"] <= t + 1e-9]
    if not points:
        return 0
    value = points[-1].get(key)
    return None if value is None else int(value)


def _own(feedback: dict[str, Any] | None) -> str:
    """report.json's `feedback`, short: what fuzzgate itself counted (its own keys and files)."""
    if not feedback or feedback.get("signal") == "off":
        return "-"
    keys = ("lines", "arcs", "behaviours", "constants") if feedback.get("signal") == "coverage" else ("behaviours",)
    return ", ".join(f"{feedback.get(k)} {k}" for k in keys)
