"""The commands behind the CLI: `run` (replay the baseline, fuzz, classify, write every output),
`tools`, `replay` and `baseline`. They print through reporters and return exit codes."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from fuzzgate import __version__
from fuzzgate.check.secrets import REDACTED, Redactor, canary_environment, redactor_for
from fuzzgate.cli import interrupt
from fuzzgate.config import CONFIG_FILE_NAMES
from fuzzgate.config.model import Config, FeedbackMode
from fuzzgate.engine.events import Event, EventSink, RunFinished, RunStarted
from fuzzgate.engine.execute import Engine, EngineResult
from fuzzgate.engine.session import list_surface, replay_call, replay_findings, run_canaries
from fuzzgate.fleet.store_sync import RunStore
from fuzzgate.learn.live_corpus import Seeds
from fuzzgate.model.commands import prune_command, subject_label
from fuzzgate.model.corpus import CorpusEntry
from fuzzgate.model.errors import ExitCode, FuzzgateError, ReportError, TargetError, UsageError
from fuzzgate.model.files import check_output_directory, read_regular
from fuzzgate.model.findings import Finding
from fuzzgate.model.outcome import uniform_error
from fuzzgate.plan.budget import TimeBox, process_start
from fuzzgate.plan.seed import SeedChoice, choose_seed
from fuzzgate.plan.selection import in_shard, owned_baseline, shard_split
from fuzzgate.record.results import CorpusSummary, RunReport, Verdict, exit_code
from fuzzgate.report import annotations as github_annotations
from fuzzgate.report import json_report
from fuzzgate.report.console import ConsoleReporter
from fuzzgate.report.junit import JUNIT_FILENAME, write_junit
from fuzzgate.report.locate import repository_root
from fuzzgate.report.redaction import redact_finding, redact_report
from fuzzgate.report.sarif import SARIF_FILENAME, write_sarif
from fuzzgate.report.summary import SUMMARY_FILENAME, render_summary, write_summary
from fuzzgate.report.tables import print_listing
from fuzzgate.report.trace import TraceWriter
from fuzzgate.report.workflow_commands import write_command
from fuzzgate.store.baseline import BASELINE_FORMAT, Baseline, BaselineEntry
from fuzzgate.store.corpus_store import CorpusStore
from fuzzgate.store.diff import classify
from fuzzgate.triage.fingerprint import current_scheme
from fuzzgate.triage.versions import GeneratorVersions, hypothesis_version, replay_warning


def _fan_out(*sinks: EventSink) -> EventSink:
    def emit(event: Event) -> None:
        for sink in sinks:
            sink(event)

    return emit


def _redactor_for_findings(config: Config, findings: list[Finding]) -> Redactor:
    """The redactor for findings of earlier runs: each run planted the canaries of its own seed."""
    canaries: dict[str, str] = {}
    if config.target.launched:
        for seed in sorted({f.repro.seed for f in findings}):
            canaries |= {f"{name}:{seed}": value for name, value in canary_environment(seed).items()}
    return redactor_for(config, canaries)


def _relative(path: Path, base: Path) -> str:
    """`path` relative to `base` when it lies below it, else absolute."""
    resolved = path.resolve()
    try:
        return resolved.relative_to(base.resolve()).as_posix()
    except ValueError:
        return str(resolved)


def _config_path_for_reports(config: Config, repo_root: Path) -> str | None:
    return None if config.source is None else _relative(config.source, repo_root)


def _config_here(config: Config, cwd: Path) -> str | None:
    """The config path for commands typed here: None when lookup would find it anyway."""
    if config.source is None:
        return None
    if config.source.resolve().parent == cwd.resolve() and config.source.name in CONFIG_FILE_NAMES:
        return None
    return _relative(config.source, cwd)


OUTPUT_FILES = (json_report.REPORT_FILE, SARIF_FILENAME, JUNIT_FILENAME, SUMMARY_FILENAME)
"""What `write_outputs` writes into the output directory."""


def run_gate(config: Config, console: Console, *, seed_flag: str | None, trace: Path | None, quiet: bool) -> int:
    box = TimeBox(config.budget_s, start=process_start())
    # Where the outputs cannot go is the user's to fix, and said before the budget is spent.
    check_output_directory(config.out_dir, what="output directory (--out)", files=OUTPUT_FILES)
    if trace is not None:
        check_output_directory(trace.parent, what="directory of --trace", files=(trace.name,))
    cwd = Path.cwd()
    choice = choose_seed(seed_flag, config.seed, os.environ, cwd)
    if choice.warning:
        console.print(f"[yellow]warning:[/] {choice.warning}")
    baseline = Baseline.open(config.baseline_dir)
    known = baseline.findings()  # a corrupt baseline stops the run here, before any server starts

    engine = Engine(config, choice.seed, lambda e: None, timebox=box)
    reporter = ConsoleReporter(console, quiet=quiet, redact=engine.redact)
    sinks: list[EventSink] = [reporter]
    tracer: TraceWriter | None = None
    if trace is not None:
        tracer = TraceWriter(trace, engine.redact)
        sinks.append(tracer)
    shared = RunStore(config.store, config.target.display_name) if config.store is not None else None
    if shared is not None:
        sinks.append(shared.recorder)
    emit = _fan_out(*sinks)
    engine.emit = emit
    emit(
        RunStarted(
            config.target.display_name, choice.seed, choice.source, config.budget_s, config.mode.value,
            shard=None if config.shard is None else str(config.shard),
        )
    )  # fmt: skip

    feedback_on = config.target.feedback is not FeedbackMode.OFF
    store = CorpusStore(config.corpus, config.target.display_name) if feedback_on else None
    seeds = _seeds(store)
    if shared is not None and store is not None:
        seeds = shared.seeds(seeds)
    try:
        # A sharded run replays only its own tools' baseline entries (`owned_baseline`).
        result = interrupt.run(lambda: engine.run(owned_baseline(known, config.shard), seeds))
    finally:
        if tracer is not None:
            tracer.close()

    repo_root = repository_root(cwd)
    with interrupt.deferred():
        # The corpus is saved before anything is written from the report, so it says what was saved.
        corpus = _save_corpus(store, result.corpus_added, result.corpus, engine.redact)
        # Redacted once more as a whole: every output below is written from this report.
        draft = replace(build_report(config, choice, result, known, repo_root), corpus=corpus)
        report = redact_report(draft, engine.redact)
        if shared is not None:
            # Never fails the gate: what the store took, or why it took nothing, is one note.
            shared.publish(report, result.corpus_added, engine.redact)
            # Redacted too: the note is added after the pass, and names the store.
            report = replace(report, notes=(*report.notes, engine.redact.text(shared.note())))
        box.mark("outputs")
        report = replace(report, timing=dict(box.marks))
        write_outputs(report, config.out_dir, repo_root)
        emit(RunFinished(report))
        reporter.summary(report, _config_here(config, cwd))
        if report.fixed:
            console.print(f"remove fixed entries from the baseline with: {prune_command(report.config_path)}")
        _github_extras(report, repo_root)
    return exit_code(report.verdict)


def build_report(
    config: Config,
    choice: SeedChoice,
    result: EngineResult,
    known: list[Finding],
    repo_root: Path,
) -> RunReport:
    # A baseline entry the budget left unreplayed stays known: "fixed" needs evidence.
    found = {f.fingerprint for f in result.findings}
    # Another share's baseline entries were not replayed here: never fixed by this run, and left out
    # of its states unless fuzzing met them (`fuzzgate merge` takes them from their own share).
    considered = [e for e in known if e.fingerprint in found or in_shard(e.surface, e.name, config.shard)]
    classification = classify(result.findings, considered, result.baseline_failing | result.baseline_unverified)
    draft = RunReport(
        version=__version__,
        hypothesis_version=hypothesis_version(),
        fingerprint_scheme=current_scheme().name,
        target=result.target,
        seed=choice.seed,
        seed_source=choice.source,
        budget_s=config.budget_s,
        duration_s=result.duration_s,
        calls=result.calls,
        unsendable=result.unsendable,
        client_failed=result.client_failed,
        cut_off=result.cut_off,
        mode=config.mode.value,
        fail_on=config.fail_on,
        entries=result.entries,
        findings=result.findings,
        verdict=Verdict.PASS,
        states=dict(classification.states),
        fixed=tuple(classification.fixed),
        config_path=_config_path_for_reports(config, repo_root),
        target_line=config.target_line,
        resources=(*result.inventory.resources, *result.inventory.resource_templates),
        prompts=result.inventory.prompts,
        notes=result.notes,
        timing=result.timing,
        containment=result.containment,
        feedback=result.feedback,
        corpus=result.corpus,
        shard=config.shard,
    )
    return replace(draft, verdict=draft.decide())


def _seeds(store: CorpusStore | None) -> Seeds:
    """The stored corpus of the target; a missing or unreadable one is a cold start, never an error."""
    if store is None:
        return Seeds()
    loaded = store.load()
    return Seeds(loaded.entries, loaded.cold, loaded.skipped, path=str(store.path))


def _save_corpus(
    store: CorpusStore | None, added: tuple[CorpusEntry, ...], summary: CorpusSummary | None, redact: Redactor
) -> CorpusSummary | None:
    """Write the entries the run kept. One that holds a secret or a canary (a value a reply brought
    and the dictionary put in a field) is never written: the corpus travels through caches and
    artifacts. A store that cannot be written is said in the report, not a failed run."""
    if store is None or summary is None:
        return summary
    saved = 0
    for entry in added:
        text = json.dumps(entry.to_json(), sort_keys=True, ensure_ascii=False)
        if redact.text(text) != text:
            continue
        try:
            saved += store.add(entry)
        except FuzzgateError as exc:
            return replace(summary, saved=saved, save_error=exc.message)
    return replace(summary, saved=saved)


def write_outputs(report: RunReport, out_dir: Path, repo_root: Path) -> None:
    json_report.write(report, out_dir)
    write_sarif(report, repo_root, out_dir)
    write_junit(report, repo_root, out_dir)
    write_summary(report, repo_root, out_dir)


def _github_extras(report: RunReport, repo_root: Path) -> None:
    if summary_path := os.environ.get("GITHUB_STEP_SUMMARY"):
        with open(summary_path, "a", encoding="utf-8", errors="backslashreplace") as handle:
            handle.write(render_summary(report, repo_root) + "\n")
    if os.environ.get("GITHUB_ACTIONS") == "true":
        for line in github_annotations.annotations(report, repo_root):
            write_command(line)


def list_tools(config: Config, console: Console, *, seed_flag: str | None) -> int:
    choice = choose_seed(seed_flag, config.seed, os.environ, Path.cwd())
    listing = interrupt.run(lambda: list_surface(config, choice.seed))
    print_listing(console, config.target.display_name, listing, redactor_for(config, canary_environment(choice.seed)))
    if config.shard is not None:
        console.print(shard_split(config.shard, listing.decisions))
    return ExitCode.OK


Recorded = tuple[Finding, GeneratorVersions | None]
"""A finding to replay, under the current fingerprint scheme, and the versions that generated it."""


def _report_findings(path: Path) -> list[Recorded]:
    report = json_report.read(path)
    return [(f, report.generated_by()) for f in report.findings_in_current_scheme()]


def _entry_finding(entry: BaselineEntry) -> Recorded:
    return entry.to_finding(), entry.generated_by


def _findings_from_file(path: Path) -> list[Recorded]:
    try:
        data = json.loads(read_regular(path).decode("utf-8"))
    except OSError as exc:
        raise ReportError(f"{path}: not a readable JSON file ({exc.strerror or exc})") from None
    except (UnicodeDecodeError, ValueError) as exc:
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


def replay(config: Config, console: Console, *, finding: str | None, tool: str | None, arguments: str) -> int:
    if tool is not None:
        try:
            args = json.loads(arguments)
        except ValueError as exc:
            raise UsageError(f"--arguments: not JSON ({exc})") from None
        if not isinstance(args, dict):
            raise UsageError("--arguments: expected a JSON object")
        return _replay_adhoc(config, console, tool, args)
    assert finding is not None
    path = Path(finding)
    recorded = (
        _findings_from_file(path) if path.suffix == ".json" or path.exists() else [_find_fingerprint(config, finding)]
    )
    findings = [f for f, _ in recorded]
    for warning in dict.fromkeys(w for _, versions in recorded if (w := replay_warning(versions))):
        console.print(f"[yellow]warning:[/] {escape(warning)}")

    replayed = interrupt.run(lambda: replay_findings(config, findings, config.replays))
    if unstarted := next((r.not_replayed for r in replayed if r.not_replayed is not None), None):
        raise unstarted
    redact = _redactor_for_findings(config, findings)
    for result in replayed:
        f = result.finding
        if result.refused is not None:
            verdict = f"[yellow]not replayed[/] ({escape(redact.text(result.refused))})"
        elif not result.still_fails and f.repro.redacted:
            marker = escape(REDACTED)
            verdict = f"[yellow]did not fail again[/] (its repro was redacted: a secret it sent replayed as {marker})"
        else:
            verdict = "[red]still fails[/]" if result.still_fails else "[green]no longer fails[/]"
        console.print(f"{verdict}: {f.kind.value} in {escape(redact.text(f.name))} ({f.fingerprint})")
    return ExitCode.FINDINGS if any(r.still_fails for r in replayed) else ExitCode.OK


def _replay_adhoc(config: Config, console: Console, tool: str, args: dict[str, object]) -> int:
    choice = choose_seed(None, config.seed, os.environ, Path.cwd())
    # A tool the selection refuses raises `plan.selection.NotSelected` (exit 2) before anything is sent.
    observations = interrupt.run(lambda: replay_call(config, tool, args, choice.seed))
    redact = redactor_for(config, run_canaries(config, choice.seed))
    for observation in observations:
        console.print(f"[red]fails[/]: {observation.kind.value}: {escape(redact.text(observation.message))}")
    if not observations:
        console.print(f"[green]no finding[/]: {escape(redact.text(tool))} handled the request correctly")
    return ExitCode.FINDINGS if observations else ExitCode.OK


def baseline_command(action: str, config: Config, console: Console) -> int:
    baseline = Baseline.open(config.baseline_dir)
    if action != "list":
        # accept, upgrade and prune write entries: a directory that takes none is said before the first.
        check_output_directory(config.baseline_dir, what="baseline directory (--baseline)")
    if action == "list":
        entries = baseline.findings()
        redact = _redactor_for_findings(config, entries)
        for f in entries:
            name, message = escape(redact.text(f.name)), escape(redact.text(f.message))
            console.print(f"{f.fingerprint}  {f.kind.value:<16} {name}: {message}")
        console.print(f"{len(entries)} baseline entr{'y' if len(entries) == 1 else 'ies'} in {config.baseline_dir}")
        return ExitCode.OK
    if action == "accept":
        report = json_report.read(config.out_dir / json_report.REPORT_FILE)
        redact = _redactor_for_findings(config, list(report.findings))
        for finding in report.findings:
            baseline.record(
                redact_finding(finding, redact), scheme=report.fingerprint_scheme, generated_by=report.generated_by()
            )
        console.print(f"recorded {len(report.findings)} finding(s) in {config.baseline_dir}")
        return ExitCode.OK
    if action == "upgrade":
        return upgrade_baseline(baseline, console, _redactor_for_findings(config, baseline.findings()))
    # An entry this fuzzgate cannot fingerprint can never match a replay: it stays, not "pruned".
    stranded = {entry.fingerprint for entry in baseline.stranded()}
    entries = [f for f in baseline.findings() if f.fingerprint not in stranded]

    results = interrupt.run(lambda: replay_findings(config, entries, config.replays))
    answered = [(subject_label(r.finding.surface, r.finding.tool), r.outcomes) for r in results if r.attempts > 0]
    degraded = uniform_error(answered)
    if degraded is not None:
        degraded = _redactor_for_findings(config, entries).text(degraded)
        raise TargetError(
            f"every replay answered the same error, {degraded}: the server looks degraded "
            "(not configured, or failing at start-up); nothing pruned",
            hint="fix the server's configuration or environment, then prune again",
        )
    # An entry no tool call can replay (attempts == 0), whose server could not be started, or that
    # the selection refuses was not shown fixed: it stays.
    removed = [r.finding for r in results if r.attempts > 0 and not r.still_fails and r.not_replayed is None]
    refused = [r for r in results if r.refused is not None]
    unstarted = [r for r in results if r.not_replayed is not None]
    redact = _redactor_for_findings(config, entries)
    for finding in removed:
        baseline.remove(finding.fingerprint)
        console.print(f"pruned {finding.fingerprint} ({finding.kind.value} in {escape(redact.text(finding.name))})")
    for r in unstarted:
        name, why = escape(redact.text(r.finding.name)), escape(redact.text(str(r.not_replayed)))
        console.print(
            f"[yellow]kept[/] {r.finding.fingerprint} ({r.finding.kind.value} in {name}): not replayed: {why}"
        )
    kept = len(entries) - len(removed) - len(unstarted) - len(refused)
    console.print(
        f"{len(removed)} pruned, {kept} still failing" + (f", {len(unstarted)} kept unreplayed" if unstarted else "")
    )
    if stranded:
        console.print(f"{len(stranded)} kept unreplayed: entries of an older scheme (see `fuzzgate baseline upgrade`)")
    if refused:
        first = escape(redact.text(refused[0].refused or ""))
        console.print(f"{len(refused)} kept unreplayed: a call of their repro is not selected ({first})")
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
