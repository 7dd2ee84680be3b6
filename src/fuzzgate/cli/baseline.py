"""`fuzzgate baseline list | accept | upgrade | prune`: the findings a gate knows, kept as one
reviewable file each."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from fuzzgate.check.secrets import Redactor
from fuzzgate.cli import interrupt
from fuzzgate.cli.replay import redactor_for_findings
from fuzzgate.config.model import Config
from fuzzgate.engine.session import replay_findings
from fuzzgate.engine.settings import EngineSettings
from fuzzgate.model.commands import subject_label
from fuzzgate.model.errors import ExitCode, TargetError
from fuzzgate.model.files import check_output_directory
from fuzzgate.model.outcome import uniform_error
from fuzzgate.record.results import BaselineState
from fuzzgate.report import json_report
from fuzzgate.report.redaction import redact_finding
from fuzzgate.store.baseline import BASELINE_FORMAT, Baseline
from fuzzgate.triage.fingerprint import current_scheme


def baseline_command(action: str, config: Config, console: Console, *, pre_existing: bool = False) -> int:
    baseline = Baseline.open(config.baseline_dir)
    if action != "list":
        # accept, upgrade and prune write entries: a directory that takes none is said before the first.
        check_output_directory(config.baseline_dir, what="baseline directory (--baseline)")
    if action == "list":
        entries = baseline.findings()
        redact = redactor_for_findings(config, entries)
        for f in entries:
            name, message = escape(redact.text(f.name)), escape(redact.text(f.message))
            console.print(f"{f.fingerprint}  {f.kind.value:<16} {name}: {message}")
        console.print(f"{len(entries)} baseline entr{'y' if len(entries) == 1 else 'ies'} in {config.baseline_dir}")
        return ExitCode.OK
    if action == "accept":
        report = json_report.read(config.out_dir / json_report.REPORT_FILE)
        findings = list(report.findings)
        if pre_existing:
            findings = [f for f in findings if report.state_of(f) is BaselineState.PRE_EXISTING]
        redact = redactor_for_findings(config, findings)
        baseline.record_all(
            [redact_finding(finding, redact) for finding in findings],
            scheme=report.fingerprint_scheme,
            generated_by=report.generated_by(),
        )
        which = " pre-existing" if pre_existing else ""
        console.print(f"recorded {len(findings)}{which} finding(s) in {config.baseline_dir}")
        return ExitCode.OK
    if action == "upgrade":
        return upgrade_baseline(baseline, console, redactor_for_findings(config, baseline.findings()))
    # An entry this fuzzgate cannot fingerprint can never match a replay: it stays, not "pruned".
    stranded = {entry.fingerprint for entry in baseline.stranded()}
    entries = [f for f in baseline.findings() if f.fingerprint not in stranded]

    results = interrupt.run(lambda: replay_findings(EngineSettings.of(config), entries, config.replays))
    unstarted = [r for r in results if r.not_replayed is not None]
    start_error = next((r.not_replayed for r in unstarted), None)
    if start_error is not None and not any(r.attempts > 0 for r in results):
        # No server answered a replay: nothing could be shown fixed, and exit 0 would read as done.
        raise start_error
    # A tool the server no longer lists answers "unknown tool" whatever its state: two renamed tools
    # would read as a degraded server.
    answered = [
        (subject_label(r.finding.surface, r.finding.tool), r.outcomes)
        for r in results
        if r.attempts > 0 and not r.unlisted
    ]
    degraded = uniform_error(answered)
    if degraded is not None:
        degraded = redactor_for_findings(config, entries).text(degraded)
        raise TargetError(
            f"every replay answered the same error, {degraded}: the server looks degraded "
            "(not configured, or failing at start-up); nothing pruned",
            hint="fix the server's configuration or environment, then prune again",
        )
    # An entry no tool call can replay (attempts == 0), whose server could not be started, or that
    # the selection refuses was not shown fixed: it stays.
    removed = [r.finding for r in results if r.attempts > 0 and not r.still_fails and r.not_replayed is None]
    refused = [r for r in results if r.refused is not None]
    unobserved = [r for r in results if r.unobserved is not None]
    redact = redactor_for_findings(config, entries)
    gone = {r.finding.fingerprint for r in results if r.unlisted}
    for finding in removed:
        baseline.remove(finding.fingerprint)
        why = ": the server no longer lists it" if finding.fingerprint in gone else ""
        name = escape(redact.text(finding.name))
        console.print(f"pruned {finding.fingerprint} ({finding.kind.value} in {name}){why}")
    for r in unstarted:
        name, why = escape(redact.text(r.finding.name)), escape(redact.text(str(r.not_replayed)))
        console.print(
            f"[yellow]kept[/] {r.finding.fingerprint} ({r.finding.kind.value} in {name}): not replayed: {why}"
        )
    kept = len(entries) - len(removed) - len(unstarted) - len(refused) - len(unobserved)
    console.print(
        f"{len(removed)} pruned, {kept} still failing" + (f", {len(unstarted)} kept unreplayed" if unstarted else "")
    )
    if stranded:
        console.print(f"{len(stranded)} kept unreplayed: entries of an older scheme (see `fuzzgate baseline upgrade`)")
    if refused:
        first = escape(redact.text(refused[0].refused or ""))
        console.print(f"{len(refused)} kept unreplayed: a call of their repro is not selected ({first})")
    for reason in dict.fromkeys(r.unobserved or "" for r in unobserved):
        alike = [r for r in unobserved if r.unobserved == reason]
        kind = alike[0].finding.kind.value
        console.print(f"{len(alike)} kept unreplayed ({kind}): {escape(reason.replace('its ', 'their ', 1))}")
    return ExitCode.OK


def upgrade_baseline(baseline: Baseline, console: Console, redact: Redactor) -> int:
    """`fuzzgate baseline upgrade`: rewrite older entries in the current fingerprint scheme and format."""
    done = baseline.upgrade()
    for old, new in done.rewritten:
        renamed = f"{old.fingerprint} -> {new.fingerprint}" if old.fingerprint != new.fingerprint else old.fingerprint
        name = escape(redact.text(old.name))
        console.print(f"upgraded {renamed} ({old.scheme} -> {new.scheme}, {old.kind.value} in {name})")
    for entry in done.stranded:
        console.print(
            f"[yellow]kept[/] {entry.fingerprint} as it is ({entry.kind.value} in {escape(redact.text(entry.name))}): "
            "recorded "
            f"under {entry.scheme} without a signature {current_scheme().name} can be derived from; "
            "replay it, then accept the run that finds it again"
        )
    console.print(
        f"{len(done.rewritten)} upgraded, {done.current} already current, {len(done.stranded)} kept "
        f"(fingerprint scheme {current_scheme().name}, baseline format {BASELINE_FORMAT})"
    )
    return ExitCode.OK
