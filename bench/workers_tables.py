"""The Markdown tables of bench/workers.py's results (`python bench/workers.py --markdown`): scaling
with 1, 2 and 4 workers, the store's cost per call, the kill-and-restart run. Pure functions of the
results JSON."""

from __future__ import annotations

import statistics
from typing import Any


def _points(run: dict[str, Any]) -> list[dict[str, Any]]:
    """The polls, then the reading taken at the deadline (before the workers were stopped)."""
    points = list(run["polls"])
    if run.get("end") and run["end"].get("t") is not None:
        points.append(run["end"])
    return points


def step_s(run: dict[str, Any]) -> float:
    """The tables' step: a minute, or 10 s for a smoke run shorter than two minutes."""
    return 60.0 if run["seconds"] >= 120 else 10.0


def at_minute(run: dict[str, Any], minute: int) -> dict[str, Any] | None:
    """The reading nearest to `minute` steps after the start (within 6 s), else None."""
    target = step_s(run) * minute
    near = [p for p in _points(run) if abs(p["t"] - target) <= 6.0]
    return min(near, key=lambda p: abs(p["t"] - target)) if near else None


def _minutes(run: dict[str, Any]) -> list[int]:
    return list(range(1, int(run["seconds"] // step_s(run)) + 1))


def _unit(run: dict[str, Any]) -> str:
    return "min" if step_s(run) == 60 else "× 10 s"


def _cell(p: dict[str, Any] | None) -> str:
    return "-" if p is None else f"{len(p['bugs'])} / {p['fingerprint_count']} / {p['corpus']}"


def _exits(run: dict[str, Any]) -> str:
    exits = [w for w in run["worker_exits"] if w["how"].startswith("sigterm")]
    codes = [w["exit_code"] for w in exits]
    zero = sum(1 for c in codes if c == 0)
    slowest = max((w["exit_s"] for w in exits if w["exit_s"] is not None), default=None)
    text = f"{zero} of {len(codes)} exited 0"
    odd = [w for w in exits if w["exit_code"] != 0]
    if odd:
        text += " (" + ", ".join(f"exit {w['exit_code']} after {w['ran_s']:.0f} s of life" for w in odd) + ")"
    if slowest is not None:
        text += f", slowest {slowest:.1f} s"
    left = sum(len(w["leftover"]) for w in exits)
    return text + (f"; {left} process(es) of theirs left behind" if left else "")


def scaling_tables(runs: list[dict[str, Any]]) -> list[str]:
    if not runs:
        return []
    minutes = max((_minutes(r) for r in runs), key=len) or [1]
    seconds = runs[0]["seconds"]
    out = [
        f"Each run: a fresh redis-server, the workers started together and stopped with SIGTERM after "
        f"{seconds:g} s. Cells: planted bugs found / distinct fingerprints / corpus entries in the store.",
        "",
        "| workers | "
        + " | ".join(f"{m} {_unit(runs[0])}" for m in minutes)
        + " | after SIGTERM | calls (all workers) | calls/s | CPU busy | "
        "bugs triggered (server's ground truth) | SIGTERM |",
        "| --- |" + " --- |" * (len(minutes) + 6),
    ]
    for run in runs:
        end = run.get("end") or {}
        calls = end.get("calls", 0)
        rate = calls / end["t"] if end.get("t") else 0.0
        triggered = ", ".join(f"{b} {t:.0f} s" for b, t in run["triggered"].items()) or "none"
        cells = " | ".join(_cell(at_minute(run, m)) for m in minutes)
        final = _cell(run.get("after_stop"))
        busy = _pct(run.get("cpu_busy"))
        out.append(
            f"| {run['workers']} | {cells} | {final} | {calls} | {rate:.0f} | {busy} | {triggered} | {_exits(run)} |"
        )
    out += ["", f"Per {'minute' if step_s(runs[0]) == 60 else '10 s'} (what each added, all workers together):", ""]
    out += ["| workers | step | calls/s | corpus + | fingerprints + | bugs + | load (1 min avg) |"]
    out += ["| --- | --- | --- | --- | --- | --- | --- |"]
    for run in runs:
        prev: dict[str, Any] = {"t": 0.0, "calls": 0, "corpus": 0, "fingerprint_count": 0, "bugs": []}
        for m in _minutes(run):
            p = at_minute(run, m)
            if p is None:
                continue
            span = p["t"] - prev["t"]
            rate = (p["calls"] - prev["calls"]) / span if span > 0 else 0.0
            new_bugs = sorted(set(p["bugs"]) - set(prev["bugs"]))
            out.append(
                f"| {run['workers']} | {m} | {rate:.0f} | {p['corpus'] - prev['corpus']} "
                f"| {p['fingerprint_count'] - prev['fingerprint_count']} | {len(new_bugs)}"
                + (f" ({', '.join(new_bugs)})" if new_bugs else "")
                + f" | {p['load']:.1f} |"
            )
            prev = p
    out += ["", "Seconds to the first reading of the store that held each planted bug (in brackets: its first trigger, "
            "by the server's ground truth):", ""]  # fmt: skip
    from servers.catalog import BUGS

    nested = [b for b in BUGS if b.server == "nested"]
    out += ["| bug | " + " | ".join(f"{r['workers']} worker(s)" for r in runs) + " |"]
    out += ["| --- |" + " --- |" * len(runs)]
    for bug in nested:
        row = []
        for run in runs:
            final = (run.get("after_stop") or {}).get("bugs", [])
            seen = next((p["t"] for p in _points(run) if bug.id in p["bugs"]), None)
            trig = run["triggered"].get(bug.id)
            cell = f"{seen:.0f} s" if seen is not None else ("at the stop" if bug.id in final else "-")
            if trig is not None:
                cell += f" ({trig:.0f} s)" + ("" if bug.id in final else ", never reported")
            row.append(cell)
        out.append(f"| {bug.id} {bug.bug_class} | " + " | ".join(row) + " |")
    others = []
    for run in runs:
        kinds: dict[str, int] = {}
        for f in run["findings"]:
            if not f["bug"]:
                key = f"{f['kind']} on {f['name']}"
                kinds[key] = kinds.get(key, 0) + 1
        text = ", ".join(f"{n}× {k}" for k, n in sorted(kinds.items())) or "none"
        others.append(f"{run['workers']} worker(s): {text}")
    out += ["", "Findings that are no planted bug: " + "; ".join(others) + "."]
    kept = []
    for run in runs:
        k = run.get("kept") or {}
        per_bug = (run.get("after_stop") or {}).get("fingerprints_per_bug") or {}
        several = [f"{b} under {n}" for b, n in per_bug.items() if n > 1]
        if "error" in k or not k:
            kept.append(f"{run['workers']} worker(s): {k.get('error', 'not checked')}")
            continue
        missing = len(k["missing_fingerprints"]) + len(k["missing_corpus"])
        kept.append(
            f"{run['workers']} worker(s): {missing} of {k['seen_fingerprints']} fingerprints and {k['seen_corpus']} "
            "corpus keys seen in any reading missing after the stop"
            + (f"; one bug under several fingerprints: {', '.join(several)}" if several else "")
        )
    out += ["", "Kept: " + "; ".join(kept) + "."]
    return out


def cost_tables(cost: dict[str, Any] | None) -> list[str]:
    if not cost:
        return []
    runs = cost["runs"]
    out = [
        f"`fuzzgate run --cases {cost['cases']} --seed 1 --feedback behaviour` on nested, {cost['rounds']} "
        "round(s), the three modes in a different order each round; ratios against the no-store run of "
        "the same round (calls/s: the fuzzing loop's rate, start-up and output writing left out).",
        "",
        "| store | calls | wall time / none | calls/s / none | exit codes |",
        "| --- | --- | --- | --- | --- |",
    ]
    for mode, label in (("none", "none"), ("dir", "`--store DIR`"), ("redis", "`--store redis://`")):
        of = [r for r in runs if r["mode"] == mode]
        walls, rates = [], []
        for r in of:
            base = next(b for b in runs if b["mode"] == "none" and b["round"] == r["round"])
            walls.append(r["wall_s"] / base["wall_s"] if base["wall_s"] else None)
            rates.append(r["loop_rate"] / base["loop_rate"] if base["loop_rate"] else None)
        calls = sorted({r["calls"] for r in of}, key=lambda c: (c is None, c))
        out.append(
            f"| {label} | {', '.join(str(c) for c in calls)} | {_ratios(walls)} | {_ratios(rates)} "
            f"| {', '.join(str(r['exit_code']) for r in of)} |"
        )
    micro = cost.get("micro") or []
    if micro:
        out += [
            "",
            f"SharedStore operations on Redis (loopback), timed one at a time ({micro[0]['ops']} of each per "
            f"round, over a copy of that round's Redis run: corpus of {micro[0]['corpus']} entries), against "
            "the mean call time of the same round's no-store run:",
            "",
            "| operation | median ms | p90 ms | median / mean call time |",
            "| --- | --- | --- | --- |",
        ]
        for op in ("add_corpus", "write_stats", "record_findings"):
            med = [m[op]["median_ms"] for m in micro]
            p90 = [m[op]["p90_ms"] for m in micro]
            of_call = [m[op]["of_call"] for m in micro]
            out.append(f"| {op} | {_spread(med, 2)} | {_spread(p90, 2)} | {_ratios(of_call)} |")
        calls_ms = [m["call_ms"] for m in micro if m["call_ms"]]
        out += ["", f"Mean call time of the no-store runs: {_spread(calls_ms, 2)} ms."]
    return out


def kill_tables(kill: dict[str, Any] | None) -> list[str]:
    if not kill:
        return []
    events = kill["events"]
    out = [
        f"3 workers for {kill['seconds']:g} s; a worker SIGKILLed and a new one started about every "
        f"{kill['every']:g} s (RNG seed {kill['seed']}), redis-server SIGKILLed and restarted once; the "
        f"store read just before each event and {kill['settle_s']:g} s after it.",
        "",
        "| t | event | fingerprints before → after | corpus before → after | calls before → after "
        "| lost | duplicates in the findings view | workers alive after | the killed worker's servers |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for e in events:
        what = (
            f"SIGKILL worker {e['killed']}, start {e['started']}"
            if e["what"] == "kill"
            else (f"redis-server SIGKILL, restart ({e.get('down_s')} s down)")
        )
        if "error" in e:
            out.append(f"| {e['t']:.0f} s | {what} | {e['error']} | | | | | {e['alive_after']} | |")
            continue
        lost = len(e["lost_fingerprints"]) + len(e["lost_corpus"])
        out.append(
            f"| {e['t']:.0f} s | {what} | {e['fingerprints_before']} → {e['fingerprints_after']} "
            f"| {e['corpus_before']} → {e['corpus_after']} | {e['calls_before']} → {e['calls_after']} "
            f"| {lost} | {e['duplicates_after']} | {e['alive_after']} | {_orphans(e)} |"
        )
    lost_total = sum(len(e.get("lost_fingerprints", [])) + len(e.get("lost_corpus", [])) for e in events)
    dups = max((e.get("duplicates_after", 0) for e in events), default=0)
    final = kill.get("final") or {}
    end = kill.get("after_stop") or {}
    killed = sum(1 for w in kill["worker_exits"] if w["how"] == "sigkill")
    kept = kill.get("kept") or {}
    kept_text = (
        kept.get("error", "not checked")
        if "error" in kept or not kept
        else f"{len(kept['missing_fingerprints']) + len(kept['missing_corpus'])} of the {kept['seen_fingerprints']} "
        f"fingerprints and {kept['seen_corpus']} corpus keys any reading held were missing at the end"
    )
    out += [
        "",
        f"Over the run: {lost_total} finding(s) or corpus entr(y/ies) present before an event and missing "
        f"after it; at most {dups} duplicate(s) in the findings view; {killed} worker(s) killed. At the end: "
        f"{len(end.get('bugs', []))} planted bugs ({', '.join(end.get('bugs', [])) or 'none'}), "
        f"{end.get('fingerprint_count', '-')} fingerprints, {end.get('corpus', '-')} corpus entries, "
        f"{end.get('calls', '-')} calls; {end.get('raw_finding_records', '-')} finding records behind the "
        f"view; {kept_text}. Stopping the survivors: {_exits(kill)}"
        + (f"; lost at the stop: {len(final.get('lost_fingerprints', [])) + len(final.get('lost_corpus', []))}"
           if "lost_fingerprints" in final else "")
        + ".",
    ]  # fmt: skip
    said = kill.get("store_messages") or {}
    if said:
        lines = "; ".join(f"{n}× “{text}”" for text, n in sorted(said.items(), key=lambda kv: -kv[1])[:6])
        out += ["", f"What the workers said about the store (numbers blurred to N): {lines}."]
    else:
        out += ["", "The workers' logs say nothing about the store being away."]
    return out


def _orphans(event: dict[str, Any]) -> str:
    if event["what"] != "kill":
        return ""
    if event.get("orphans"):
        alive = "; ".join(o.split(" ", 1)[1][:60] for o in event["orphans"])
        return f"{len(event['orphans'])} still alive after a minute: {alive}"
    return f"gone after {event['orphans_gone_s']:.1f} s" if "orphans_gone_s" in event else "?"


def _pct(share: float | None) -> str:
    return "-" if share is None else f"{share * 100:.0f}%"


def _ratios(values: list[float | None]) -> str:
    return _spread([v for v in values if v is not None], 2)


def _spread(given: list[float], digits: int) -> str:
    if not given:
        return "-"
    med = statistics.median(given)
    text = f"{med:.{digits}f}"
    if len(given) > 1 and min(given) != max(given):
        text += f" ({min(given):.{digits}f}–{max(given):.{digits}f})"
    return text


def markdown(result: dict[str, Any]) -> str:
    venv = result.get("fuzzgate_venv") or ""
    source = f" (a snapshot: `{venv.rsplit('/', 2)[-2]}`)" if venv.endswith("/venv") else ""
    redis = " ".join(result.get("redis", "").split()[:3])
    out = [
        f"`bench/workers.py`, {result.get('started', '')[:16]} – {result.get('finished', '')[11:16]}, "
        f"{result.get('fuzzgate', '?')} at `{result.get('commit', '?')}`{source}, {redis}, {result.get('cpus')} CPUs.",
        "",
    ]
    if result["scaling"]:
        out += ["### Workers sharing one Redis", "", *scaling_tables(result["scaling"]), ""]
    if result.get("cost"):
        out += ["### The store's cost per call", "", *cost_tables(result["cost"]), ""]
    if result.get("kill"):
        out += ["### Workers killed and restarted, Redis restarted", "", *kill_tables(result["kill"]), ""]
    if result.get("errors"):
        out += ["Errors: " + "; ".join(result["errors"]), ""]
    return "\n".join(out)
