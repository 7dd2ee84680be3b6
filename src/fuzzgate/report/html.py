"""The HTML report: one self-contained page drawn from the shared store alone.

Per target it shows the environments statistics came from, the workers, a table per tool (prompt,
resource) of calls, behaviours discovered, corpus entries and findings by state, counts over time
as inline SVG, and every finding with the command that reproduces it.

Everything in the page that came from the store is hostile: a server's names and messages, a
worker's host name, a target's name. Each such string is redacted (`Redactor`: the built-in secret
patterns and the user's), made visible (control characters as escapes) and HTML-escaped in one
place, `_Page.text`; no markup is ever built from it. The page loads nothing: its
Content-Security-Policy allows only its own style and script, by hash, so even a string that slipped
through could not run or fetch anything.

The renderer takes plain data (`StoreData`, `html_data.py`, with the counts folded from it); reading
the store is the command's job (`fuzzgate.cli.report`), so a test can draw a page from values built
in code.
"""

from __future__ import annotations

import html
import re
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence

from fuzzgate import __version__
from fuzzgate.check.secrets import Redactor
from fuzzgate.model.commands import repro_command, sequence_text, store_repro_command
from fuzzgate.report.html_assets import CONTENT_SECURITY_POLICY, SCRIPT, STYLE
from fuzzgate.report.html_data import (
    StoreData,
    SubjectRow,
    TargetData,
    environment_groups,
    finding_subject,
    subject_rows,
    target_series,
    worker_state,
)
from fuzzgate.report.timeline_svg import Series, chart, plausible, span_of
from fuzzgate.store.records import STATES, Environment, StatsSnapshot, StoredFinding, WorkerInfo

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def visible_text(text: str) -> str:
    """Control characters and lone surrogates (fuzzed input a server echoed) as escapes a reader
    can see, instead of characters a browser drops or replaces."""
    return _CONTROL.sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", text
    )


def _when(at: float) -> str:
    if not plausible(at):
        return "(no valid time)"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(at))


def _ago(now: float, at: float) -> str:
    if not plausible(at):
        return "unknown"
    seconds = max(0.0, now - at)
    if seconds < 90:
        return f"{seconds:.0f} s ago"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min ago"
    if seconds < 36 * 3600:
        return f"{seconds / 3600:.1f} h ago"
    return f"{seconds / 86400:.1f} days ago"


def _state_order(state: str) -> int:
    return STATES.index(state) if state in STATES else len(STATES)


_ERROR_LIMIT = 2000
_STDERR_LIMIT = 3000
_FRAMES_LIMIT = 40
"""Evidence is cut as in the job summary: the page stays readable, and the whole record is in the store."""


class _Page:
    """Builds the page; `text` is the one way a string from the store gets into it."""

    def __init__(self, data: StoreData, redact: Redactor) -> None:
        self.data = data
        self.redact = redact

    def text(self, value: str) -> str:
        return html.escape(visible_text(self.redact.text(value)))

    def kept(self, value: str) -> str:
        """A fingerprint or a repro command: not redacted (a redacted argument no longer
        reproduces the bug; `redaction` keeps repros for the same reason), still escaped."""
        return html.escape(visible_text(value))

    def render(self) -> str:
        data = self.data
        title = f"fuzzgate report: {self.redact.text(data.location)}"
        head = (
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{html.escape(CONTENT_SECURITY_POLICY)}">\n'
            '<meta name="referrer" content="no-referrer">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<meta name="generator" content="fuzzgate {html.escape(__version__)}">\n'
            f"<title>{html.escape(visible_text(title))}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        )
        body = "\n".join(self._body())
        return f"{head}{body}\n<script>{SCRIPT}</script>\n</body>\n</html>\n"

    def _body(self) -> Iterator[str]:
        data = self.data
        yield "<header><h1>fuzzgate report</h1>"
        yield (
            f'<p class="facts"><span>Store: <code>{self.text(data.location)}</code></span>'
            f"<span>Drawn {_when(data.generated)} by fuzzgate {html.escape(__version__)}</span></p>"
        )
        if not data.targets and not data.workers:
            yield "</header>"
            yield (
                '<p class="empty-page" id="empty">Nothing in this store yet: no target has corpus, findings '
                "or statistics, and no worker has checked in. Start a worker (<code>fuzzgate work --store "
                "…</code>) or a run with <code>--store</code>, then draw this page again.</p>"
            )
            yield from self._skipped()
            return
        yield from self._overview()
        yield "</header>"
        yield from self._workers_section()
        for index, target in enumerate(data.targets, start=1):
            yield from self._target(index, target)
        yield from self._skipped()

    def _overview(self) -> Iterator[str]:
        data = self.data
        states: Counter[str] = Counter(found.state for target in data.targets for found in target.findings)
        total = sum(states.values())
        workers = Counter(worker_state(w, data.generated) for w in data.workers)
        corpus = sum(sum(t.corpus.values()) for t in data.targets)
        yield (
            f'<p class="facts"><span><b>{len(data.targets)}</b> target(s)</span>'
            f"<span><b>{total}</b> finding(s): "
            + ", ".join(f"{states[s]} {s}" for s in STATES)
            + f"</span><span><b>{corpus}</b> corpus entries</span>"
            f"<span><b>{len(data.workers)}</b> worker(s), {workers['running']} running"
            + (f", {workers['silent']} silent" if workers["silent"] else "")
            + "</span></p>"
        )
        if len(data.targets) > 1:
            links = " · ".join(
                f'<a href="#target-{i}">{self.text(t.name)}</a>' for i, t in enumerate(data.targets, start=1)
            )
            yield f"<nav><p>Targets: {links}</p></nav>"
        buttons = [f'<button type="button" class="filter" data-state="all" aria-pressed="true">All ({total})</button>']
        buttons += [
            f'<button type="button" class="filter" data-state="{s}" aria-pressed="false">{s} ({states[s]})</button>'
            for s in STATES
        ]
        yield f'<div class="filters" id="filters"><span>Show findings:</span>{"".join(buttons)}</div>'

    def _workers_section(self) -> Iterator[str]:
        yield '<section id="workers"><h2>Workers</h2>'
        if not self.data.workers:
            yield '<p class="note">No worker has checked in (runs with <code>--store</code> write no heartbeat).</p>'
        else:
            yield self._workers_table(self.data.workers, (), with_targets=True)
        yield "</section>"

    def _workers_table(self, workers: Sequence[WorkerInfo], unknown: Sequence[str], *, with_targets: bool) -> str:
        now = self.data.generated
        head = "<tr><th>Worker</th><th>Host</th><th>PID</th><th>State</th><th>Started</th><th>Last seen</th>"
        head += "<th>Targets</th></tr>" if with_targets else "</tr>"
        rows = []
        for w in workers:
            cells = [
                f"<code>{self.text(w.id)}</code>",
                self.text(w.host),
                str(w.pid),
                self._worker_state(w),
                _when(w.started),
                f'{_when(w.seen)} <span class="muted">({_ago(now, w.seen)})</span>',
            ]
            if with_targets:
                cells.append(", ".join(self.text(t) for t in w.targets) or "—")
            rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        for worker in unknown:
            cells = [f"<code>{self.text(worker)}</code>", "—", "—", "no heartbeat", "—", "—"]
            if with_targets:
                cells.append("—")
            rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        return f"<table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"

    def _worker_state(self, worker: WorkerInfo) -> str:
        state = worker_state(worker, self.data.generated)
        if state == "silent":
            quiet = _ago(self.data.generated, worker.seen).removesuffix(" ago")
            return f'silent <span class="muted">(says running; no heartbeat for {quiet})</span>'
        return self.text(state)

    def _target(self, index: int, target: TargetData) -> Iterator[str]:
        groups = environment_groups(target.stats)
        current = groups[0][1] if groups else []
        yield f'<section class="target" id="target-{index}"><h2>Target <code>{self.text(target.name)}</code></h2>'
        states = Counter(found.state for found in target.findings)
        calls = sum(tool.calls for s in current for tool in s.tools.values())
        yield (
            f'<p class="facts"><span><b>{len(target.findings)}</b> finding(s): '
            + ", ".join(f"{states[s]} {s}" for s in STATES)
            + f"</span><span><b>{sum(target.corpus.values())}</b> corpus entries</span>"
            f"<span><b>{calls}</b> calls</span></p>"
        )
        yield from self._environments(groups)
        yield from self._target_workers(target)
        yield "<h3>Tools, prompts and resources</h3>"
        yield self._subjects_table(subject_rows(target, current))
        yield "<h3>Over time</h3>"
        started = {w.id: w.started for w in self.data.workers}
        yield self._charts(target_series(target, current, started))
        yield from self._findings(index, target)
        yield "</section>"

    def _environments(self, groups: Sequence[tuple[Environment, Sequence[StatsSnapshot]]]) -> Iterator[str]:
        yield "<h3>Environments</h3>"
        if not groups:
            yield '<p class="note">No statistics yet: no worker has written any for this target.</p>'
            return
        rows = []
        for position, (environment, snapshots) in enumerate(groups):
            calls = sum(tool.calls for s in snapshots for tool in s.tools.values())
            behaviours = sum(tool.behaviours for s in snapshots for tool in s.tools.values())
            shown = "counted below" if position == 0 else "older: not counted below"
            cells = [
                self.text(environment.label()),
                str(len(snapshots)),
                str(calls),
                str(behaviours),
                _when(max(s.written for s in snapshots)),
                shown,
            ]
            rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        yield (
            "<table><thead><tr><th>Environment</th><th>Workers</th><th>Calls</th><th>Behaviours</th>"
            f"<th>Last written</th><th></th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        )

    def _target_workers(self, target: TargetData) -> Iterator[str]:
        in_stats = {s.worker for s in target.stats}
        known = [w for w in self.data.workers if target.name in w.targets or w.id in in_stats]
        unknown = sorted(in_stats - {w.id for w in known})
        yield "<h3>Workers on this target</h3>"
        if not known and not unknown:
            yield '<p class="note">None has written statistics for this target.</p>'
            return
        yield self._workers_table(known, unknown, with_targets=False)

    def _subjects_table(self, rows: Sequence[SubjectRow]) -> str:
        if not rows:
            return '<p class="note">Nothing recorded for any tool yet.</p>'
        now = self.data.generated
        head = (
            "<tr><th>Subject</th><th>Calls</th><th>Behaviours</th><th>Corpus</th>"
            + "".join(f"<th>{s}</th>" for s in STATES)
            + "<th>Last new behaviour</th></tr>"
        )
        body = []
        for row in rows:
            last = "—" if row.last_new is None else f"{_when(row.last_new)} ({_ago(now, row.last_new)})"
            numbers = [row.calls, row.behaviours, row.corpus, *(row.findings.get(s, 0) for s in STATES)]
            body.append(
                f"<tr><td><code>{self.text(row.subject)}</code></td>"
                + "".join(f'<td class="n">{n}</td>' for n in numbers)
                + f"<td>{last}</td></tr>"
            )
        totals = [
            sum(r.calls for r in rows),
            sum(r.behaviours for r in rows),
            sum(r.corpus for r in rows),
            *(sum(r.findings.get(s, 0) for r in rows) for s in STATES),
        ]
        body.append(
            '<tr class="total"><td>All</td>' + "".join(f'<td class="n">{n}</td>' for n in totals) + "<td></td></tr>"
        )
        note = (
            '<p class="note">Calls and behaviours: the sum of each worker\'s latest statistics in the current '
            "environment (a behaviour two workers both found counts twice). Corpus: entries in the store. "
            "Findings: distinct bugs by their strongest evidence.</p>"
        )
        return f"<table><thead>{head}</thead><tbody>{''.join(body)}</tbody></table>{note}"

    def _charts(self, series: Mapping[str, Series]) -> str:
        span = span_of(list(series.values()))
        if span is None:
            return '<p class="note">No timeline yet.</p>'
        start, end = span
        end = max(end, start + 1.0)
        captions = {
            "behaviours": ("Behaviours discovered (sum over workers)", "behaviours"),
            "corpus": ("Corpus entries added (sum over workers)", "entries"),
            "findings": ("Distinct findings (by first seen)", "findings"),
        }
        figures = []
        for key, (caption, unit) in captions.items():
            figures.append(
                f'<figure class="plot-{key}"><figcaption>{html.escape(caption)}</figcaption>'
                f"{chart(series[key], caption, unit, start, end)}</figure>"
            )
        return f'<div class="charts">{"".join(figures)}</div>'

    def _findings(self, index: int, target: TargetData) -> Iterator[str]:
        found = sorted(
            target.findings,
            key=lambda f: (_state_order(f.state), -f.finding.severity.rank, f.finding.kind.value, finding_subject(f)),
        )
        yield f'<section class="findings" id="findings-{index}"><h3>Findings ({len(found)})</h3>'
        if not found:
            yield '<p class="note">No finding for this target.</p></section>'
            return
        yield f'<p class="shown muted">{len(found)} of {len(found)} shown</p>'
        for number, item in enumerate(found, start=1):
            yield self._finding(f"f-{index}-{number}", item)
        yield "</section>"

    def _finding(self, anchor: str, found: StoredFinding) -> str:
        f = found.finding
        state = found.state if found.state in STATES else "seen"
        now = self.data.generated
        severity = f.severity.value
        head = (
            f'<h4><span class="badge sev-{severity}">{severity}</span>'
            f'<span class="badge st-{state}">{state}</span>'
            f"{html.escape(f.kind.value)} · {html.escape(f.surface.value)} <code>{self.text(f.name)}</code></h4>"
        )
        meta = [
            ("Fingerprint", f"<code>{self.kept(f.fingerprint)}</code>"),
            ("Hits", str(f.count)),
            ("Replays", f"reproduced {f.reproduced} of {f.replays}"),
            ("Workers", ", ".join(f"<code>{self.text(w)}</code>" for w in found.workers) or "—"),
            ("First seen", f"{_when(found.first_seen)} ({_ago(now, found.first_seen)})"),
            ("Last seen", f"{_when(found.last_seen)} ({_ago(now, found.last_seen)})"),
        ]
        if (sequence := sequence_text(f)) is not None:
            meta.append(("Sequence", self.text(sequence)))
        rows = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in meta)
        # `replay --store` looks a fingerprint up in this store (a Redis password stays masked).
        command = store_repro_command(f, self.data.location)
        by_fingerprint = command != repro_command(f)
        repro = (
            '<div class="repro"><pre><code class="command">'
            f'{self.kept(command)}</code></pre><button type="button" class="copy">Copy</button></div>'
        )
        if by_fingerprint:
            repro += (
                '<p class="note">Not a single tool call a command line can hold (a sequence, a prompt, a '
                "resource, a large input): <code>fuzzgate replay --store</code> reads the recorded finding "
                "from this store (put a Redis password back where the URL shows <code>***</code>).</p>"
            )
        return (
            f'<article class="finding state-{state}" id="{anchor}" data-state="{state}">{head}'
            f'<p class="message">{self.text(f.message)}</p><dl class="meta">{rows}</dl>{repro}'
            f"{self._evidence(found)}</article>"
        )

    def _evidence(self, found: StoredFinding) -> str:
        # Redacted whole before any cut: a secret cut in two no longer matches its pattern.
        details = found.finding.details
        parts = []
        if details.error:
            parts.append(f"error: {self.redact.cut(details.error, _ERROR_LIMIT, ' [… cut]')}")
        if details.location is not None:
            parts.append(f"traceback points at: {details.location[0]}:{details.location[1]}")
        if details.frames:
            parts += ["frames:", *(f"  {frame}" for frame in details.frames[:_FRAMES_LIMIT])]
            if len(details.frames) > _FRAMES_LIMIT:
                parts.append(f"  … {len(details.frames) - _FRAMES_LIMIT} more frames cut")
        if details.stderr:
            stderr = self.redact.text(details.stderr)
            if len(stderr) > _STDERR_LIMIT:
                stderr = f"[… {len(stderr) - _STDERR_LIMIT} earlier characters cut]\n{stderr[-_STDERR_LIMIT:]}"
            parts += ["server stderr (last lines):", stderr]
        if not parts:
            return ""
        return f"<details><summary>Evidence</summary><pre>{self.text(chr(10).join(parts))}</pre></details>"

    def _skipped(self) -> Iterator[str]:
        if not self.data.skipped:
            return
        items = "".join(f"<li>{self.text(reason)}</li>" for reason in self.data.skipped)
        yield (
            f'<section id="skipped"><h2>Values not read ({len(self.data.skipped)})</h2>'
            '<p class="note">The store holds these, but this fuzzgate could not read them:</p>'
            f"<ul>{items}</ul></section>"
        )


def render_html(data: StoreData, redact: Redactor | None = None) -> str:
    """The page for `data`. `redact` (default: the built-in secret patterns) runs over every
    string from the store except fingerprints and repro commands."""
    return _Page(data, redact or Redactor(())).render()
