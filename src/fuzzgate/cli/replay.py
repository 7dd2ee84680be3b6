"""`fuzzgate replay`: a recorded finding (from `report.json`, a baseline entry, the baseline or the
shared store, by fingerprint) or one call, replayed on fresh servers."""

from __future__ import annotations

import json
import os
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from fuzzgate.check.headline import printable
from fuzzgate.check.secrets import REDACTED, Redactor, canary_environment, redactor_for
from fuzzgate.cli import interrupt
from fuzzgate.config.model import Config
from fuzzgate.config.views import ServerSettings
from fuzzgate.engine.replay import NotListed
from fuzzgate.engine.session import replay_call, replay_findings, run_canaries
from fuzzgate.engine.settings import EngineSettings
from fuzzgate.model.commands import subject_label
from fuzzgate.model.errors import ExitCode, ReportError, UsageError
from fuzzgate.model.files import read_regular
from fuzzgate.model.findings import Finding, Kind
from fuzzgate.model.json_fields import UnusableJSON, parse_json
from fuzzgate.model.outcome import CallOutcome
from fuzzgate.plan.seed import choose_seed
from fuzzgate.report import json_report
from fuzzgate.sandbox.listener import URL_MARKER
from fuzzgate.store.baseline import Baseline, BaselineEntry
from fuzzgate.triage.versions import GeneratorVersions, replay_warning


def redactor_for_findings(config: Config, findings: list[Finding]) -> Redactor:
    """The redactor for findings of earlier runs: each run planted the canaries of its own seed."""
    canaries: dict[str, str] = {}
    if config.target.launched:
        for seed in sorted({f.repro.seed for f in findings}):
            canaries |= {f"{name}:{seed}": value for name, value in canary_environment(seed).items()}
    return redactor_for(ServerSettings.of(config), canaries)


Recorded = tuple[Finding, GeneratorVersions | None]
"""A finding to replay, under the current fingerprint scheme, and the versions that generated it."""


def _report_findings(path: Path) -> list[Recorded]:
    report = json_report.read(path)
    return [(f, report.generated_by()) for f in report.findings_in_current_scheme()]


def _entry_finding(entry: BaselineEntry) -> Recorded:
    return entry.to_finding(), entry.generated_by


def _findings_from_file(path: Path) -> list[Recorded]:
    try:
        data = parse_json(read_regular(path))
    except OSError as exc:
        raise ReportError(f"{path}: not a readable JSON file ({exc.strerror or exc})") from None
    except UnusableJSON as exc:
        raise ReportError(f"{path}: not a readable JSON file ({exc})") from None
    try:
        if isinstance(data, dict) and "findings" in data:
            return _report_findings(path)
        return [_entry_finding(BaselineEntry.from_json(data))]
    except Exception as exc:
        raise ReportError(f"{path}: neither a fuzzgate report nor a baseline entry ({exc})") from None


def _find_fingerprint(config: Config, fingerprint: str) -> Recorded:
    report_path = config.out_dir / json_report.REPORT_FILE
    candidates: list[Recorded] = []
    if report_path.exists():
        candidates += _report_findings(report_path)
    candidates += [_entry_finding(entry) for entry in Baseline.open(config.baseline_dir).entries()]
    places = f"{report_path} or {config.baseline_dir}"
    if config.store is not None:
        # A finding of a worker or of another run (`fuzzgate report` prints this command for them).
        candidates += _store_findings(config.store, config.target.display_name)
        places = f"{report_path}, {config.baseline_dir} or the store"
    for finding, generated_by in candidates:
        if finding.fingerprint == fingerprint or (
            len(fingerprint) >= 6 and finding.fingerprint.startswith(fingerprint)
        ):
            return finding, generated_by
    raise ReportError(
        f"no finding with fingerprint {fingerprint} in {places}",
        hint="pass the report or baseline file instead, or use --tool with --arguments",
    )


def _store_findings(spec: str, target: str) -> list[Recorded]:
    """The target's findings in the shared store, each with the fuzzgate version that found it (the
    store keeps no Hypothesis version: a replay under another fuzzgate warns like any other)."""
    from fuzzgate.store.shared import SharedStore

    with SharedStore.open(spec, retry_for=5.0) as shared:
        versions = {
            record.finding.fingerprint: GeneratorVersions(fuzzgate=record.environment.fuzzgate)
            for record in sorted(shared.finding_records(target), key=lambda r: r.last_seen)
        }
        return [(stored.finding, versions[stored.finding.fingerprint]) for stored in shared.findings(target)]


def replay(
    config: Config,
    console: Console,
    *,
    finding: str | None,
    tool: str | None,
    arguments: str,
    seed_flag: str | None = None,
) -> int:
    """`seed_flag` (`--seed`) is the seed of a call replayed by `--tool`; a recorded finding
    replays with the seed its repro was found with."""
    if tool is not None:
        try:
            args = json.loads(arguments)
        except ValueError as exc:
            raise UsageError(f"--arguments: not JSON ({exc})") from None
        if not isinstance(args, dict):
            raise UsageError("--arguments: expected a JSON object")
        return _replay_adhoc(config, console, tool, args, seed_flag)
    assert finding is not None
    if seed_flag is not None:
        console.print("[yellow]warning:[/] --seed is not used: a finding replays with the seed it was found with")
    path = Path(finding)
    recorded = (
        _findings_from_file(path) if path.suffix == ".json" or path.exists() else [_find_fingerprint(config, finding)]
    )
    findings = [f for f, _ in recorded]
    for warning in dict.fromkeys(w for _, versions in recorded if (w := replay_warning(versions))):
        console.print(f"[yellow]warning:[/] {escape(warning)}")

    replayed = interrupt.run(lambda: replay_findings(EngineSettings.of(config), findings, config.replays))
    if unstarted := next((r.not_replayed for r in replayed if r.not_replayed is not None), None):
        raise unstarted
    redact = redactor_for_findings(config, findings)
    for result in replayed:
        f = result.finding
        if result.refused is not None or result.unobserved is not None:
            why = result.refused if result.refused is not None else result.unobserved
            verdict = f"[yellow]not replayed[/] ({escape(redact.text(why or ''))})"
        elif not result.still_fails and f.repro.redacted:
            marker = escape(REDACTED)
            verdict = f"[yellow]did not fail again[/] (its repro was redacted: a secret it sent replayed as {marker})"
        elif result.unlisted:
            # Not a fix to be sure of: a renamed tool's bug is found under its new name, a new fingerprint.
            gone = escape(redact.text(subject_label(f.surface, f.tool)))
            verdict = f"[yellow]did not fail again[/] (the server no longer lists {gone}: renamed or removed)"
        else:
            verdict = "[red]still fails[/]" if result.still_fails else "[green]no longer fails[/]"
        console.print(f"{verdict}: {f.kind.value} in {escape(redact.text(f.name))} ({f.fingerprint})")
    return ExitCode.FINDINGS if any(r.still_fails for r in replayed) else ExitCode.OK


def _replay_adhoc(config: Config, console: Console, tool: str, args: dict[str, object], seed_flag: str | None) -> int:
    choice = choose_seed(seed_flag, config.seed, os.environ, Path.cwd())
    redact = redactor_for(ServerSettings.of(config), run_canaries(config.target, choice.seed))
    # A tool the selection refuses raises `plan.selection.NotSelected` (exit 2) before anything is
    # sent; so does one the server does not list (`NotListed`), whose listing is the server's words.
    try:
        observations, outcome, unobserved = interrupt.run(
            lambda: replay_call(EngineSettings.of(config), tool, args, choice.seed)
        )
    except NotListed as unlisted:
        raise UsageError(redact.text(unlisted.message), hint=redact.text(unlisted.hint or "")) from None
    if outcome is not None:
        console.print(_reply_lines(outcome, redact), highlight=False)
    for observation in observations:
        console.print(f"[red]fails[/]: {observation.kind.value}: {escape(redact.text(observation.message))}")
    unheard = unobserved.get(Kind.SSRF)
    if not observations and unheard is not None and URL_MARKER in json.dumps(args):
        # A canary URL here led nowhere (`sandbox.listener.unreachable`): an ssrf bug cannot show.
        console.print(f"[yellow]warning:[/] the arguments carry an SSRF probe's URL, and {_server_unheard(unheard)}")
    if not observations:
        console.print(f"[green]no finding[/]: {escape(redact.text(tool))} handled the request correctly")
    return ExitCode.FINDINGS if observations else ExitCode.OK


def _server_unheard(why: str) -> str:
    """`containment.UNHEARD` said of the URL: "its evidence ..." is the finding's, not the call's."""
    return why.replace("its evidence is a request", "whether the server fetched it is a request", 1)


REPLY_LINES = 12
REPLY_CHARS = 1200
"""How much of the reply `replay --tool` shows: enough to see what the server answered (an
`EROFS` it reported as an error, a value it echoed), not a whole document."""


def _reply_lines(outcome: CallOutcome, redact: Redactor) -> str:
    """The server's answer to the one call, redacted whole, then cut and escaped (its bytes are
    hostile: control characters are written as escapes), indented under a heading line."""
    code = f" {outcome.rpc_code}" if outcome.rpc_code is not None else ""
    head = f"reply ({outcome.status.value}{code}, {outcome.duration_s * 1000:.0f} ms)"
    text = redact.cut(outcome.text, REPLY_CHARS, "...")
    lines = text.splitlines()
    shown = [f"  {printable(line)}" for line in lines[:REPLY_LINES]]
    if len(lines) > REPLY_LINES:
        shown.append(f"  ... ({len(lines) - REPLY_LINES} more lines)")
    return escape("\n".join([f"{head}:" if shown else f"{head}: (no text)", *shown]))
