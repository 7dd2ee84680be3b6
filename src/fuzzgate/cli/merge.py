"""`fuzzgate merge DIR...`: the output directories of a sharded run (`fuzzgate run --shard I/N`, one
per matrix job), or of runs on several targets, combined into one report per target and one set
of outputs with one verdict.

It is a gate, and a wrong pass is the worst thing it can say, so it refuses (exit 2, nothing
written) rather than merge what does not add up: a report missing or unreadable, a target whose
shards are incomplete, given twice or of different counts, shards that disagree on the seed, the
configuration, the versions or the server, or on the baseline (one calls a finding known that
another calls new).

The contract (docs/sharding.md):

- `<out>/<target-slug>/report.json` for every target: a `RunReport` like a run's, its `shard` None;
- `<out>/report.json` too when there is one target, so `fuzzgate replay` and `fuzzgate baseline
  accept --out <out>` read it as they read a run's; with several there is none (a stale one is
  removed: no reader may take one target's report for the whole merge);
- `<out>/fuzzgate.sarif` (a run per target), `<out>/junit.xml` (a suite per target),
  `<out>/summary.md` (a section per target) and `<out>/merge.json` (the index: verdict, targets,
  their shards and report paths).

Every file is rendered before the first is written, and each is written atomically.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from fuzzgate.cli import interrupt
from fuzzgate.config.model import Shard
from fuzzgate.model.corpus import slug
from fuzzgate.model.errors import ReportError, UsageError
from fuzzgate.model.files import check_output_directory, write_all, write_failed
from fuzzgate.model.findings import Finding, JSONValue, Severity, Surface
from fuzzgate.plan.shards import shard_of
from fuzzgate.record.results import (
    SHARD_REASON_PREFIX,
    BaselineState,
    CorpusSummary,
    FeedbackSummary,
    MemorySummary,
    RunReport,
    SamplingSummary,
    SurfaceEntry,
    Verdict,
    exit_code,
)
from fuzzgate.report import annotations as github_annotations
from fuzzgate.report import json_report
from fuzzgate.report.console import ConsoleReporter
from fuzzgate.report.junit import JUNIT_FILENAME, render_junit, render_junit_many
from fuzzgate.report.locate import repository_root
from fuzzgate.report.sarif import SARIF_FILENAME, render_sarif, render_sarif_many
from fuzzgate.report.summary import SUMMARY_FILENAME, render_summary, render_summary_many
from fuzzgate.report.workflow_commands import write_command

MERGE_INDEX = "merge.json"
MERGE_FORMAT = 1


@dataclass(frozen=True, slots=True)
class ShardReport:
    """One input: a report and the directory it was read from (for messages)."""

    source: Path
    report: RunReport

    @property
    def label(self) -> str:
        shard = self.report.shard
        return f"{'unsharded' if shard is None else f'shard {shard}'} ({self.source})"


@dataclass(frozen=True, slots=True)
class MergedTarget:
    report: RunReport
    sources: tuple[Path, ...]
    """The directories its shards came from, in shard order."""
    shards: int
    """How many shares it was fuzzed in (1: an unsharded run)."""


def read_report(path: Path) -> ShardReport:
    """`path` (an output directory, or its report.json) as a `ShardReport`; `ReportError` if missing
    or not a fuzzgate report."""
    file = path if path.is_file() else path / json_report.REPORT_FILE
    if not file.exists() and not path.exists():
        raise ReportError(f"{path}: no such directory", hint="pass the output directories of `fuzzgate run --shard`")
    return ShardReport(path, json_report.read(file))


def merge_reports(inputs: Sequence[ShardReport], fail_on: Severity | None = None) -> list[MergedTarget]:
    """Group the inputs by target (in the order first given), check each target's shards, and
    merge them. Raises `ReportError` when they do not add up to whole, consistent runs."""
    by_target: dict[str, list[ShardReport]] = {}
    for item in inputs:
        by_target.setdefault(item.report.target.name, []).append(item)
    merged = []
    for name, items in by_target.items():
        ordered = _complete(name, items)
        _agree(name, ordered, check_fail_on=fail_on is None)
        merged.append(
            MergedTarget(
                _merge([i.report for i in ordered], fail_on),
                tuple(i.source for i in ordered),
                len(ordered),
            )
        )
    return merged


def _complete(name: str, items: list[ShardReport]) -> list[ShardReport]:
    """The target's reports in shard order, when they are exactly shards 1/N to N/N (or one
    unsharded report)."""
    unsharded = [i for i in items if i.report.shard is None]
    if unsharded:
        if len(items) == 1:
            return items
        raise ReportError(
            f"target {name}: an unsharded report cannot be merged with others of the same target "
            f"({', '.join(i.label for i in items)})",
            hint="merge the shards of one run (`--shard I/N`), one report per target otherwise",
        )
    shards: list[Shard] = [i.report.shard for i in items if i.report.shard is not None]
    counts = sorted({s.count for s in shards})
    if len(counts) > 1:
        raise ReportError(
            f"target {name}: shards of different counts ({', '.join(i.label for i in items)})",
            hint="merge the shards of one run: all `--shard I/N` with the same N",
        )
    count = counts[0]
    by_index: dict[int, ShardReport] = {}
    for item in items:
        shard = item.report.shard
        assert shard is not None
        if shard.index in by_index:
            raise ReportError(
                f"target {name}: shard {shard} given twice ({by_index[shard.index].source}, {item.source})",
                hint="pass each shard's output directory once",
            )
        by_index[shard.index] = item
    missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in by_index]
    if missing:
        have = ", ".join(by_index[i].label for i in sorted(by_index))
        raise ReportError(
            f"target {name}: shards incomplete: {', '.join(missing)} missing (have {have})",
            hint="a missing shard's tools were not fuzzed: merge only when every shard's job has written its report",
        )
    return [by_index[i] for i in range(1, count + 1)]


_AGREEMENT: tuple[tuple[str, Callable[[RunReport], object]], ...] = (
    ("fuzzgate version", lambda r: r.version),
    ("Hypothesis version", lambda r: r.hypothesis_version),
    ("fingerprint scheme", lambda r: r.fingerprint_scheme),
    ("seed", lambda r: r.seed),
    ("mode", lambda r: r.mode),
    ("budget", lambda r: f"{r.budget_s:g} s"),
    ("config file", lambda r: r.config_path),
    (
        "target",
        lambda r: " ".join(str(p) for p in (r.target.kind, r.target.command, *r.target.args, r.target.url) if p),
    ),
    ("server", lambda r: " ".join(p for p in (r.target.server_name, r.target.server_version) if p) or None),
)


def _agree(name: str, items: list[ShardReport], *, check_fail_on: bool) -> None:
    """Shards of one run agree on what decides their results; say the first thing they do not."""
    checks = [*_AGREEMENT, *([("fail-on", lambda r: r.fail_on.value)] if check_fail_on else [])]
    first = items[0]
    for what, value in checks:
        for other in items[1:]:
            if value(other.report) != value(first.report):
                raise ReportError(
                    f"target {name}: shards disagree on the {what}: {value(first.report)} in {first.label}, "
                    f"{value(other.report)} in {other.label}",
                    hint="merge the shards of one run (same commit, config, seed and fuzzgate)",
                )
    states: dict[str, tuple[BaselineState, ShardReport]] = {}
    for item in items:
        for finding in item.report.findings:
            state = item.report.state_of(finding)
            seen = states.setdefault(finding.fingerprint, (state, item))
            if seen[0] is not state:
                raise ReportError(
                    f"target {name}: shards disagree on the baseline: finding {finding.fingerprint} is "
                    f"{seen[0].value} in {seen[1].label} and {state.value} in {item.label}",
                    hint="every shard must read the same baseline (the one committed at the commit fuzzed)",
                )


def _merge(reports: list[RunReport], fail_on: Severity | None) -> RunReport:
    first = reports[0]
    count = len(reports)
    sharded = first.shard is not None

    def prefixed(report: RunReport, text: str) -> str:
        return f"shard {report.shard}: {text}" if sharded else text

    findings: dict[str, Finding] = {}
    states: dict[str, BaselineState] = {}
    for report in reports:
        for finding in report.findings:
            held = findings.get(finding.fingerprint)
            findings[finding.fingerprint] = finding if held is None else _combine(held, finding)
            states[finding.fingerprint] = report.state_of(finding)
    # Baseline entries no shard found again: each is its owner's (it replayed them); known wins
    # over fixed should two say different things, since "fixed" needs evidence.
    for report in reports:
        for fingerprint, state in report.states.items():
            if fingerprint in findings:
                continue
            if states.get(fingerprint) is not BaselineState.KNOWN:
                states[fingerprint] = state
    fixed: dict[str, Finding] = {}
    for report in reports:
        for entry in report.fixed:
            if states.get(entry.fingerprint) is BaselineState.FIXED:
                fixed.setdefault(entry.fingerprint, entry)
    draft = replace(
        first,
        shard=None,
        duration_s=max(r.duration_s for r in reports),
        calls=sum(r.calls for r in reports),
        unsendable=sum(r.unsendable for r in reports),
        client_failed=sum(r.client_failed for r in reports),
        cut_off=tuple(call for r in reports for call in r.cut_off),
        fail_on=fail_on if fail_on is not None else first.fail_on,
        entries=_entries(reports, count),
        findings=tuple(findings.values()),
        states=states,
        fixed=tuple(fixed.values()),
        resources=_union(r.resources for r in reports),
        prompts=_union(r.prompts for r in reports),
        interrupted=any(r.interrupted for r in reports),
        notes=tuple(prefixed(r, note) for r in reports for note in r.notes),
        timing={k: max(r.timing.get(k, 0.0) for r in reports) for k in _union(r.timing for r in reports)},
        containment=_one_text([(r, r.containment) for r in reports], prefixed),
        feedback=_feedback(reports, prefixed),
        corpus=_corpus(reports, prefixed),
        memory=_memory(reports),
        # A shard's `--out` is its own job's directory, not where the merge writes.
        command_flags=tuple(flag for flag in first.command_flags if not flag.startswith("--out=")),
    )
    return replace(draft, verdict=draft.decide())


def _memory(reports: Sequence[RunReport]) -> MemorySummary | None:
    """The largest peak any share read, beside the largest limit (the shares of one target share
    its config, so one limit); None when no share watched its servers' memory."""
    watched = [r.memory for r in reports if r.memory is not None]
    if not watched:
        return None
    return MemorySummary(limit=max(m.limit for m in watched), peak=max(m.peak for m in watched))


def _combine(held: Finding, other: Finding) -> Finding:
    """One bug two shards found (a transport finding, a concrete resource URI): the smaller repro
    and both counts, except that a confirmed copy beats a flaky one (a flaky finding never fails
    the gate, and a shard that confirmed it has the evidence)."""
    if held.flaky != other.flaky:
        solid = other if held.flaky else held
        return replace(solid, count=held.count + other.count)
    return held.merged_with(other)


def _entries(reports: list[RunReport], count: int) -> tuple[SurfaceEntry, ...]:
    """Each tool, prompt and resource as the shard that owned it saw it; in the first shard's order."""
    order: dict[tuple[Surface, str], None] = {}
    listed: dict[tuple[Surface, str], list[tuple[int, SurfaceEntry]]] = {}
    for position, report in enumerate(reports, start=1):
        for entry in report.entries:
            key = (entry.surface, entry.name)
            order.setdefault(key, None)
            listed.setdefault(key, []).append((report.shard.index if report.shard else position, entry))
    chosen = []
    for key in order:
        seen = listed[key]
        owner = shard_of(key[0], key[1], count) if count > 1 else seen[0][0]
        own = [e for index, e in seen if index == owner]
        decided = [e for _, e in seen if not (e.reason or "").startswith(SHARD_REASON_PREFIX)]
        chosen.append((own or decided or [seen[0][1]])[0])
    return tuple(chosen)


def _union(groups: Iterable[Iterable[str]]) -> tuple[str, ...]:
    """Every value of the groups once, in the order first seen."""
    out: dict[str, None] = {}
    for group in groups:
        out.update(dict.fromkeys(group))
    return tuple(out)


def _one_text(values: list[tuple[RunReport, str | None]], prefixed: Callable[[RunReport, str], str]) -> str | None:
    """The shards' text when they all say the same; else each shard's, prefixed."""
    texts = {text for _, text in values}
    if len(texts) == 1:
        return values[0][1]
    return "; ".join(prefixed(report, text) for report, text in values if text is not None)


def _feedback(reports: list[RunReport], prefixed: Callable[[RunReport, str], str]) -> FeedbackSummary | None:
    parts = [r.feedback for r in reports if r.feedback is not None]
    if not parts:
        return None
    signals = {p.signal for p in parts}
    return FeedbackSummary(
        signal=parts[0].signal if len(signals) == 1 else "behaviour",
        note=_one_text([(r, r.feedback.note) for r in reports if r.feedback is not None], prefixed) or "",
        # Behaviours are each tool's own: the shards' add up. Lines, arcs and constants are the
        # server's code, which every shard reaches some of: the most any shard reached is what the
        # reports can tell (a lower bound of the union).
        behaviours=sum(p.behaviours for p in parts),
        lines=max(p.lines for p in parts),
        arcs=max(p.arcs for p in parts),
        constants=max(p.constants for p in parts),
        sampling=_sampling([p.sampling for p in parts if p.sampling is not None]),
    )


def _sampling(parts: list[SamplingSummary]) -> SamplingSummary | None:
    """The shards' sampling: their tools together, their calls added up."""
    if not parts:
        return None
    return SamplingSummary(
        every=parts[0].every,
        plateau=parts[0].plateau,
        tools=tuple(dict.fromkeys(tool for part in parts for tool in part.tools)),
        measured=sum(part.measured for part in parts),
        unmeasured=sum(part.unmeasured for part in parts),
    )


def _corpus(reports: list[RunReport], prefixed: Callable[[RunReport, str], str]) -> CorpusSummary | None:
    parts = [r.corpus for r in reports if r.corpus is not None]
    if not parts:
        return None
    # Every shard loaded the same corpus and replayed its own tools' entries of it.
    loaded = max(p.loaded for p in parts)
    replayed = sum(p.replayed for p in parts)
    colds = {p.cold for p in parts}
    errors = [prefixed(r, r.corpus.save_error) for r in reports if r.corpus is not None and r.corpus.save_error]
    return CorpusSummary(
        path=parts[0].path if len({p.path for p in parts}) == 1 else None,
        loaded=loaded,
        skipped=_union(p.skipped for p in parts),
        cold=parts[0].cold if len(colds) == 1 else None,
        replayed=replayed,
        kept=sum(p.kept for p in parts),
        not_replayed=max(0, loaded - replayed),
        replay_s=max(p.replay_s for p in parts),
        added=sum(p.added for p in parts),
        saved=sum(p.saved for p in parts),
        save_error="; ".join(errors) or None,
    )


_TOP_FILES = (json_report.REPORT_FILE, SARIF_FILENAME, JUNIT_FILENAME, SUMMARY_FILENAME, MERGE_INDEX)
"""The files a merge writes at the top of its output directory."""


def render_outputs(targets: list[MergedTarget], out_dir: Path, repo_root: Path) -> dict[Path, str]:
    """Every file of the merge, by path: rendered whole before anything is written. Raises
    `ReportError` past GitHub's SARIF limits."""
    reports = [t.report for t in targets]
    slugs = _slugs([r.target.name for r in reports])
    files: dict[Path, str] = {}
    for report, name in zip(reports, slugs, strict=True):
        files[out_dir / name / json_report.REPORT_FILE] = json_report.render(report)
    if len(reports) == 1:
        (report,) = reports
        files[out_dir / json_report.REPORT_FILE] = json_report.render(report)
        files[out_dir / SARIF_FILENAME] = render_sarif(report, repo_root)
        files[out_dir / JUNIT_FILENAME] = render_junit(report, repo_root)
        files[out_dir / SUMMARY_FILENAME] = render_summary(report, repo_root)
    else:
        paths = [f"{name}/{json_report.REPORT_FILE}" for name in slugs]
        files[out_dir / SARIF_FILENAME] = render_sarif_many(reports, repo_root)
        files[out_dir / JUNIT_FILENAME] = render_junit_many(reports, repo_root)
        files[out_dir / SUMMARY_FILENAME] = render_summary_many(reports, repo_root, paths)
    files[out_dir / MERGE_INDEX] = json.dumps(_index(targets, slugs), indent=2, ensure_ascii=False) + "\n"
    return files


def _slugs(names: list[str]) -> list[str]:
    """A directory name per target, distinct even where two names slug alike."""
    out: list[str] = []
    for name in names:
        base = candidate = slug(name)
        n = 1
        while candidate in out:
            n += 1
            candidate = f"{base}-{n}"
        out.append(candidate)
    return out


def _index(targets: list[MergedTarget], slugs: list[str]) -> dict[str, JSONValue]:
    return {
        "format": MERGE_FORMAT,
        "verdict": overall([t.report.verdict for t in targets]).value,
        "targets": [
            {
                "name": t.report.target.name,
                "report": f"{name}/{json_report.REPORT_FILE}",
                "verdict": t.report.verdict.value,
                "shards": t.shards,
                "sources": [str(s) for s in t.sources],
                "findings": len(t.report.findings),
                "gating": len(t.report.gating()),
                "calls": t.report.calls,
            }
            for t, name in zip(targets, slugs, strict=True)
        ],
    }


def write_outputs(targets: list[MergedTarget], out_dir: Path, repo_root: Path) -> list[Path]:
    """Every file of the merge or none (`write_all`): a full disk leaves the previous outputs as
    they were. Raises `OSError`."""
    files = render_outputs(targets, out_dir, repo_root)
    write_all(files)
    stale = out_dir / json_report.REPORT_FILE
    if len(targets) > 1 and stale.is_file():
        stale.unlink()
    return list(files)


def merge_command(
    console: Console, dirs: Sequence[Path], *, out: Path, fail_on: Severity | None, quiet: bool = False
) -> int:
    """`fuzzgate merge`: exit 0 when every target passes, 1 when one fails, 2 on bad input."""
    resolved_out = out.resolve()
    for path in dirs:
        if path.resolve() in (resolved_out, resolved_out / json_report.REPORT_FILE):
            raise UsageError(f"--out {out} is one of the directories merged", hint="write the merge elsewhere")
    inputs = [read_report(path) for path in dirs]
    targets = merge_reports(inputs, fail_on)
    check_output_directory(out, what="output directory (--out)", files=_TOP_FILES)
    repo_root = repository_root(Path.cwd())
    with interrupt.deferred():
        # A signal waits until the last file is written: a merge never leaves half its outputs.
        try:
            written = write_outputs(targets, out, repo_root)
        except OSError as exc:
            # Checked before (`check_output_directory`); what changed since is said in one line.
            raise write_failed("the outputs", out, exc, hint="choose another --out, or fix its permissions") from None
    reporter = ConsoleReporter(console)
    for target in targets:
        report = target.report
        if not quiet:
            reporter.summary(report)
        shards = f"{target.shards} shards" if target.shards > 1 else "1 report"
        console.print(
            f"merged {escape(report.target.name)} from {shards}: {len(report.findings)} finding(s), "
            f"{len(report.gating())} failing, {report.calls} calls: {report.verdict.value.upper()}"
        )
    console.print(f"wrote {', '.join(escape(str(p)) for p in written if p.parent == out)}")
    _github_extras([t.report for t in targets], repo_root, out)
    return exit_code(overall([t.report.verdict for t in targets]))


def overall(verdicts: list[Verdict]) -> Verdict:
    """Several targets' verdict: any failure fails; else any inconclusive one leaves it inconclusive."""
    for verdict in (Verdict.FAIL, Verdict.INCONCLUSIVE):
        if verdict in verdicts:
            return verdict
    return Verdict.PASS


def _github_extras(reports: list[RunReport], repo_root: Path, out: Path) -> None:
    """What `fuzzgate run` adds under GitHub Actions: the summary, annotations for failing findings."""
    if summary_path := os.environ.get("GITHUB_STEP_SUMMARY"):
        if len(reports) == 1:
            text = render_summary(reports[0], repo_root)
        else:
            paths = [str(out / name / json_report.REPORT_FILE) for name in _slugs([r.target.name for r in reports])]
            text = render_summary_many(reports, repo_root, paths)
        with open(summary_path, "a", encoding="utf-8", errors="backslashreplace") as handle:
            handle.write(text + "\n")
    if os.environ.get("GITHUB_ACTIONS") == "true":
        for report in reports:
            for line in github_annotations.annotations(report, repo_root):
                write_command(line)
