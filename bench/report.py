"""Write docs/benchmarks.md (and its PNG plots) from the JSON results of the benchmark scripts.

    bench/.work/venv-bench/bin/python bench/report.py --results DIR --doc FILE --img DIR [--quick]

Runs in the bench venv (matplotlib is not a fuzzgate dependency). Reads throughput.json, bugs.json,
stability.json, realworld.json, timebox.json, polite.json, wholerun.json, reach-before.json,
reach-after.json, machine.json and commands.txt from DIR; a missing one is reported
as not run. bench/notes.md (the analysis of the documented run, written by a person) and
bench/reviews.json (reviews of the real-server findings) are included as they are.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from servers.catalog import BUGS as ALL_BUGS
from servers.catalog import SERVERS as SERVER_NAMES

BUGS = tuple(b for b in ALL_BUGS if b.server in SERVER_NAMES)
"""§2's planted bugs: those of bugs.py's default servers (the reach servers' are §8's)."""

BENCH = Path(__file__).resolve().parent
FUZZERS = ("fuzzgate", "mcp-fuzzer")




def _portable(text: str) -> str:
    """`text` with this machine's paths said relative to the repository (and ../shared beside it)."""
    root = str(Path(__file__).resolve().parents[1])
    return text.replace(str(Path(root).parent / "shared"), "../shared").replace(root + "/", "")

def timebox_section(data: dict[str, Any] | None) -> list[str]:
    from timebox import section  # bench/timebox.py: its table, kept next to the measurement

    return section(data)


def polite_section(data: dict[str, Any] | None) -> list[str]:
    from polite import section  # bench/polite.py: the per-class tables of the bugs that answer politely

    return section(data)


def wholerun_section(data: dict[str, Any] | None) -> list[str]:
    from wholerun import section  # bench/wholerun.py: whole runs of 12 s against the bare SDK loop

    return ["", *section(data), ""] if data else []


def reach_section(before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[str]:
    from reach import section  # bench/reach.py: the reach classes and the real servers' reach (issue 10)

    return [*section(before, after), ""] if before or after else []


def load(results: Path, name: str) -> dict[str, Any] | None:
    path = results / name
    return json.loads(path.read_text()) if path.exists() else None


def fmt(x: float, digits: int = 0) -> str:
    return f"{x:,.{digits}f}"


def table(header: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    out += ["| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in row) + " |" for row in rows]
    return out


# ------------------------------------------------------------------------------- plots


def plot_throughput(tp: dict[str, Any], path: Path) -> None:
    rates = tp.get("rates") or []
    if not rates:
        return
    labels = [f"{r['transport']}\nc={r['concurrency']}" for r in rates]
    xs = range(len(rates))
    width = 0.27
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.bar([x - width for x in xs], [r["bare_median"] for r in rates], width, label="bare SDK loop")
    ax.bar(list(xs), [r["fuzzgate_loop_median"] for r in rates], width, label="fuzzgate loop")
    ax.bar([x + width for x in xs], [r["fuzzgate_run_median"] for r in rates], width, label="fuzzgate calls/duration_s")
    ax.set_xticks(list(xs), labels)
    ax.set_ylabel("calls per second (median of rounds)")
    ax.set_title("fuzzgate vs the bare mcp SDK client, one-tool fast server")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_memory(tp: dict[str, Any], path: Path) -> None:
    mem = tp.get("memory")
    if not mem or not mem.get("samples"):
        return
    t = [s[0] for s in mem["samples"]]
    fig, ax = plt.subplots(figsize=(8, 3.5))
    ax.plot(t, [s[1] / 1024 for s in mem["samples"]], label="fuzzgate RSS")
    ax.plot(t, [s[2] / 1024 for s in mem["samples"]], label="server RSS")
    ax.set_xlabel("seconds since start")
    ax.set_ylabel("MiB")
    ax.set_ylim(bottom=0)
    ax.set_title(f"memory during a {mem['seconds']:g} s fuzzgate run (fast server, stdio)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_bugs_over_time(bugs: dict[str, Any], path: Path) -> None:
    budget = bugs["settings"]["budget_s"]
    fig, ax = plt.subplots(figsize=(8, 4))
    for fuzzer, colour in zip(FUZZERS, ("tab:blue", "tab:orange"), strict=True):
        runs = [r for r in bugs["runs"] if r["fuzzer"] == fuzzer]
        if not runs:
            continue
        reported = sorted(t for r in runs for t in r["score"]["reported"].values())
        triggered = sorted(t for r in runs for t in r["score"]["triggered"].values())
        end = max([budget, *reported, *triggered])
        for times, style, what in ((reported, "-", "reported"), (triggered, ":", "triggered")):
            xs, ys = [0.0], [0]
            for i, t in enumerate(times, start=1):
                xs += [t, t]
                ys += [i - 1, i]
            xs.append(end)
            ys.append(len(times))
            ax.plot(xs, ys, style, color=colour, label=f"{fuzzer}: bugs {what}")
    ax.axvline(budget, color="grey", linewidth=0.8, linestyle="--")
    ax.set_xlabel("seconds since the fuzzer started (each server in its own run, summed)")
    ax.set_ylabel(f"planted bugs (of {len(BUGS)})")
    ax.set_title("planted bugs over time (time = first ground-truth trigger)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ------------------------------------------------------------------------------- sections


def machine_section(machine: dict[str, Any] | None) -> list[str]:
    if not machine:
        return ["(machine information was not collected)"]
    rows = [[k, v] for k, v in machine.items()]
    return table(["", ""], rows)


def throughput_section(tp: dict[str, Any] | None, img: Path, rel: str) -> tuple[list[str], dict[str, Any]]:
    facts: dict[str, Any] = {}
    if not tp:
        return ["Not run."], facts
    s = tp["settings"]
    out = [
        f"Server: `examples/servers/fast_server.py` (one tool, `ping_fast`, answers at once). {s['rounds']} "
        f"interleaved round(s): in every round each cell is measured for the bare SDK loop and for fuzzgate, "
        f"back to back, the order flipped each round; every measurement starts a fresh server and lasts "
        f"{s['seconds']:g} s (fuzzgate's `--budget`). fuzzgate runs as a user runs it: "
        f"`fuzzgate run --command ... --budget {s['seconds']:g}s --seed 1 --replays 0 --concurrency N` "
        "(or `--url` for HTTP, the server started by the bench on a free 127.0.0.1 port).",
        "",
        "- **bare**: `mcp.Client(...).session.call_tool('ping_fast', {'n': i})` in a tight loop "
        "(N loops in one anyio task group for concurrency N), counted after connecting and one warm-up call;",
        "- **fuzzgate loop**: calls from fuzzgate's first progress line (printed when the first call ends) to "
        "the end of fuzzing (the run-started line + report.json `duration_s`): the loop alone, like the bare figure;",
        "- **fuzzgate run**: report.json `calls / duration_s`, which also counts starting the server, "
        "the handshake and discovery.",
        "",
    ]
    rows = []
    for r in tp.get("rates", []):
        paired = r.get("ratio_loop_paired")
        loads = r.get("loadavg_1m") or []
        rows.append([
            r["transport"], r["concurrency"], fmt(r["bare_median"]), fmt(r["fuzzgate_loop_median"]),
            f"**{r['ratio_loop']:.2f}**", f"{paired:.2f}" if paired is not None else "-",
            fmt(r["fuzzgate_run_median"]), f"{r['ratio_run']:.2f}",
            " / ".join(fmt(x) for x in r["bare"]), " / ".join(fmt(x) for x in r["fuzzgate_loop"]),
            " / ".join(f"{x:.1f}" for x in loads) or "-",
        ])  # fmt: skip
        facts[(r["transport"], r["concurrency"])] = r
    out += table(
        ["transport", "in flight", "bare calls/s", "fuzzgate loop calls/s", "loop ratio", "paired ratio",
         "fuzzgate run calls/s", "run ratio", "bare, per round", "fuzzgate loop, per round", "load avg (1 min)"],
        rows,
    )  # fmt: skip
    out += [
        "",
        "Medians over the rounds; *loop ratio* = fuzzgate loop median / bare median, *paired ratio* = median of the "
        "per-round ratios (bare and fuzzgate measured back to back, so slow phases of a shared machine cancel "
        "out better). The machine's two cores are shared with other sessions working in the same repository "
        "(their test suites run at the same time), so single measurements vary by ±50%: read differences "
        "under ~30% as noise.",
    ]
    findings = sorted({f for r in tp.get("rates", []) for f in r.get("fuzzgate_findings", [])})
    if findings:
        out += ["", "fuzzgate reported on the fast server (which has no bug): " + "; ".join(findings) + "."]
    plot_throughput(tp, img / "bench-throughput.png")
    out += ["", f"![throughput]({rel}/bench-throughput.png)", ""]
    if tp.get("tools"):
        out += ["### Calls/s as the number of tools grows", "",
                "`bench/servers/many_tools.py --tools N`: N copies of the fast tool; stdio, one call at a time; "
                "the bare loop round-robins over the tools.", ""]  # fmt: skip
        out += table(
            ["tools", "bare calls/s", "fuzzgate loop calls/s", "loop ratio", "fuzzgate run calls/s", "run ratio"],
            [[t["tools"], fmt(t["bare_median"]), fmt(t["fuzzgate_loop_median"]), f"{t['ratio_loop']:.2f}",
              fmt(t["fuzzgate_run_median"]), f"{t['ratio_run']:.2f}"] for t in tp["tools"]],
        )  # fmt: skip
        out.append("")
    mem = tp.get("memory")
    if mem:
        marks = mem.get("marks", {})
        out += [
            "### Memory of a long run",
            "",
            f"`fuzzgate run` for {mem['seconds']:g} s on the fast server (stdio, one at a time, "
            f"{mem['calls']:,} calls, {mem['run_rate']:.0f} calls/s); RSS read from /proc once a second.",
            "",
        ]
        out += table(
            ["", "fuzzgate RSS MiB", "server RSS MiB"],
            [["peak", fmt(mem["peak_rss_kib"] / 1024, 1), fmt(mem["server_peak_rss_kib"] / 1024, 1)]]
            + [[f"at {k} ({v['t']:g} s)", fmt(v["fuzzgate_kib"] / 1024, 1), fmt(v["server_kib"] / 1024, 1)]
               for k, v in sorted(marks.items(), key=lambda kv: kv[1]["t"])],
        )  # fmt: skip
        plot_memory(tp, img / "bench-memory.png")
        out += ["", f"![memory]({rel}/bench-memory.png)", ""]
        facts["memory"] = mem
    return out, facts


def _per_fuzzer(bugs: dict[str, Any], fuzzer: str) -> dict[str, Any]:
    runs = [r for r in bugs["runs"] if r["fuzzer"] == fuzzer]
    scores = [r["score"] for r in runs]
    unmapped = [u for s in scores for u in s["unmapped"]]
    wrong = [w for s in scores for w in s["wrong_kind"]]
    advisory = ("accepted_malformed", "injection_reflection")
    return {
        "runs": runs,
        "servers": len(runs),
        "triggered": {b for s in scores for b in s["triggered"]},
        "reported": {b: t for s in scores for b, t in s["reported"].items()},
        "flaky_ok": {b for s in scores for b in s["reported_flaky"]},
        "det_flaky": {b for s in scores for b in s["deterministic_labelled_flaky"]},
        "fp": len(unmapped) + len(wrong),
        "fp_core": sum(1 for x in unmapped + wrong if x["kind"] not in advisory),
        "fp_clean": [x for x in unmapped if x["surface"] == "tool"],
        "unmapped": unmapped,
        "wrong": wrong,
        "destructive": sum(sum(s["destructive_calls"].values()) for s in scores),
        "destructive_by_tool": {t: n for s in scores for t, n in s["destructive_calls"].items()},
        "calls": sum(r["calls"] for r in runs),
        "wall": sum(r["wall_s"] for r in runs),
    }


def bugs_section(bugs: dict[str, Any] | None, img: Path, rel: str) -> tuple[list[str], dict[str, Any]]:
    if not bugs:
        return ["Not run."], {}
    s = bugs["settings"]
    per = {f: _per_fuzzer(bugs, f) for f in FUZZERS}
    out = [
        f"Servers: the {len(SERVER_NAMES)} in [bench/servers/](../bench/servers/BUGS.md), {len(BUGS)} planted "
        "bugs. Budget: "
        f"**{s['budget_s']:g} s per server per fuzzer**. fuzzgate: `fuzzgate run --budget {s['budget_s']:g}s "
        f"--seed {s['seed']}` (3 replays, 5 s timeout, one call at a time, mixed mode: its defaults). "
        f"{bugs.get('mcp_fuzzer_version', 'mcp-fuzzer ?')}: `mcp-fuzzer --mode all --phase both --runs "
        f"{s['mcp_fuzzer_runs_per_iteration']} --seed K --tool-timeout 5"
        f"{' --security-audit' if s.get('mcp_fuzzer_security_audit') else ''}` in iterations (K = "
        f"{s['mcp_fuzzer_seed']}, {s['mcp_fuzzer_seed'] + 1}, ...) until the budget is spent, because it has "
        "no time budget; the iteration running when the budget ends is let finish (a killed one writes no "
        "report), so its wall time can exceed the budget."
        + (
            f" On the servers that take `--root` ({', '.join(s['jailed_servers'])}) mcp-fuzzer, which has no "
            "sandbox, runs inside `netjail.sh`; fuzzgate sandboxes them itself."
            if s.get("jailed_servers")
            else ""
        ),
        "",
    ]
    if bugs.get("errors"):
        out += ["Errors: " + "; ".join(f"`{e[:300]}`" for e in bugs["errors"]), ""]
    rows = []
    for label, key in (
        ("bugs triggered (ground truth)", lambda p: len(p["triggered"])),
        ("**bugs reported** (mapped to a triggered planted bug)", lambda p: f"**{len(p['reported'])}**"),
        ("false positives: all reports that map to no triggered bug", lambda p: p["fp"]),
        ("false positives without mcp-fuzzer's advisory categories (accepted_malformed, injection_reflection)",
         lambda p: p["fp_core"]),
        ("flaky planted bug reported as flaky (of 1)", lambda p: len(p["flaky_ok"])),
        ("deterministic bugs labelled flaky", lambda p: len(p["det_flaky"])),
        ("destructive calls", lambda p: p["destructive"]),
        ("calls sent", lambda p: f"{p['calls']:,}"),
        ("wall time, all servers (s)", lambda p: fmt(p["wall"])),
    ):  # fmt: skip
        rows.append([label, *(key(per[f]) for f in FUZZERS)])
    out += table(["", *FUZZERS], rows)
    out += ["", "### Per planted bug", "",
            "Seconds from the fuzzer's start to the bug's first trigger (server clock); **bold** = reported, "
            "plain = triggered but not reported, `-` = never triggered.", ""]  # fmt: skip
    bug_rows = []
    for b in BUGS:
        cells = []
        for f in FUZZERS:
            p = per[f]
            trig = next((r["score"]["triggered"].get(b.id) for r in p["runs"] if r["server"] == b.server), None)
            if not p["runs"]:
                cells.append("not run")
            elif b.id in p["reported"]:
                cells.append(f"**{p['reported'][b.id]:.1f}**" + (" (flaky)" if b.id in p["flaky_ok"] else ""))
            elif trig is not None:
                cells.append(f"{trig:.1f} (missed)")
            else:
                cells.append("-")
        bug_rows.append([b.id, b.bug_class, *cells])
    out += table(["bug", "class", *FUZZERS], bug_rows)
    plot_bugs_over_time(bugs, img / "bench-bugs-over-time.png")
    out += ["", f"![bugs over time]({rel}/bench-bugs-over-time.png)", "", "### Per server", ""]
    srows = []
    for r in bugs["runs"]:
        sc = r["score"]
        srows.append([
            r["server"], r["fuzzer"], f"{r['calls']:,}", fmt(r["wall_s"]), len(sc["triggered"]), len(sc["reported"]),
            sc["false_positives"], sum(sc["destructive_calls"].values()),
            r.get("restarts", "-") if r["fuzzer"] == "fuzzgate" else f"{r.get('iterations', '?')} iterations",
        ])  # fmt: skip
    out += table(["server", "fuzzer", "calls", "wall s", "triggered", "reported", "false pos.", "destructive",
                  "restarts / iterations"], srows)  # fmt: skip
    fg = per["fuzzgate"]
    if fg["runs"]:
        out += ["", "### fuzzgate's false positives and wrong-kind reports", ""]
        items = [(x, "wrong kind for " + x["bug"]) for x in fg["wrong"]] + [
            (x, "no planted bug") for x in fg["unmapped"]
        ]
        out += (
            table(
                ["tool", "kind", "flaky", "why it is counted", "message"],
                [[x["name"], x["kind"], "yes" if x["flaky"] else "no", why, x["message"][:160]] for x, why in items],
            )
            if items
            else ["None."]
        )
    mf = per["mcp-fuzzer"]
    if mf["runs"]:
        counts: dict[str, int] = {}
        for x in mf["unmapped"] + mf["wrong"]:
            counts[x["kind"]] = counts.get(x["kind"], 0) + 1
        out += ["", "mcp-fuzzer's false positives by category: "
                + ", ".join(f"`{k}` {v}" for k, v in sorted(counts.items())) + "."]  # fmt: skip
        if mf["destructive_by_tool"]:
            out += ["", "mcp-fuzzer called the destructive tools: "
                    + ", ".join(f"`{t}` {n}x" for t, n in sorted(mf["destructive_by_tool"].items())) + "."]  # fmt: skip
    return out, per


def stability_section(st: dict[str, Any] | None) -> tuple[list[str], dict[str, Any]]:
    if not st:
        return ["Not run."], {}
    s = st["settings"]
    out = [
        f"Each server: `fuzzgate run --seed S1 --budget {s['budget_s']:g}s`, `fuzzgate baseline accept`, then "
        "`fuzzgate run --seed Sk --baseline DIR` for four more seeds (`"
        + "`, `".join(x[:10] + "…" for x in s["seeds"])
        + "`). "
        "The servers do not change, so every finding called `new` is spurious: *fingerprint drift* (a planted bug "
        "the baseline holds, under another fingerprint), *coverage* (a planted bug the first seed did not report) "
        "or *false positive* (maps to no triggered bug). A flaky new finding never fails the gate.",
        "",
    ]
    if st.get("errors"):
        out += ["Errors: " + "; ".join(f"`{e[:300]}`" for e in st["errors"]), ""]
    rows = []
    total = {"new": 0, "fails": 0, "drift": 0}
    for srv in st["servers"]:
        kinds: dict[str, int] = {}
        for r in srv["runs"]:
            for n in r["new"]:
                kinds[n["why"]] = kinds.get(n["why"], 0) + 1
        total["new"] += srv["spurious_new"]
        total["fails"] += srv["gate_failures"]
        total["drift"] += len(srv["drifted"])
        rows.append([
            srv["server"], srv["baseline_findings"], ", ".join(srv["baseline_bugs"]) or "-",
            " / ".join(str(len(r["new"])) for r in srv["runs"]),
            ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) or "-",
            f"{srv['gate_failures']} of {len(srv['runs'])}",
            ", ".join(srv["drifted"]) or "none",
        ])  # fmt: skip
    out += table(["server", "baseline findings", "bugs in baseline", "new per seed (2..5)", "why new",
                  "runs failing the gate", "bugs whose fingerprint drifted"], rows)  # fmt: skip
    out += ["", f"Total: **{total['new']} spurious new finding(s)**, {total['fails']} of "
            f"{sum(len(s['runs']) for s in st['servers'])} runs would fail the gate, {total['drift']} planted bug(s) "
            "changed fingerprint across seeds (target: 0, 0, 0)."]  # fmt: skip
    details = [(srv["server"], r["seed"][:10], n) for srv in st["servers"] for r in srv["runs"] for n in r["new"]]
    if details:
        out += ["", "<details><summary>every spurious new finding</summary>", ""]
        out += table(["server", "seed", "kind", "tool", "flaky", "why", "bug", "message"],
                     [[sv, sd, n["kind"], n["name"], "yes" if n["flaky"] else "no", n["why"], n["bug"] or "-",
                       n["message"][:120]] for sv, sd, n in details])  # fmt: skip
        out += ["", "</details>"]
    return out, total


def realworld_section(rw: dict[str, Any] | None, reviews: dict[str, str]) -> list[str]:
    if not rw:
        return ["Not run."]
    sandbox = rw["settings"].get("sandbox")
    out = [
        f"fuzzgate with its defaults, `--budget {rw['settings']['budget_s']:g}s --seed "
        f"{rw['settings']['seed'][:10]}…`"
        + (f" `--sandbox {sandbox}`: each server in fuzzgate's own containment (its *containment* line below), "
           "and the whole `fuzzgate run` inside `../shared/tools/netjail.sh --rw WORK` (loopback only, the "
           "file system read-only but for the run's directory; netjail cannot run inside fuzzgate's jail, so it "
           "goes outside)." if sandbox else
           ", every server inside `../shared/tools/netjail.sh` (loopback only; with `--rw DIR` the file "
           "system read-only but for DIR)."),
        "",
    ]  # fmt: skip
    if rw.get("errors"):
        out += ["**Runs that failed:**", ""] + [f"- `{e[:1500]}`" for e in rw["errors"]] + [""]
    out += table(
        ["server", "version", "protocol", "tools fuzzed / blocked", "calls", "calls/s (run)", "calls/s (loop)",
         "restarts", "wall s", "findings"],
        [[s["package"], s["version"], s["protocol"], f"{sum(1 for e in s['entries'] if e[1] == 'fuzzed')} / "
          f"{sum(1 for e in s['entries'] if e[1] == 'blocked')}", f"{s['calls']:,}", fmt(s["run_rate"]),
          fmt(s["loop_rate"]), s["restarts"], fmt(s["wall_s"]) if "wall_s" in s else "-", len(s["findings"])]
         for s in rw["servers"]],
    )  # fmt: skip
    for s in rw["servers"]:
        blocked = [f"`{e[0]}` ({e[2]})" for e in s["entries"] if e[1] == "blocked"]
        out += ["", f"#### {s['package']} {s['version']}", "", f"Command: `{_portable(s['command'])}`.", ""]
        if s.get("containment"):
            out += [f"Containment: {_portable(s['containment'])}.", ""]
        if blocked:
            out += ["Blocked: " + "; ".join(blocked) + ".", ""]
        if not s["findings"]:
            out += ["No findings."]
            continue
        rows = []
        for f in s["findings"]:
            key = f"{s['server']}/{f['tool']}/{f['kind']}"
            signed = key + "/" + ",".join(f.get("signature") or [])
            review = reviews.get(signed) or reviews.get(key, "not reviewed")
            state = " flaky" if f["flaky"] else " unconfirmed" if f.get("unconfirmed") else ""
            steps = [
                *(f"{p['tool']}({json.dumps(p['arguments'])[:60]})" for p in f.get("prefix") or ()),
                f"{f.get('repro_tool', f['tool'])}({json.dumps(f['arguments'])[:100]})",
            ]
            repro = " → ".join(steps[:3] + ([f"… {len(steps) - 4} more …", steps[-1]] if len(steps) > 4 else steps[3:]))
            rows.append([f["kind"], f["tool"], f"{f['reproduced']}{state}", f["message"][:160], f"`{repro}`",
                         review])  # fmt: skip
        out += table(["kind", "tool", "replays", "message", "repro (calls in order)", "review"], rows)
    return out


def aims_section(tp: dict[str, Any], per: dict[str, Any], stab: dict[str, Any], budget: float | None) -> list[str]:
    rows = []
    fg = per.get("fuzzgate")
    mf = per.get("mcp-fuzzer")
    if fg and fg["runs"]:
        classes = {}
        for b in BUGS:
            classes.setdefault(b.bug_class, []).append(b.id)
        missed = [f"{c} ({', '.join(ids)})" for c, ids in classes.items() if not any(i in fg["reported"] for i in ids)]
        rows.append([f"every planted bug class found within {budget:g} s per server",
                     f"{len(classes) - len(missed)} of {len(classes)} classes; missed: "
                     + ("; ".join(missed) or "none"),
                     "yes" if not missed else "**no**"])  # fmt: skip
        rows.append(["zero false positives", f"{fg['fp']} (flaky-labelled ones included)",
                     "yes" if fg["fp"] == 0 else "**no**"])  # fmt: skip
        rows.append(["zero destructive calls", str(fg["destructive"]), "yes" if fg["destructive"] == 0 else "**no**"])
    if fg and mf and fg["runs"] and mf["runs"]:
        a, b = len(fg["reported"]), len(mf["reported"])
        rows.append(["more bugs reported than mcp-fuzzer in the same budget", f"fuzzgate {a}, mcp-fuzzer {b}",
                     "yes" if a > b else "**no**"])  # fmt: skip
    for transport in ("stdio", "http"):
        r1 = tp.get((transport, 1))
        if r1:
            paired = r1.get("ratio_loop_paired")
            rows.append([f"loop ≥ 0.8 of the bare SDK rate, one at a time ({transport})",
                         f"{r1['ratio_loop']:.2f} (paired: " + (f"{paired:.2f}" if paired is not None else "-")
                         + f"; run rate: {r1['ratio_run']:.2f})",
                         "yes" if r1["ratio_loop"] >= 0.8 else "**no**"])  # fmt: skip
        rn = next((v for k, v in tp.items() if isinstance(k, tuple) and k[0] == transport and k[1] > 1), None)
        if r1 and rn:
            rows.append([f"concurrency faster than one at a time ({transport})",
                         f"{rn['fuzzgate_loop_median']:.0f} calls/s with {rn['concurrency']} in flight vs "
                         f"{r1['fuzzgate_loop_median']:.0f}",
                         "yes" if rn["fuzzgate_loop_median"] > r1["fuzzgate_loop_median"] else "**no**"])  # fmt: skip
    if stab:
        rows.append(["gate stable across seeds: 0 spurious new findings", f"{stab['new']} spurious new, "
                     f"{stab['fails']} run(s) failing the gate", "yes" if stab["new"] == 0 else "**no**"])  # fmt: skip
    return table(["aim", "measured", "met"], rows) if rows else ["(nothing measured)"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--results", type=Path, required=True)
    p.add_argument("--doc", type=Path, required=True)
    p.add_argument("--img", type=Path, required=True)
    p.add_argument("--quick", action="store_true")
    ns = p.parse_args()
    ns.img.mkdir(parents=True, exist_ok=True)
    try:
        rel = ns.img.resolve().relative_to(ns.doc.resolve().parent).as_posix()
    except ValueError:
        rel = ns.img.resolve().as_posix()
    machine = load(ns.results, "machine.json")
    tp = load(ns.results, "throughput.json")
    bugs = load(ns.results, "bugs.json")
    st = load(ns.results, "stability.json")
    rw = load(ns.results, "realworld.json")
    commands = (ns.results / "commands.txt").read_text().strip() if (ns.results / "commands.txt").exists() else ""
    reviews_file = BENCH / "reviews.json"
    reviews = json.loads(reviews_file.read_text()) if reviews_file.exists() else {}
    notes_file = BENCH / "notes.md"
    notes = notes_file.read_text().strip() if notes_file.exists() and not ns.quick else ""

    tp_lines, tp_facts = throughput_section(tp, ns.img, rel)
    bug_lines, per = bugs_section(bugs, ns.img, rel)
    st_lines, st_total = stability_section(st)
    date = (machine or {}).get("date", "?")
    doc = [
        "# Benchmarks",
        "",
        f"Generated by `bench/run_all{' --quick' if ns.quick else ''}` on {date}"
        + (" — a **quick smoke run**: short budgets, numbers not comparable with the documented run." if ns.quick
           else "."),
        "Every number below comes from that run's JSON results (`bench/.work/results/`); nothing is edited by hand",
        "except the analysis under *Where fuzzgate falls short* and the reviews of real-server findings.",
        "",
        "## Where fuzzgate stands against its aims",
        "",
        *aims_section(tp_facts, per, st_total, bugs["settings"]["budget_s"] if bugs else None),
        "",
    ]  # fmt: skip
    if notes:
        doc += [notes, ""]
    doc += [
        "## Machine and versions",
        "",
        *machine_section(machine),
        "",
        "## 1. Throughput against the bare SDK",
        "",
        *tp_lines,
        *wholerun_section(load(ns.results, "wholerun.json")),
        "",
        "## 2. Bug finding: fuzzgate and mcp-fuzzer on planted bugs",
        "",
        *bug_lines,
        "",
        "### How reports are mapped to planted bugs",
        "",
        "- Each buggy tool, resource template or prompt carries exactly one planted bug; the servers record each "
        "trigger (and every destructive call) in a ground-truth file, fsynced before misbehaving, independently "
        "of the fuzzer.",
        "- A report maps to planted bug B when it names B's surface (tool name; for mcp-fuzzer's protocol-level "
        "`tools/call` findings, the tool named in the request), B was triggered during that run, and its kind is "
        "one counted for B's symptom (table in [BUGS.md](../bench/servers/BUGS.md)): fuzzgate's kinds must match "
        "exactly (crash → `crash`, exception → `internal_error`, ...); for mcp-fuzzer, which has different "
        "oracles, `crash`, `hang`, `performance_outlier`, `internal_error`/`error_leakage` (exceptions and output "
        "drift), `anomaly` (protocol), plus `non_determinism` for the flaky bug and `accepted_malformed` for the "
        "missing-validation bugs.",
        "- Every other report is a false positive: on a surface with a triggered bug but of another kind "
        "(*wrong kind*), or on a surface without one (a clean tool, a protocol method, a bug never triggered). "
        "fuzzgate's reports are its findings (one per fingerprint, flaky ones included); mcp-fuzzer's are its "
        "distinct (surface, category) pairs over all iterations.",
        "- Time to a bug = its first ground-truth trigger, seconds after the fuzzer was started, for both fuzzers.",
        "- The bugs that answer politely, on the tool that carries them: scope bugs (NOT-1, NOT-2) count fuzzgate's "
        "`scope_escape` and mcp-fuzzer's `path_traversal`; injections (TBX-1, TBX-2) fuzzgate's `injection` or "
        "`scope_escape` (the injected command wrote outside the scope) and mcp-fuzzer's `command_injection`; the "
        "unanswered request (SUR-1) fuzzgate's `protocol_error` or `crash`, mcp-fuzzer's `hang`, `crash` or "
        "`anomaly`; the stateful aborts (INV-1, INV-2) `crash`. Anything on a clean look-alike is a false positive "
        "(rules in [bench/scoring.py](../bench/scoring.py)).",
        "",
        "## 3. Gate stability across seeds",
        "",
        *st_lines,
        "",
        "## 4. Real servers nobody here wrote",
        "",
        *realworld_section(rw, reviews),
        "",
        *timebox_section(load(ns.results, "timebox.json")),
        *polite_section(load(ns.results, "polite.json")),
        *reach_section(load(ns.results, "reach-before.json"), load(ns.results, "reach-after.json")),
        "## How this was run",
        "",
        "```sh",
        commands or "# commands.txt missing",
        "```",
        "",
    ]
    ns.doc.parent.mkdir(parents=True, exist_ok=True)
    ns.doc.write_text("\n".join(doc))
    print(f"wrote {ns.doc}")


if __name__ == "__main__":
    main()
