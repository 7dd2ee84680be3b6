"""`fuzzgate run` (replay the baseline, fuzz, classify, write every output) and `fuzzgate tools`. They
print through reporters and return exit codes; `replay` and `baseline` are `cli.replay` and
`cli.baseline`.

A run's first server starts as soon as the run knows it will fuzz (`target.head_start`), before the
engine and the reporters are imported: what the run reads first is imported here, the rest where
it is used."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from fuzzgate import __version__
from fuzzgate.check.secrets import Redactor, canary_environment, redactor_for
from fuzzgate.cli import interrupt
from fuzzgate.config import CONFIG_FILE_NAMES
from fuzzgate.config.model import Config, FeedbackMode
from fuzzgate.config.rebase import at_base
from fuzzgate.config.views import ServerSettings
from fuzzgate.engine.base_check import BaseRevision
from fuzzgate.model.commands import prune_command
from fuzzgate.model.corpus import CorpusEntry
from fuzzgate.model.errors import ExitCode, FuzzgateError, UsageError
from fuzzgate.model.files import check_output_directory, write_failed
from fuzzgate.model.findings import Finding, Surface
from fuzzgate.plan.budget import TimeBox, process_start
from fuzzgate.plan.focus import Changes, compare_checkouts, read_changes
from fuzzgate.plan.seed import SeedChoice, choose_seed
from fuzzgate.record.results import CorpusSummary, RunReport, Status, SurfaceEntry, Verdict, exit_code
from fuzzgate.report.locate import repository_root
from fuzzgate.sandbox.scope import infer_scope, normalize_scope, scope_labels
from fuzzgate.store.baseline import Baseline
from fuzzgate.target.head_start import HeadStart, begin

if TYPE_CHECKING:
    from fuzzgate.engine.events import Event, EventSink
    from fuzzgate.engine.result import EngineResult
    from fuzzgate.learn.live_corpus import Seeds
    from fuzzgate.store.corpus_store import CorpusStore


def _fan_out(*sinks: EventSink) -> EventSink:
    def emit(event: Event) -> None:
        for sink in sinks:
            sink(event)

    return emit


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


OUTPUT_FILES = ("report.json", "fuzzgate.sarif", "junit.xml", "summary.md")
"""What `write_outputs` writes into the output directory: `json_report.REPORT_FILE`,
`SARIF_FILENAME`, `JUNIT_FILENAME` and `SUMMARY_FILENAME`, named here without importing the
writers (tests/cli/test_lazy_imports.py keeps them in step)."""


def run_gate(config: Config, console: Console, *, seed_flag: str | None, trace: Path | None, quiet: bool) -> int:
    box = TimeBox(config.budget_s, start=process_start(), starts_servers=config.target.command is not None)
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

    base, base_note = base_revision(config, cwd)
    changes = changed_files(config, cwd)
    # Nothing above needs a server: it starts now, while the engine is imported.
    head = begin(ServerSettings.of(config), choice.seed)
    try:
        return _gate(config, console, box, choice, known, (base, base_note, changes), head, trace=trace, quiet=quiet)
    finally:
        if head is not None:
            head.close()


def _gate(
    config: Config,
    console: Console,
    box: TimeBox,
    choice: SeedChoice,
    known: list[Finding],
    revision: tuple[BaseRevision | None, str | None, Changes | None],
    head: HeadStart | None,
    *,
    trace: Path | None,
    quiet: bool,
) -> int:
    """The run once its first server is starting: the engine, the reporters, the outputs."""
    from fuzzgate.engine.events import RunFinished, RunStarted
    from fuzzgate.engine.execute import Engine
    from fuzzgate.engine.settings import EngineSettings
    from fuzzgate.fleet.store_sync import RunStore
    from fuzzgate.plan.shards import owned_baseline
    from fuzzgate.report.console import ConsoleReporter
    from fuzzgate.report.redaction import redact_report
    from fuzzgate.report.trace import TraceWriter
    from fuzzgate.store.corpus_store import CorpusStore

    base, base_note, changes = revision
    cwd = Path.cwd()
    settings = replace(EngineSettings.of(config), base=base, changes=changes)
    engine = Engine(settings, choice.seed, lambda e: None, timebox=box, head_start=head)
    reporter = ConsoleReporter(console, quiet=quiet, redact=engine.redact)
    sinks: list[EventSink] = [reporter]
    tracer: TraceWriter | None = None
    if trace is not None:
        try:
            tracer = TraceWriter(trace, engine.redact)
        except OSError as exc:
            raise write_failed("the trace", trace, exc, hint="choose another --trace, or make room there") from None
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
        if base_note is not None:
            draft = replace(draft, notes=(*draft.notes, base_note))
        if tracer is not None and tracer.failure is not None:
            draft = replace(draft, notes=(*draft.notes, tracer.failure))
        report = redact_report(draft, engine.redact)
        if shared is not None:
            # Never fails the gate: what the store took, or why it took nothing, is one note.
            shared.publish(report, result.corpus_added, engine.redact)
            # Redacted too: the note is added after the pass, and names the store.
            report = replace(report, notes=(*report.notes, engine.redact.text(shared.note())))
        box.mark("outputs")
        report = replace(report, timing=dict(box.marks))
        try:
            write_outputs(report, config.out_dir, repo_root)
        except OSError as exc:
            # Checked before the run (`check_output_directory`); what changed since is said in one line.
            raise write_failed(
                "the outputs", config.out_dir, exc, hint="choose another --out, or fix its permissions"
            ) from None
        emit(RunFinished(report))
        reporter.summary(report, _config_here(config, cwd))
        if report.fixed:
            prune = prune_command(_config_here(config, cwd), report.command_flags)
            console.print(f"remove fixed entries from the baseline with: {prune}")
        _github_extras(report, repo_root)
    return exit_code(report.verdict)


def base_revision(config: Config, cwd: Path) -> tuple[BaseRevision | None, str | None]:
    """The base revision to check new findings on (`--base DIR`), or why there is none (a note)."""
    if config.base is None:
        return None, None
    base = config.base
    if not base.is_dir():
        raise UsageError(
            f"--base: {base} is not a directory",
            hint="check the base revision out there (and install it as the head is) before the run",
        )
    if config.target.command is None:
        return None, (
            "the base revision was not checked: fuzzgate starts no server for this HTTP target (name the "
            "command that serves it under [target]), so every finding not in the baseline is new"
        )
    head = repository_root(cwd)
    scope = normalize_scope(infer_scope(config.target))
    target = at_base(config.target, scope, head, base)
    server = replace(ServerSettings.of(config), target=target)
    return BaseRevision(server, head.resolve(), base.resolve(), labels=scope_labels(scope)), None


def changed_files(config: Config, cwd: Path) -> Changes | None:
    """The files the change touched: `changed_files`, else with `--base` the files that differ
    between the two checkouts; None when neither is given (no focus)."""
    if config.changed_files is not None:
        return read_changes(config.changed_files)
    if config.base is not None and config.base.is_dir():
        return compare_checkouts(repository_root(cwd), config.base)
    return None


def build_report(
    config: Config,
    choice: SeedChoice,
    result: EngineResult,
    known: list[Finding],
    repo_root: Path,
) -> RunReport:
    from fuzzgate.plan.shards import in_shard
    from fuzzgate.store.diff import classify
    from fuzzgate.triage.fingerprint import current_scheme
    from fuzzgate.triage.versions import hypothesis_version

    # A baseline entry the budget left unreplayed stays known: "fixed" needs evidence.
    found = {f.fingerprint for f in result.findings}
    # Another share's baseline entries were not replayed here: never fixed by this run, and left out
    # of its states unless fuzzing met them (`fuzzgate merge` takes them from their own share).
    considered = [e for e in known if e.fingerprint in found or in_shard(e.surface, e.name, config.shard)]
    classification = classify(
        result.findings, considered, result.baseline_failing | result.baseline_unverified, result.pre_existing
    )
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
        fail_on_sdk=config.fail_on_sdk,
        entries=result.entries,
        findings=result.findings,
        verdict=Verdict.PASS,
        states=dict(classification.states),
        fixed=tuple(classification.fixed),
        config_path=_config_path_for_reports(config, repo_root),
        command_flags=config.follow_up_flags,
        target_line=config.target_line,
        resources=(*result.inventory.resources, *result.inventory.resource_templates),
        prompts=result.inventory.prompts,
        notes=(*result.notes, *_alike(result.findings, result.entries, result.accepting)),
        timing=result.timing,
        containment=result.containment,
        feedback=result.feedback,
        corpus=result.corpus,
        shard=config.shard,
        memory=result.memory,
    )
    return replace(draft, verdict=draft.decide())


def _alike(
    findings: tuple[Finding, ...], entries: tuple[SurfaceEntry, ...], accepting: frozenset[tuple[Surface, str]]
) -> tuple[str, ...]:
    from fuzzgate.triage.alike import alike_note

    note = alike_note(findings, sum(1 for e in entries if e.status is Status.FUZZED), accepting)
    return () if note is None else (note,)


def _seeds(store: CorpusStore | None) -> Seeds:
    """The stored corpus of the target; a missing or unreadable one is a cold start, never an error."""
    from fuzzgate.learn.live_corpus import Seeds

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
    """Every output (`OUTPUT_FILES`) or none: rendered whole, then written as one set
    (`write_all`), so a full disk leaves the previous run's outputs as they were. Raises `OSError`."""
    from fuzzgate.model.files import write_all
    from fuzzgate.report import json_report
    from fuzzgate.report.junit import JUNIT_FILENAME, render_junit
    from fuzzgate.report.sarif import SARIF_FILENAME, render_sarif
    from fuzzgate.report.summary import SUMMARY_FILENAME, render_summary

    write_all(
        {
            out_dir / json_report.REPORT_FILE: json_report.render(report),
            out_dir / SARIF_FILENAME: render_sarif(report, repo_root),
            out_dir / JUNIT_FILENAME: render_junit(report, repo_root),
            out_dir / SUMMARY_FILENAME: render_summary(report, repo_root),
        }
    )


def _github_extras(report: RunReport, repo_root: Path) -> None:
    from fuzzgate.report import annotations as github_annotations
    from fuzzgate.report.summary import render_summary
    from fuzzgate.report.workflow_commands import write_command

    if summary_path := os.environ.get("GITHUB_STEP_SUMMARY"):
        with open(summary_path, "a", encoding="utf-8", errors="backslashreplace") as handle:
            handle.write(render_summary(report, repo_root) + "\n")
    if os.environ.get("GITHUB_ACTIONS") == "true":
        for line in github_annotations.annotations(report, repo_root):
            write_command(line)


def list_tools(config: Config, console: Console, *, seed_flag: str | None) -> int:
    from fuzzgate.engine.session import list_surface
    from fuzzgate.engine.settings import EngineSettings
    from fuzzgate.plan.shards import shard_split
    from fuzzgate.report.tables import print_listing

    choice = choose_seed(seed_flag, config.seed, os.environ, Path.cwd())
    listing = interrupt.run(lambda: list_surface(EngineSettings.of(config), choice.seed))
    print_listing(
        console,
        config.target.display_name,
        listing,
        redactor_for(ServerSettings.of(config), canary_environment(choice.seed)),
    )
    if config.shard is not None:
        console.print(shard_split(config.shard, listing.decisions))
    return ExitCode.OK
