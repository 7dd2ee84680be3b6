"""What a person watching the run sees: progress while it runs, a readable summary at the end."""

from __future__ import annotations

import time

from rich.console import Console
from rich.markup import escape
from rich.status import Status as Spinner
from rich.table import Table

from fuzzgate.check.secrets import Redactor
from fuzzgate.engine.events import (
    CallFinished,
    CorpusReplayed,
    Discovered,
    Event,
    FeedbackReady,
    FindingTriaged,
    FuzzingStopped,
    RunStarted,
    ServerReady,
    ServerRestarted,
    TriageStarted,
)
from fuzzgate.model.commands import repro_command, sequence_text, subject_label
from fuzzgate.model.findings import Finding, Surface
from fuzzgate.record.results import SHARD_REASON_PREFIX, BaselineState, RunReport, Status, Verdict
from fuzzgate.report.feedback_text import corpus_line, feedback_line, memory_line, probes_line

PROGRESS_EVERY_S = 5.0


_NOT_REPORTED = "not reported (below fail-on, never replayed, only seen beside other calls or under the collector)"
"""The console's label of an unconfirmed finding `engine.labels` leaves out."""


class ConsoleReporter:
    """Consumes engine events. On a terminal the progress line updates in place; in CI logs it is
    printed every few seconds instead.

    Names, reasons and messages are the server's words or config values that may hold `${VAR}`
    expansions: each is redacted before it is escaped for Rich and before Rich wraps it."""

    def __init__(self, console: Console, *, quiet: bool = False, redact: Redactor | None = None) -> None:
        self.console = console
        self.quiet = quiet
        self._redact = redact if redact is not None else Redactor(())
        self._budget = 0.0
        self._last = 0.0
        self._status: Spinner | None = None
        self._start = time.monotonic()
        self._signal = "off"
        self._first: tuple[int, float] | None = None

    def __call__(self, event: Event) -> None:
        if self.quiet:
            return
        c = self.console
        if isinstance(event, CallFinished):
            # First: one per call, the others a few per run.
            self._progress(event)
        elif isinstance(event, RunStarted):
            self._budget = event.budget_s
            self._start = time.monotonic()
            c.print(
                f"[bold]fuzzgate[/] fuzzing [cyan]{self._shown(event.target)}[/] for {event.budget_s:g}s, "
                f"mode {event.mode}, seed {event.seed} ({self._shown(event.seed_source)})"
                + (f", shard {event.shard}" if event.shard else "")
            )
        elif isinstance(event, ServerReady) and event.generation == 0:
            name, protocol = self._shown(event.server_name or "?"), self._shown(event.protocol_version)
            c.print(f"  server {name} speaks protocol {protocol}")
        elif isinstance(event, Discovered):
            fuzzed = "" if not event.entries else f", {len(event.entries)} not fuzzed"
            c.print(
                f"  {len(event.resources)} resources, {len(event.resource_templates)} resource templates, "
                f"{len(event.prompts)} prompts listed{fuzzed}"
            )
            # Another shard's tools are most of a sharded run's list: counted, not listed one by one.
            elsewhere = {e for e in event.entries if (e.reason or "").startswith(SHARD_REASON_PREFIX)}
            if elsewhere:
                c.print(f"  {len(elsewhere)} in other shards (`fuzzgate tools --shard` lists them)")
            for entry in event.entries:
                if entry not in elsewhere:
                    c.print(f"  [yellow]{entry.status.value}[/] {self._shown(entry.name)}: {self._shown(entry.reason)}")
        elif isinstance(event, FeedbackReady):
            self._signal = event.signal
            c.print(f"  feedback: {self._shown(event.note)}")
            if event.signal != "off":
                start = f"started cold ({event.cold})" if event.cold else f"{event.loaded} entries to replay first"
                c.print(f"  corpus: {self._shown(start)}")
            for skipped in event.skipped[:5]:
                c.print(f"  [yellow]corpus file skipped:[/] {self._shown(skipped)}")
        elif isinstance(event, CorpusReplayed):
            c.print(
                f"  corpus replayed: {event.replayed} entries in {event.seconds:.1f}s, {event.kept} reached "
                f"something new" + (f", {event.skipped} not replayed" if event.skipped else "")
            )
        elif isinstance(event, ServerRestarted):
            warm = "; a warm spare" if event.warm else ""
            c.print(f"  [dim]restarted the server ({self._shown(event.reason)}{warm})[/]")
        elif isinstance(event, FuzzingStopped):
            c.print(f"  [red]fuzzing stopped early:[/] {self._shown(event.reason)}")
        elif isinstance(event, TriageStarted):
            self._stop_status()
            c.print(f"  replaying {event.findings} finding(s) {event.replays}x each on fresh servers")
        elif isinstance(event, FindingTriaged):
            f = event.finding
            other = event.explained_by
            if event.moved_to is not None:
                killer = subject_label(event.moved_to.surface, event.moved_to.name)
                label = f"not reported (the server died right after answering {self._shown(killer)}: its crash)"
            elif other is not None:
                seen = f"{other.kind.value} in {subject_label(other.surface, other.name)}"
                label = f"not reported (another call's symptom: the same evidence as {self._shown(seen)})"
            elif event.dropped and f.unconfirmed:
                label = _NOT_REPORTED
            else:
                label = "dropped (another call's symptom)" if event.dropped else _triage_label(f)
            c.print(
                f"  {label}: {f.kind.value} in {self._shown(subject_label(f.surface, f.name))} "
                f"({f.reproduced}/{f.replays} replays)"
            )

    def _shown(self, text: str | None) -> str:
        return escape(self._redact.text(text or ""))

    def _progress(self, event: CallFinished) -> None:
        now = time.monotonic()
        if self._first is None:
            self._first = (event.calls, event.elapsed_s)
        terminal = self.console.is_terminal
        if not terminal and now - self._last < PROGRESS_EVERY_S:
            # Not printed: the line is not made either.
            return
        left = max(0.0, self._budget - event.elapsed_s)
        # Calls per second of fuzzing, not of start-up.
        span = event.elapsed_s - self._first[1]
        rate = (event.calls - self._first[0]) / span if span > 0 else 0.0
        # libFuzzer's and Fuchsia's status line: what was reached, how fast, what was kept.
        parts = [f"{event.calls} calls ({rate:.0f}/s)"]
        if self._signal != "off":
            parts.append(f"{event.behaviours} behaviours")
            if self._signal == "coverage":
                parts.append(f"{event.lines} lines, {event.arcs} arcs")
            parts.append(f"corpus {event.corpus}")
        line = f"  {', '.join(parts)}, {event.findings} finding(s), {left:.0f}s left"
        if terminal:
            if self._status is None:
                self._status = self.console.status(line)
                self._status.start()
            else:
                self._status.update(line)
        else:
            self._last = now
            self.console.print(line)

    def _stop_status(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def summary(self, report: RunReport, config_here: str | None = None) -> None:
        """The end-of-run summary; `config_here` is the config path as the person at this terminal
        would type it (reports use the repository-relative one)."""
        self._stop_status()
        c = self.console
        table = Table(
            title=f"{self._shown(report.target.name)}: {report.calls} calls in {report.duration_s:.1f}s", expand=False
        )
        for column in ("tool, prompt or resource", "status", "cases", "probes sent", "findings"):
            table.add_column(column)
        per_subject: dict[tuple[Surface, str], list[Finding]] = {}
        for finding in report.findings:
            per_subject.setdefault((finding.surface, finding.name), []).append(finding)
        for entry in report.entries:
            found = per_subject.get((entry.surface, entry.name), [])
            status = entry.status.value if entry.status is Status.FUZZED else f"{entry.status.value}: {entry.reason}"
            table.add_row(
                self._shown(subject_label(entry.surface, entry.name)),
                self._shown(status),
                str(entry.cases),
                entry.probes_line(),
                ", ".join(sorted({f.kind.value for f in found})) or "-",
            )
        c.print(table)
        for finding in report.findings:
            state = report.state_of(finding)
            tag = "flaky" if finding.flaky else state.value + (" unconfirmed" if finding.unconfirmed else "")
            colour = "red" if (state is BaselineState.NEW and not finding.flaky) else "yellow"
            if state is BaselineState.PRE_EXISTING:
                colour = "blue"
            c.print(
                f"[{colour}]{tag}[/] [bold]{finding.kind.value}[/] ({finding.severity.value}) in "
                f"[cyan]{self._shown(subject_label(finding.surface, finding.name))}[/]: {self._shown(finding.message)}"
            )
            c.print(
                f"    fingerprint {finding.fingerprint}, hit {finding.count}x, reproduced "
                f"{finding.reproduced}/{finding.replays}"
            )
            c.print(
                f"    [dim]reproduce:[/] {escape(repro_command(finding, config_here, report.command_flags))}",
                soft_wrap=True,
            )
            if (sequence := sequence_text(finding)) is not None:
                c.print(f"    [dim]sequence:[/] {self._shown(sequence)}", soft_wrap=True)
        for finding in report.fixed:
            c.print(f"[green]fixed[/] {finding.kind.value} in {self._shown(finding.name)} ({finding.fingerprint})")
        if report.containment is not None:
            c.print(f"[dim]containment:[/] {self._shown(report.containment)}")
        if (probes := probes_line(report)) is not None:
            c.print(f"[dim]probes:[/] {self._shown(probes)}")
        if (feedback := feedback_line(report)) is not None:
            c.print(f"[dim]feedback:[/] {self._shown(feedback)}")
        if (corpus := corpus_line(report)) is not None:
            c.print(f"[dim]corpus:[/] {self._shown(corpus)}")
        if (memory := memory_line(report)) is not None:
            c.print(f"[dim]memory:[/] {memory}")
        for note in report.notes:
            c.print(f"[yellow]note:[/] {self._shown(note)}")
        gating = report.gating()
        run = f"seed {report.seed}" + (f", shard {report.shard}" if report.shard is not None else "")
        if report.verdict is Verdict.FAIL:
            c.print(f"[bold red]FAIL[/]: {len(gating)} new finding(s) at or above {report.fail_on.value} ({run})")
        elif report.verdict is Verdict.INCONCLUSIVE and report.fuzzed_nothing():
            c.print(f"[bold red]INCONCLUSIVE[/]: no call reached the server, nothing was tested (see the notes; {run})")
        elif report.verdict is Verdict.INCONCLUSIVE and report.mostly_unsent():
            unsent = report.unsendable + report.client_failed
            c.print(
                f"[bold red]INCONCLUSIVE[/]: {unsent} requests never reached the server, {report.calls} did; "
                f"no new finding at or above {report.fail_on.value} ({run})"
            )
        elif report.verdict is Verdict.INCONCLUSIVE:
            untested, fuzzed = report.untested()
            c.print(
                f"[bold red]INCONCLUSIVE[/]: {untested} of the {fuzzed} tools, resources and prompts to fuzz got no "
                f"call ({report.calls} calls); no new finding at or above {report.fail_on.value} ({run})"
            )
        else:
            c.print(f"[bold green]PASS[/]: no new finding at or above {report.fail_on.value} ({run})")


def _triage_label(finding: Finding) -> str:
    if finding.unconfirmed:
        return "unconfirmed (no replay finished: the budget ran out, or no fresh server could be started)"
    return "flaky" if finding.flaky else "confirmed"
