"""Reach (issue 10): does fuzzgate get past the servers' validation to the code behind it?

    python bench/reach.py [--quick] [--fuzzgate-venv DIR] [--label before|after] [--parts planted,real]
                          [--budget 60] [--real-budget 30] [--servers listing,...] [--real-servers time,...]
                          [--seed SHA] [--out FILE]
    python bench/reach.py --rescore FILE        # recompute the real-server shares from the kept traces
    python bench/reach.py --markdown [--before FILE] [--after FILE]

Two parts, one JSON file (default bench/.work/results/reach-LABEL.json; LABEL is `before` when a
snapshot venv is given, `after` otherwise):

- planted: fuzzgate on the reach servers (`catalog.REACH_SERVERS`, one planted bug class each, with
  clean look-alikes) through `bugs.run_fuzzgate_on`: the same command line, config
  (`[allow_destructive]` for `delete_draft`), ground truth and scoring as bench/bugs.py. Per class:
  found (seconds from fuzzgate's start to the bug's first ground-truth trigger, the call the report
  comes from), missed, false positives. Aim: every class within 60 s per server, no false positive.
- real: fuzzgate on the real reference servers of bench/realworld.py (server-everything,
  server-filesystem, mcp-server-time, mcp-server-git), through `realworld.fuzz`: its sandbox
  (`--sandbox required`) and the whole run inside ../shared/tools/netjail.sh, with `--trace`. From
  the trace, per tool, the share of calls that reached the tool's code, by the rule below.

The rule, applied to every line of fuzzgate's `--trace` file (one line per call: `tool`, `status`,
`rpc_code`, `text`, and `surface` where the fuzzgate writes it; calls to a resource or prompt are
grouped under their surface). Each call sent gets one verdict:

- **schema**: rejected by the server's validation of the arguments against the schema: a JSON-RPC
  error -32602 (invalid params), or an error (`isError` result or JSON-RPC error) whose text is an
  SDK's validation message (`SCHEMA` below: pydantic's "N validation error for ...Arguments", zod's
  "Input validation error: Invalid arguments for tool ...");
- **refused**: the tool's own code refused the argument values before doing its work: an error
  whose text matches `REFUSAL` ("Invalid timezone", "Missing required argument", "must be",
  "outside the allowed repository", "Access denied - path outside allowed directories", "Cannot
  specify both ...", "embedded null byte", "requires task augmentation": the call's form, not its
  values, refused). The trace cuts a text at 500 characters, so a refusal quoting a long value may
  lose the words that say so and count as reached;
- **reached**: answered otherwise (a result, or an error of the work itself: ENOENT, "fetch
  failed"), or left pending (timed out, or the server died): the tool's code took it in;
- **accepted** (a subset of reached): a result without `isError` (`ok`, or `output_invalid`);
- calls fuzzgate could not send (`unsendable`, `aborted`, `unsupported`) are counted apart.

Per tool: `past schema` = 1 - schema/sent (the calls that got past validation), `reached` =
reached/sent (the calls that reached the tool's code: neither a -32602 nor a validation or
argument rejection), `accepted` = accepted/sent. On mcp-server-time the headline is `accepted`: a
call that names a real IANA timezone.

`--fuzzgate-venv DIR` (or $BENCH_FUZZGATE_VENV, see bench/README.md) runs another fuzzgate: "before"
is measured with a snapshot of the commit before issue 10 (`python bench/snapshot.py REV` makes one),
"after" with .venv's. The traces and run directories stay under bench/.work/reach/LABEL/.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / ".work" / "results"
REAL_SERVERS = ("everything", "filesystem", "time", "git")
DEFAULT_SEED = "3f1c9a7e5b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a"

SCHEMA = re.compile(
    r"validation errors? for \w+|Input validation error|Invalid arguments for tool|\[type=\w+|\binvalid_type\b",
    re.IGNORECASE,
)
"""The SDKs' messages for arguments that break the input schema (pydantic, zod)."""
REFUSAL = re.compile(
    r"\binvalid\b|\brequired\b|\bmissing\b|must be|\bexpected\b|not a valid|outside (?:the )?allowed"
    r"|access denied|cannot specify|unknown (?:tool|argument|parameter|prompt)|task augmentation|null byte",
    re.IGNORECASE,
)
"""A tool's own refusal of the argument values (or of the call's form) before its work."""
ANSWERED = ("ok", "output_invalid", "tool_error", "rpc_error")
PENDING = ("timeout", "closed")
ACCEPTED = ("ok", "output_invalid")


# ------------------------------------------------------------------------------- the rule


def outcome_of(record: dict[str, Any]) -> str:
    """One trace line's verdict: `accepted`, `reached`, `refused`, `schema` or `unsent` (see the docstring)."""
    status = str(record.get("status"))
    if status in ACCEPTED:
        return "accepted"
    if status in PENDING:
        return "reached"
    if status not in ANSWERED:
        return "unsent"
    text = str(record.get("text") or "")
    if record.get("rpc_code") == -32602 or SCHEMA.search(text):
        return "schema"
    return "refused" if REFUSAL.search(text) else "reached"


_PREFIX = re.compile(
    r"^(?:MCP error -?\d+: )?(?:Input validation error: Invalid arguments for tool [\w.-]+: )?"
    r"(?:Error executing tool [\w.-]+: )?"
)


def _shape(text: str) -> str:
    """An error text without the SDK's prefixes, its values and paths blurred, to count texts by kind."""
    text = _PREFIX.sub("", text)
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", text)
    text = re.sub(r"/[^\s'\"]+", "/…", text)
    text = re.sub(r"\d+", "N", text)
    return "".join(c if c.isprintable() else "?" for c in " ".join(text.split()))[:100]


def trace_stats(trace: Path) -> dict[str, dict[str, Any]]:
    """Per `surface tool` (`tool NAME`, `resource URI-TEMPLATE`, ...): calls, shares and the commonest
    rejection and refusal texts."""
    per: dict[str, dict[str, Any]] = {}
    if not trace.exists():
        return per
    with trace.open(encoding="utf-8") as lines:
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line cut short
            key = f"{record.get('surface', 'tool')} {record.get('tool')}"
            counts = dict.fromkeys(("calls", "accepted", "reached", "refused", "schema", "unsent", "schema_valid"), 0)
            entry = per.setdefault(key, {**counts, "rejections": Counter(), "refusals": Counter()})
            verdict = outcome_of(record)
            entry["calls"] += 1
            entry[verdict] += 1
            entry["schema_valid"] += bool(record.get("schema_valid"))
            if verdict == "accepted":
                entry["reached"] += 1
            elif verdict in ("schema", "refused"):
                bucket = "rejections" if verdict == "schema" else "refusals"
                entry[bucket][_shape(str(record.get("text") or ""))] += 1
    out: dict[str, dict[str, Any]] = {}
    for key, e in sorted(per.items()):
        sent = e["calls"] - e["unsent"]

        def share(n: int, sent: int = sent) -> float | None:
            return round(n / sent, 4) if sent else None

        out[key] = {
            **{k: e[k] for k in ("calls", "accepted", "reached", "refused", "schema", "unsent", "schema_valid")},
            "past_schema_share": share(sent - e["schema"]),
            "reached_share": share(e["reached"]),
            "accepted_share": share(e["accepted"]),
            "top_rejections": e["rejections"].most_common(3),
            "top_refusals": e["refusals"].most_common(3),
        }
    return out


# ------------------------------------------------------------------------------- the runs


def _git_head() -> str:
    out = subprocess.run(["git", "-C", str(BENCH.parent), "rev-parse", "--short", "HEAD"], capture_output=True,
                         text=True, check=False)  # fmt: skip
    return out.stdout.strip() or "?"


def planted(servers: list[str], budget: float, seed: str, work: Path, result: dict[str, Any], out: Path) -> None:
    from bugs import fresh_dir, run_fuzzgate_on
    from procs import log, save_json

    for server in servers:
        log(f"planted: fuzzgate on {server} for {budget:g}s")
        before = os.getloadavg()[0]
        try:
            run = run_fuzzgate_on(server, budget, seed, fresh_dir(work / "planted" / server))
        except Exception as exc:  # one broken run must not lose the others
            result["errors"].append(f"planted {server}: {exc}")
            log(f"  failed: {exc}")
            continue
        run.update(load_before=round(before, 2), load_after=round(os.getloadavg()[0], 2))
        sc = run["score"]
        log(f"  reported {sorted(sc['reported'])}, missed {sc['missed']}, not triggered {sc['not_triggered']}, "
            f"false positives {sc['false_positives']}")  # fmt: skip
        result["planted"].append(run)
        save_json(out, result)


def real(servers: list[str], budget: float, work: Path, result: dict[str, Any], out: Path) -> None:
    from procs import log, save_json
    from realworld import fuzz, targets

    all_targets = targets()
    for name in servers:
        target = all_targets[name]
        if target["version"] == "not installed":
            result["errors"].append(f"{target['package']} is not installed under bench/.work (run bench/run_all)")
            continue
        log(f"real: fuzzgate on {target['package']} {target['version']} for {budget:g}s, in netjail")
        run_dir = work / "real" / name
        before = os.getloadavg()[0]
        try:
            entry = fuzz(name, target, budget, "required", work=run_dir)
        except Exception as exc:
            result["errors"].append(f"real {name}: {exc}")
            log(f"  failed: {exc}")
            continue
        entry.update(load_before=round(before, 2), load_after=round(os.getloadavg()[0], 2),
                     trace=str(run_dir / "trace.jsonl"), reach=trace_stats(run_dir / "trace.jsonl"))  # fmt: skip
        for key, s in entry["reach"].items():
            log(
                f"  {key}: {s['calls']} calls, past schema {s['past_schema_share']}, reached {s['reached_share']}, "
                f"accepted {s['accepted_share']}"
            )
        result["real"].append(entry)
        save_json(out, result)


def measure(ns: argparse.Namespace) -> None:
    from procs import FUZZGATE, WORK, fuzzgate_version, log, save_json

    work = WORK / "reach" / ns.label
    result: dict[str, Any] = {
        "label": ns.label,
        "settings": {"budget_s": ns.budget, "real_budget_s": ns.real_budget, "seed": ns.seed,
                     "fuzzgate_venv": os.environ.get("BENCH_FUZZGATE_VENV", ""), "fuzzgate": FUZZGATE},
        "fuzzgate_version": fuzzgate_version(),
        "git": _git_head(),
        "snapshot": Path(os.environ["BENCH_FUZZGATE_VENV"]).parent.name if os.environ.get("BENCH_FUZZGATE_VENV")
        else "",
        "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "planted": [],
        "real": [],
        "errors": [],
    }  # fmt: skip
    parts = ns.parts.split(",")
    if "planted" in parts:
        planted(ns.servers.split(","), ns.budget, ns.seed, work, result, ns.out)
    if "real" in parts:
        real(ns.real_servers.split(","), ns.real_budget, work, result, ns.out)
    result["finished"] = time.strftime("%Y-%m-%d %H:%M:%S %z")
    save_json(ns.out, result)
    log(f"wrote {ns.out}")


def rescore(path: Path) -> None:
    """Recompute every real server's shares from its kept trace (after a change of the rule)."""
    from procs import save_json

    data = json.loads(path.read_text())
    for entry in data["real"]:
        entry["reach"] = trace_stats(Path(entry["trace"]))
    save_json(path, data)


# ------------------------------------------------------------------------------- the section


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    return out + ["| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in row) + " |" for row in rows]


def _pct(share: float | None) -> str:
    return "-" if share is None else f"{share * 100:.0f}%"


def _found(run: dict[str, Any] | None, bug: str) -> str:
    if run is None:
        return "not run"
    score = run["score"]
    if bug in score["reported"]:
        return f"**found** ({score['reported'][bug]:.1f} s)"
    if bug in score["triggered"]:
        return f"missed (triggered at {score['triggered'][bug]:.1f} s)"
    return "missed (never triggered)"


def _fps(run: dict[str, Any] | None) -> str:
    if run is None:
        return "not run"
    score = run["score"]
    fps = [*score["wrong_kind"], *score["unmapped"]]
    text = str(len(fps))
    if fps:
        text += " (" + ", ".join(sorted({f"{x['kind']} on {x['name']}" for x in fps})) + ")"
    if score["known"]:
        text += f"; SDK-DROP {len(score['known'])}"
    return text


def _when(data: dict[str, Any]) -> str:
    who = f"snapshot {data['snapshot']}" if data.get("snapshot") else f"fuzzgate at git {data.get('git', '?')}"
    return f"{who}, {data.get('started', '?')[:16]}"


def section(before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[str]:
    """§8 of docs/benchmarks.md: the planted reach classes and the real servers' reach, before and after."""
    from servers.catalog import BUGS, CLEAN_LOOKALIKES, REACH_SERVERS, PlantedBug

    runs = [("before", before), ("after", after)]
    present = [(label, data) for label, data in runs if data]
    out = [
        "## 8. Reach: the code behind validation (issue 10)",
        "",
        "Measured with `bench/reach.py` (rule and commands in its docstring and under *How this was run*): "
        + "; ".join(f"**{label}**: {_when(data)}" for label, data in present)
        + ("; **after**: not measured yet" if not after else "")
        + ".",
        "",
    ]
    for label, data in present:
        if data.get("errors"):
            out += [f"Errors ({label}): " + "; ".join(f"`{e[:300]}`" for e in data["errors"]), ""]
    budgets = {data["settings"]["budget_s"] for _, data in present}
    out += ["### Planted reach classes", "",
            f"One server per class in [bench/servers/](../bench/servers/BUGS.md), fuzzgate with its defaults "
            f"(`--budget {'/'.join(f'{b:g}' for b in sorted(budgets))}s`, bugs.py's seed, `[allow_destructive]` "
            "for `delete_draft`), scored by `bench/scoring.py` against the servers' ground truth as in §2: "
            "**found** = reported as that bug (seconds from fuzzgate's start to the bug's first trigger); "
            "false positives = every other report (a clean look-alike, another kind).", ""]  # fmt: skip

    def run_of(data: dict[str, Any] | None, server: str) -> dict[str, Any] | None:
        return next((r for r in data["planted"] if r["server"] == server), None) if data else None

    rows = []
    for server in REACH_SERVERS:
        bugs: list[PlantedBug | None] = [b for b in BUGS if b.server == server]
        for bug in bugs or [None]:
            rows.append([
                bug.bug_class if bug else "(clean twin)", bug.id if bug else "-", f"`{server}`",
                *(_found(run_of(d, server), bug.id) if bug else "-" for _, d in runs),
                *(_fps(run_of(d, server)) for _, d in runs), CLEAN_LOOKALIKES.get(server, "-"),
            ])  # fmt: skip
    out += _table(["class", "bug", "server", "before", "after", "false positives before", "false positives after",
                   "clean look-alike"], rows)  # fmt: skip
    totals = []
    for label, data in present:
        found = sum(len(r["score"]["reported"]) for r in data["planted"])
        fps = sum(r["score"]["false_positives"] for r in data["planted"])
        calls = sum(r["calls"] for r in data["planted"])
        wall = " / ".join(f"{r['wall_s']:.0f}" for r in data["planted"])
        totals.append([label, f"**{found}** of {sum(1 for b in BUGS if b.server in REACH_SERVERS)}", fps,
                       f"{calls:,}", wall])  # fmt: skip
    out += ["", *_table(["run", "found", "false positives", "calls", "wall s per server (" + ", ".join(REACH_SERVERS)
                         + ")"], totals)]  # fmt: skip
    out += ["", "### Real servers: the share of calls that reached the tool's code", "",
            "From fuzzgate's `--trace` of one run per server (`--budget "
            + "/".join(f"{d['settings']['real_budget_s']:g}" for _, d in present)
            + "s`, `--sandbox required`, inside netjail, as in §7), every call given one verdict by "
            "`bench/reach.py`'s rule: *past schema* = not a -32602 and not an SDK's schema-validation message; "
            "*reached* = also not refused by the tool's own check of the values (\"Invalid timezone\", \"outside "
            "the allowed repository\", \"Access denied - path outside allowed directories\", ...): answered with "
            "a result or an error of the work itself (ENOENT, \"fetch failed\"), or left pending; *accepted* = a "
            "result without `isError`. Shares of the calls sent to the tool, before → after.",
            ""]  # fmt: skip

    def stats_of(data: dict[str, Any] | None, server: str) -> dict[str, Any]:
        entry = next((e for e in data["real"] if e["server"] == server), None) if data else None
        return entry["reach"] if entry else {}

    def pair(b: dict[str, Any] | None, a: dict[str, Any] | None, field: str, bold: bool = False) -> str:
        text = f"{_pct(b[field]) if b else '-'} → {_pct(a[field]) if a else '-'}"
        return f"**{text}**" if bold else text

    names = [s for s in REAL_SERVERS if any(stats_of(d, s) for _, d in present)]
    rows = []
    for server in names:
        keys = sorted(set(stats_of(before, server)) | set(stats_of(after, server)))
        for key in keys:
            was, now = stats_of(before, server).get(key), stats_of(after, server).get(key)
            rows.append([
                server, f"`{key.removeprefix('tool ')}`",
                f"{was['calls'] if was else '-'} → {now['calls'] if now else '-'}",
                pair(was, now, "past_schema_share"), pair(was, now, "reached_share", bold=server != "time"),
                pair(was, now, "accepted_share", bold=server == "time"),
            ])  # fmt: skip
    out += _table(["server", "tool", "calls", "past schema", "reached", "accepted"], rows)
    out += ["", "<details><summary>the commonest rejections and refusals per tool (values blurred)</summary>", ""]
    rows = []
    for label, data in present:
        for entry in data["real"]:
            for key, s in entry["reach"].items():
                rejections = "; ".join(f"{n}× `{t}`" for t, n in s["top_rejections"]) or "-"
                refusals = "; ".join(f"{n}× `{t}`" for t, n in s["top_refusals"]) or "-"
                rows.append([label, entry["server"], f"`{key.removeprefix('tool ')}`", s["schema"], rejections,
                             s["refused"], refusals])  # fmt: skip
    out += _table(["run", "server", "tool", "schema", "commonest schema rejections", "refused",
                   "commonest refusals"], rows)  # fmt: skip
    out += ["", "</details>", ""]
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--fuzzgate-venv", type=Path, help="a snapshot venv (bench/snapshot.py); sets BENCH_FUZZGATE_VENV")
    p.add_argument("--label", choices=("before", "after"), help="default: before with a snapshot venv, else after")
    p.add_argument("--quick", action="store_true", help="10 s per planted server, 5 s per real one")
    p.add_argument("--parts", default="planted,real")
    p.add_argument("--budget", type=float, default=60.0, help="seconds per planted server")
    p.add_argument("--real-budget", type=float, default=30.0, help="seconds per real server")
    p.add_argument("--servers", help="planted servers (default: catalog.REACH_SERVERS)")
    p.add_argument("--real-servers", default=",".join(REAL_SERVERS))
    p.add_argument("--seed", default=DEFAULT_SEED)
    p.add_argument("--out", type=Path)
    p.add_argument("--rescore", type=Path, metavar="FILE")
    p.add_argument("--markdown", action="store_true", help="print §8 from --before and --after")
    p.add_argument("--before", type=Path, default=RESULTS / "reach-before.json")
    p.add_argument("--after", type=Path, default=RESULTS / "reach-after.json")
    ns = p.parse_args()
    if ns.markdown:
        before, after = (json.loads(f.read_text()) if f.exists() else None for f in (ns.before, ns.after))
        print("\n".join(section(before, after)))
        return
    if ns.rescore:
        rescore(ns.rescore)
        return
    if ns.quick:
        ns.budget, ns.real_budget = 10.0, 5.0
    venv = ns.fuzzgate_venv or (Path(os.environ["BENCH_FUZZGATE_VENV"]) if os.environ.get("BENCH_FUZZGATE_VENV")
                                else None)  # fmt: skip
    if venv is not None:
        if not (venv / "bin" / "fuzzgate").exists():
            sys.exit(f"no fuzzgate in {venv} (make a snapshot with bench/snapshot.py)")
        os.environ["BENCH_FUZZGATE_VENV"] = str(venv.resolve())  # procs reads it when first imported, below
    ns.label = ns.label or ("before" if venv is not None else "after")
    ns.out = ns.out or RESULTS / f"reach-{ns.label}.json"
    if ns.servers is None:
        from servers.catalog import REACH_SERVERS

        ns.servers = ",".join(REACH_SERVERS)
    measure(ns)


if __name__ == "__main__":
    main()
