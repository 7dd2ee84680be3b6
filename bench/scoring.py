"""Scoring a fuzzer's reports against the servers' ground truth. Pure functions over plain data.

Mapping rules (also in docs/benchmarks.md):

- A report names a surface (tool, resource template or prompt name) and a kind (fuzzgate) or a
  category (mcp-fuzzer). It maps to planted bug B when B sits on that surface, B was triggered
  during the run (the server's ground-truth file says so), and the kind is one the catalog accepts
  for B's symptom (`catalog.fuzzgate_kinds`, `catalog.mcp_fuzzer_categories`).
- A report on a surface with a triggered bug but of another kind is a *wrong-kind* report; a report
  on any other surface (a clean tool, a protocol method, a bug never triggered) is *unmapped*.
  Both count as false positives.
- Several reports mapping to one bug count once in "bugs reported"; the extras are duplicates.
- A flaky bug is "reported as flaky" when a report maps to it and is labelled flaky (fuzzgate's
  `flaky`, mcp-fuzzer's `non_determinism`).
- Time to a bug is the first ground-truth trigger of that bug, in seconds since the fuzzer was
  started; it is the same clock for every fuzzer and needs no timestamps from the fuzzer.

The bugs that answer politely (servers notes, toolbox, surrogate, inventory) follow the same rules,
on the tool that carries the bug:

- scope (NOT-1 `read_note` reads outside the root, NOT-2 `init_project` makes a folder outside
  it): fuzzgate `scope_escape`; mcp-fuzzer `path_traversal` (its `--security-audit` oracle: a
  `../../../etc/passwd` probe answered with `root:x:0:0`; it has none for a folder made outside).
- injection (TBX-1 `diff_files` passes an option to git, TBX-2 `greet` pastes into `sh -c`):
  fuzzgate `injection`, or `scope_escape` (the injected option or command wrote outside the
  scope: a second view of the same bug, not a false one); mcp-fuzzer `command_injection` (an
  `$(id)`-like probe answered with `uid=`; it has none for an injected option).
- unanswered (SUR-1 `set_title` never answers a call holding a lone surrogate, and dies on the
  next request): fuzzgate `protocol_error`, or `crash` on `set_title`; mcp-fuzzer `hang`,
  `crash` or `anomaly` on `set_title`. A death reported on another surface (the next request's
  method or tool) is unmapped, hence false.
- stateful crash (INV-1 `get_item` after `delete_item`, INV-2 `delete_item` twice): `crash` for
  both fuzzers, on the tool whose call aborted.
- SUR-1 is a bug of the transport, not of `set_title` alone: fuzzgate reports it on the surface
  `server`/`transport`, which counts like the tool.
- Known bugs nobody planted (`catalog.KNOWN_BUGS`): a report of the kind and surface listed, on a
  server whose ground truth recorded the bug (`{"known": ID}`), goes to `known`: neither a planted
  bug found nor a false positive. The one today is SDK-DROP: mcp 2.3 drops a request holding a
  lone surrogate escape without a reply, and fuzzgate reports `protocol_error` on
  `server`/`transport`.
- Any of these kinds on a clean look-alike (`read_note_safe`, `write_note`, `list_notes`,
  `diff_files_safe`, `echo`, `create_item`, `list_items`, `export_items`) is unmapped: a false
  positive. mcp-fuzzer's `injection_reflection` on `echo` (an `$(id)` echoed back) is one, and
  counts among its advisory categories.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from servers.catalog import BUGS, KNOWN_BUGS, PlantedBug, fuzzgate_kinds, mcp_fuzzer_categories

ADVISORY_CATEGORIES = ("accepted_malformed", "injection_reflection")
"""mcp-fuzzer categories that flag input handling as suspicious rather than a failure."""


@dataclass(frozen=True, slots=True)
class Report:
    """One distinct thing a fuzzer reported."""

    surface: str
    name: str
    kind: str
    flaky: bool = False
    label: str = ""
    """How the fuzzer identifies it (fingerprint, or category@target)."""
    message: str = ""


@dataclass
class GroundTruth:
    first_trigger: dict[str, float] = field(default_factory=dict)
    """bug id -> first trigger time (epoch seconds)."""
    triggers: dict[str, int] = field(default_factory=dict)
    destructive: dict[str, int] = field(default_factory=dict)
    known: dict[str, int] = field(default_factory=dict)
    """known (unplanted) bug id -> how many times the server recorded it."""


def read_ground_truth(path: Path) -> GroundTruth:
    truth = GroundTruth()
    if not path.exists():
        return truth
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a line cut short by a kill
        if "bug" in record:
            bug = str(record["bug"])
            truth.triggers[bug] = truth.triggers.get(bug, 0) + 1
            truth.first_trigger[bug] = min(truth.first_trigger.get(bug, record["t"]), record["t"])
        elif "destructive" in record:
            tool = str(record["destructive"])
            truth.destructive[tool] = truth.destructive.get(tool, 0) + 1
        elif "known" in record:
            known = str(record["known"])
            truth.known[known] = truth.known.get(known, 0) + 1
    return truth


def accepted(bug: PlantedBug, fuzzer: str) -> tuple[str, ...]:
    return fuzzgate_kinds(bug) if fuzzer == "fuzzgate" else mcp_fuzzer_categories(bug)


@dataclass
class Score:
    server: str
    fuzzer: str
    triggered: dict[str, float]
    """bug id -> seconds from the fuzzer's start to the first trigger."""
    reported: dict[str, float]
    """bug id -> seconds to its first trigger, for triggered bugs some report maps to."""
    reported_flaky: list[str]
    """Flaky planted bugs reported with a flaky label."""
    deterministic_labelled_flaky: list[str]
    true_reports: list[dict[str, Any]]
    wrong_kind: list[dict[str, Any]]
    unmapped: list[dict[str, Any]]
    destructive_calls: dict[str, int]
    missed: list[str]
    """Planted bugs of this server that were triggered but not reported."""
    not_triggered: list[str]
    known: list[dict[str, Any]] = field(default_factory=list)
    """Reports of a known bug nobody planted that the server recorded (catalog.KNOWN_BUGS)."""

    @property
    def false_positives(self) -> int:
        return len(self.wrong_kind) + len(self.unmapped)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "false_positives": self.false_positives}


def score(server: str, fuzzer: str, reports: Iterable[Report], truth: GroundTruth, started: float) -> Score:
    bugs = [b for b in BUGS if b.server == server]
    by_surface = {where: b for b in bugs for where in ((b.surface, b.name), *b.also)}
    known_here = {
        (k.surface, k.name, kind): k.id
        for k in KNOWN_BUGS
        if server in k.servers and truth.known.get(k.id)
        for kind in k.kinds.get(fuzzer, ())
    }
    known: list[dict[str, Any]] = []
    triggered = {b.id: round(truth.first_trigger[b.id] - started, 2) for b in bugs if b.id in truth.first_trigger}
    reported: dict[str, float] = {}
    flaky: set[str] = set()
    true_reports, wrong_kind, unmapped = [], [], []
    for report in reports:
        bug = by_surface.get((report.surface, report.name))
        entry = asdict(report)
        known_id = known_here.get((report.surface, report.name, report.kind))
        if known_id is not None and (bug is None or bug.id not in triggered):
            known.append({**entry, "bug": known_id})
        elif bug is None or bug.id not in triggered:
            unmapped.append(entry)
        elif report.kind in accepted(bug, fuzzer):
            reported[bug.id] = triggered[bug.id]
            true_reports.append({**entry, "bug": bug.id})
            if report.flaky or report.kind == "non_determinism":
                flaky.add(bug.id)
        else:
            wrong_kind.append({**entry, "bug": bug.id})
    return Score(
        server=server,
        fuzzer=fuzzer,
        triggered=triggered,
        reported=dict(sorted(reported.items())),
        reported_flaky=sorted(b.id for b in bugs if b.flaky and b.id in flaky),
        deterministic_labelled_flaky=sorted(b.id for b in bugs if not b.flaky and b.id in flaky),
        true_reports=true_reports,
        wrong_kind=wrong_kind,
        unmapped=unmapped,
        destructive_calls=dict(truth.destructive),
        missed=sorted(b for b in triggered if b not in reported),
        not_triggered=sorted(b.id for b in bugs if b.id not in triggered),
        known=known,
    )


# ------------------------------------------------------------------------------- report readers


def fuzzgate_reports(report: dict[str, Any]) -> list[Report]:
    return [
        Report(
            surface=f.get("surface", "tool"),
            name=f["name"],
            kind=f["kind"],
            flaky=bool(f.get("flaky")),
            label=f["fingerprint"],
            message=f.get("message", "")[:200],
        )
        for f in report.get("findings", [])
    ]


def _tool_of_protocol_call(finding: dict[str, Any], crashes: dict[tuple[str, int], str]) -> str | None:
    """The tool a protocol-level `tools/call` finding called, from its evidence or its crash file."""
    evidence = finding.get("evidence") or {}
    request = evidence.get("input") if isinstance(evidence, dict) else None
    if isinstance(request, dict):
        params = request.get("params")
        if isinstance(params, dict) and isinstance(params.get("name"), str):
            return str(params["name"])
    return crashes.get((str(finding.get("target")), int(finding.get("run") or -1)))


def mcp_fuzzer_reports(iteration_dirs: Iterable[Path]) -> list[Report]:
    """Distinct (surface, target, category) reports over every mcp-fuzzer iteration's output."""
    seen: dict[tuple[str, str, str], Report] = {}
    for out in iteration_dirs:
        crashes: dict[tuple[str, int], str] = {}
        for crash_file in sorted((out / "crashes").glob("*.json")):
            try:
                crash = json.loads(crash_file.read_text())
                params = crash.get("input", {}).get("params", {})
                if crash.get("kind") == "protocol" and isinstance(params, dict) and "name" in params:
                    crashes[(str(crash.get("target")), int(crash.get("run") or -1))] = str(params["name"])
            except (ValueError, AttributeError, TypeError):
                continue
        findings_file = out / "findings.json"
        findings = json.loads(findings_file.read_text()).get("findings", []) if findings_file.exists() else []
        for f in findings:
            kind, target, category = str(f.get("kind")), str(f.get("target")), str(f.get("category"))
            surface, name = kind, target
            if kind == "protocol" and target == "CallToolRequest":
                tool = _tool_of_protocol_call(f, crashes)
                if tool is not None:
                    surface, name = "tool", tool
            elif kind in ("resource", "prompt"):
                surface = kind
            key = (surface, name, category)
            seen.setdefault(key, Report(surface, name, category, label=f"{category}@{kind}:{target}"))
        for session in sorted((out / "sessions").glob("*/*_fuzzing_results.json")):
            data = json.loads(session.read_text()).get("data", {})
            for tool in data.get("tools_tested", []):
                if (tool.get("outcomes") or {}).get("anomaly"):
                    key = ("tool", str(tool["name"]), "anomaly")
                    seen.setdefault(key, Report("tool", str(tool["name"]), "anomaly", label=f"anomaly@{tool['name']}"))
    return list(seen.values())


def mcp_fuzzer_calls(iteration_dirs: Iterable[Path]) -> int:
    calls = 0
    for out in iteration_dirs:
        summary = out / "run_summary.json"
        if summary.exists():
            data = json.loads(summary.read_text())
            calls += sum(int(t.get("total_runs", 0)) for t in (data.get("tools", {}).get("by_name") or {}).values())
            calls += int((data.get("protocols") or {}).get("total_runs", 0))
    return calls
