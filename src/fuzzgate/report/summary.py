"""The job summary: a Markdown page a reviewer reads first, for `$GITHUB_STEP_SUMMARY`.

It says whether the gate passed, what was fuzzed, and for each new, known and fixed finding what
it is and the command that reproduces it. GitHub takes at most 1 MiB per step summary, so long
evidence is cut and, past a budget, whole findings are left out with a note saying so (the full
results are in `report.json`). It shows the target by name only: no command line, URL, env or
header values, any of which can carry a credential. `fuzzgate merge` of several targets writes one
page (`render_summary_many`): the overall verdict, a line per target, then each target's section,
each cut to its share of the limit.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from fuzzgate.check.secrets import REDACTED
from fuzzgate.model.commands import accept_command, prune_command, repro_command, sequence_text
from fuzzgate.model.files import write_atomic
from fuzzgate.model.findings import Cause, Finding, Surface
from fuzzgate.record.results import BaselineState, RunReport, Status, Verdict
from fuzzgate.report.feedback_text import corpus_line, feedback_line, memory_line, probes_line
from fuzzgate.report.locate import source_location

SUMMARY_FILENAME = "summary.md"
SUMMARY_LIMIT = 1024 * 1024
"""GitHub's limit for one step's summary, in bytes."""

_CLOSING_ROOM = 16 * 1024
"""Room left under a limit for the closing notes; the findings may use the rest."""
_MANY_HEAD_ROOM = 64 * 1024
"""Room the page of several targets keeps for its head (the table of targets)."""
_STDERR_LIMIT = 3000
_ERROR_LIMIT = 2000
_FRAMES_LIMIT = 40
_TABLE_ROWS_LIMIT = 1000


def render_summary(report: RunReport, repo_root: Path, *, limit: int = SUMMARY_LIMIT) -> str:
    """The Markdown summary of `report`, paths relative to `repo_root`; always under `limit` bytes."""
    blocks = list(_blocks(report, repo_root))
    budget = limit - min(_CLOSING_ROOM, limit // 8)
    out: list[str] = []
    used = 0
    for index, (block, _) in enumerate(blocks):
        size = len(block.encode("utf-8", "backslashreplace")) + 1
        if used + size > budget:
            left_out = sum(1 for _, is_finding in blocks[index:] if is_finding)
            out.append(
                f"> **Summary cut:** {left_out} more finding(s) not shown, to stay under GitHub's 1 MiB "
                "limit for a job summary. Every finding is in `report.json`.\n"
            )
            break
        out.append(block)
        used += size
    return "\n".join(out + _closing(report))


def render_summary_many(reports: list[RunReport], repo_root: Path, paths: list[str] | None = None) -> str:
    """One page for several targets (`fuzzgate merge`): the overall verdict, a row per target
    (with where its merged `report.json` is, from `paths`), then each target's summary, each
    within an equal share of `SUMMARY_LIMIT`."""
    failed = [r for r in reports if r.verdict is Verdict.FAIL]
    inconclusive = [r for r in reports if r.verdict is Verdict.INCONCLUSIVE]
    if failed:
        head = f"# ❌ fuzzgate failed: {len(failed)} of {len(reports)} target(s)\n"
    elif inconclusive:
        head = f"# ⚠️ fuzzgate inconclusive: {len(inconclusive)} of {len(reports)} target(s)\n"
    else:
        head = f"# ✅ fuzzgate passed: {len(reports)} target(s)\n"
    rows = []
    for index, report in enumerate(reports):
        mark = {Verdict.FAIL: "❌ fail", Verdict.INCONCLUSIVE: "⚠️ inconclusive"}.get(report.verdict, "✅ pass")
        where = _code(paths[index]) if paths is not None else "—"
        cells = (_code(report.target.name), mark, str(len(report.gating())), str(report.calls), where)
        rows.append("| " + " | ".join(_cell(c) for c in cells) + " |\n")
    table = "| Target | Verdict | New failing | Calls | Report |\n|---|---|---:|---:|---|\n" + "".join(rows)
    share = (SUMMARY_LIMIT - _MANY_HEAD_ROOM) // max(1, len(reports))
    sections = [render_summary(report, repo_root, limit=share) for report in reports]
    return "\n".join([head, table, *sections])


def _blocks(report: RunReport, repo_root: Path) -> Iterator[tuple[str, bool]]:
    """The page in pieces, each flagged when it shows one finding (what a cut leaves out)."""
    for block in (*_head(report), _table(report)):
        yield block, False
    for title, findings in _grouped(report):
        if findings:
            yield f"### {title} ({len(findings)})\n", False
            for finding in findings:
                yield _finding(report, repo_root, finding), True
    if report.fixed:
        yield f"### Fixed since the baseline ({len(report.fixed)})\n", False
        for finding in report.fixed:
            yield _finding(report, repo_root, finding, fixed=True), True
        prune = _code_block(prune_command(report.config_path, report.command_flags), "sh")
        yield f"These no longer fail. Remove them from the baseline:\n\n{prune}", False


def _closing(report: RunReport) -> list[str]:
    states = {report.state_of(f) for f in report.findings}
    lines: list[str] = []
    if BaselineState.NEW in states:
        lines += [
            "---\n",
            "To keep the new findings as known bugs instead of fixing them now, record them in the "
            "baseline and commit it:\n",
            _code_block(accept_command(report.config_path, flags=report.command_flags), "sh"),
        ]
    if BaselineState.PRE_EXISTING in states:
        lines += [
            "---\n",
            "The pre-existing findings fail on the base revision too, so this change did not bring them and "
            "they do not fail the gate. To record only them in the baseline:\n",
            _code_block(accept_command(report.config_path, pre_existing=True, flags=report.command_flags), "sh"),
        ]
    return lines


def _head(report: RunReport) -> Iterator[str]:
    gating = report.gating()
    name = _code(report.target.name)
    if report.verdict is Verdict.PASS:
        yield f"## ✅ fuzzgate passed: {name}\n"
        yield f"No new findings at or above **{report.fail_on.value}**.\n"
    elif report.verdict is Verdict.INCONCLUSIVE and report.fuzzed_nothing():
        yield f"## ⚠️ fuzzgate inconclusive: {name}\n"
        yield "No call reached the server, so nothing was tested; the notes say why.\n"
    elif report.verdict is Verdict.INCONCLUSIVE and report.mostly_unsent():
        unsent = report.unsendable + report.client_failed
        yield f"## ⚠️ fuzzgate inconclusive: {name}\n"
        yield (
            f"**{unsent}** requests never reached the server (**{report.calls}** did); "
            f"no new findings at or above **{report.fail_on.value}** among those that did.\n"
        )
    elif report.verdict is Verdict.INCONCLUSIVE:
        untested, fuzzed = report.untested()
        yield f"## ⚠️ fuzzgate inconclusive: {name}\n"
        yield (
            f"**{untested}** of the **{fuzzed}** tools, resources and prompts to fuzz got no call "
            f"(**{report.calls}** calls); no new findings at or above **{report.fail_on.value}** among those called.\n"
        )
    else:
        yield f"## ❌ fuzzgate failed: {name}\n"
        yield f"**{len(gating)}** new finding(s) at or above **{report.fail_on.value}**.\n"
    counts = Counter(report.state_of(f) for f in report.findings)
    flaky = sum(1 for f in report.findings if f.flaky)
    pre = f"pre-existing: {counts[BaselineState.PRE_EXISTING]} · " if counts[BaselineState.PRE_EXISTING] else ""
    yield (
        f"New: {counts[BaselineState.NEW]} · {pre}known: {counts[BaselineState.KNOWN]} · "
        f"fixed: {len(report.fixed)} · flaky: {flaky}\n"
    )
    if report.interrupted:
        yield "> **Interrupted:** the run stopped before its budget was spent; results are partial.\n"
    if report.notes:
        cut = "".join(f"> - {_escape(note)}\n" for note in report.notes)
        yield f"> **Notes** (what the budget cut short, what could not be checked, how the time was spent):\n>\n{cut}"
    if report.containment is not None:
        yield f"> **Containment:** {_escape(report.containment)}\n"
    if (probes := probes_line(report)) is not None:
        yield f"> **Probes:** {_escape(probes)}\n"
    if (feedback := feedback_line(report)) is not None:
        yield f"> **Feedback:** {_escape(feedback)}\n"
    if (corpus := corpus_line(report)) is not None:
        yield f"> **Corpus:** {_escape(corpus)}\n"
    if (memory := memory_line(report)) is not None:
        yield f"> **Memory:** {_escape(memory)}\n"
    server = " ".join(p for p in (report.target.server_name, report.target.server_version) if p)
    facts = [
        ("Seed", f"{_code(str(report.seed))} ({_escape(report.seed_source)})"),
        *([("Shard", f"{report.shard} of the tools")] if report.shard is not None else []),
        ("Budget", f"{report.budget_s:g} s, ran {report.duration_s:.1f} s"),
        ("Calls", str(report.calls)),
        ("Mode", f"{_escape(report.mode)}, fail on {report.fail_on.value}"),
        ("Server", _escape(server) if server else "(not reported)"),
        ("Protocol", _escape(report.target.protocol_version or "(not negotiated)")),
        ("fuzzgate", _escape(report.version)),
    ]
    yield "| | |\n|---|---|\n" + "".join(f"| {k} | {_cell(v)} |\n" for k, v in facts)


_TABLE_LABELS = ("new", "pre-existing", "known", "flaky")


def _table(report: RunReport) -> str:
    per_subject: dict[tuple[Surface, str], Counter[str]] = {}
    for finding in report.findings:
        label = "flaky" if finding.flaky else report.state_of(finding).value
        per_subject.setdefault((finding.surface, finding.name), Counter())[label] += 1
    rows = []
    for entry in report.entries[:_TABLE_ROWS_LIMIT]:
        status = entry.status.value
        if entry.status is not Status.FUZZED and entry.reason:
            status += f": {_escape(entry.reason)}"
        counts = per_subject.get((entry.surface, entry.name))
        found = ", ".join(f"{counts[label]} {label}" for label in _TABLE_LABELS if counts and counts[label]) or "—"
        kind = "" if entry.surface is Surface.TOOL else f"{entry.surface.value} "
        cells = (f"{kind}{_code(entry.name)}", status, str(entry.cases), entry.probes_line(), found)
        rows.append("| " + " | ".join(_cell(c) for c in cells) + " |\n")
    if len(report.entries) > _TABLE_ROWS_LIMIT:
        rows.append(f"| … {len(report.entries) - _TABLE_ROWS_LIMIT} more | | | | |\n")
    if not rows:
        return "### Tools\n\nThe server offered nothing to fuzz.\n"
    return "### Tools\n\n| Tool | Status | Cases | Probes sent | Findings |\n|---|---|---:|---:|---|\n" + "".join(rows)


def _grouped(report: RunReport) -> list[tuple[str, list[Finding]]]:
    gating = {f.fingerprint for f in report.gating()}
    by_severity = sorted(report.findings, key=lambda f: (-f.severity.rank, f.kind.value, f.name))
    new = [f for f in by_severity if report.state_of(f) is BaselineState.NEW]
    return [
        ("New findings", [f for f in new if f.fingerprint in gating]),
        ("New findings that do not fail the gate", [f for f in new if f.fingerprint not in gating]),
        ("Pre-existing findings", [f for f in by_severity if report.state_of(f) is BaselineState.PRE_EXISTING]),
        ("Known findings", [f for f in by_severity if report.state_of(f) is BaselineState.KNOWN]),
    ]


def _finding(report: RunReport, repo_root: Path, finding: Finding, *, fixed: bool = False) -> str:
    labels = [finding.kind.value, finding.severity.value, f"{finding.surface.value} {_code(finding.name)}"]
    notes = []
    if finding.flaky:
        notes.append(f"flaky: reproduced {finding.reproduced} of {finding.replays} replays, never fails the run")
    elif finding.unconfirmed:
        notes.append("unconfirmed: the budget ran out before any replay; seen once, so it counts")
    elif not fixed and finding.cause is Cause.SDK and not report.fail_on_sdk:
        notes.append("caused by the server's SDK: fails no gate without fail_on_sdk")
    elif not fixed and report.state_of(finding) is BaselineState.NEW and not finding.severity.at_least(report.fail_on):
        notes.append(f"below fail-on {report.fail_on.value}")
    if finding.repro.redacted:
        notes.append(f"repro redacted: a secret it sent is written {REDACTED}")
    head = f"#### {' · '.join(labels)}\n\n{_escape(finding.message)}"
    if notes:
        head += f" _({'; '.join(_escape(n) for n in notes)})_"
    command = _code_block(repro_command(finding, report.config_path, report.command_flags), "sh")
    where = source_location(finding, report, repo_root)
    evidence = [f"fingerprint: {finding.fingerprint}", f"reported at: {where.path}:{where.line}"]
    if finding.details.location is not None and finding.details.location != (where.path, where.line):
        path, line = finding.details.location
        evidence.append(f"traceback points at: {path}:{line}")
    if not fixed:
        evidence.append(f"hit {finding.count} time(s); reproduced {finding.reproduced} of {finding.replays} replays")
    if (sequence := sequence_text(finding)) is not None:
        evidence.append(_cut(sequence, _ERROR_LIMIT))
    if finding.details.error:
        evidence.append(f"error: {_cut(finding.details.error, _ERROR_LIMIT)}")
    frames = finding.details.frames
    if frames:
        evidence += ["frames:", *(f"  {frame}" for frame in frames[:_FRAMES_LIMIT])]
        if len(frames) > _FRAMES_LIMIT:
            evidence.append(f"  … {len(frames) - _FRAMES_LIMIT} more frames cut")
    if finding.details.stderr:
        evidence += ["server stderr (last lines):", _tail(finding.details.stderr, _STDERR_LIMIT)]
    details = _code_block("\n".join(evidence), "text")
    return f"{head}\n\n{command}\n<details><summary>Details</summary>\n\n{details}\n</details>\n"


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[… {len(text) - limit} more characters cut; see report.json]"


def _tail(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"[… {len(text) - limit} earlier characters cut; see report.json]\n{text[-limit:]}"


_INLINE_MARKUP = re.compile(r"([\\`*_\[\]<>|~&!#$])")
_BLOCK_START = re.compile(r"[-+=]|\d+[.)]")


def _escape(text: str) -> str:
    """`text` shown as itself on one line: the characters that open emphasis, code, links, tags,
    entities, math or table cells are backslash-escaped, and so is a start that would make a
    list item or a rule."""
    text = _INLINE_MARKUP.sub(r"\\\1", " ".join(text.split()))
    start = _BLOCK_START.match(text)
    if start:
        text = f"{text[: start.end() - 1]}\\{text[start.end() - 1 :]}"
    return text


def _code(text: str) -> str:
    """`text` as an inline code span, with a fence longer than any backtick run inside it."""
    text = " ".join(text.split())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _code_block(text: str, language: str) -> str:
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}{language}\n{text}\n{fence}\n"


def _cell(text: str) -> str:
    # GFM splits table cells on `|` even inside code spans; `\|` keeps it in the cell. Pipes that
    # `_escape` already escaped stay as they are.
    return re.sub(r"(?<!\\)\|", r"\\|", text)


def write_summary(report: RunReport, repo_root: Path, out_dir: Path) -> Path:
    """Write `summary.md` into `out_dir` atomically; returns its path."""
    path = out_dir / SUMMARY_FILENAME
    write_atomic(path, render_summary(report, repo_root))
    return path
