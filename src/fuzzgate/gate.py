"""The commands behind the CLI: `run` (replay the baseline, fuzz, classify, write every output),
`tools`, `replay` and `baseline`. They print through reporters and return exit codes."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from fuzzgate import __version__
from fuzzgate.check import Oracles
from fuzzgate.check.secrets import SecretScanner, canary_environment
from fuzzgate.commands import prune_command
from fuzzgate.config import CONFIG_FILE_NAMES
from fuzzgate.config.model import Config, TargetKind
from fuzzgate.discover import discover
from fuzzgate.errors import ExitCode, ReportError, UsageError
from fuzzgate.events import BaselineReplayed, Event, EventSink, RunFinished, RunStarted
from fuzzgate.execute import Engine, EngineResult, redactor_for
from fuzzgate.findings import Finding, Repro, Surface
from fuzzgate.plan import select
from fuzzgate.report import annotations as github_annotations
from fuzzgate.report import json_report
from fuzzgate.report.console import ConsoleReporter
from fuzzgate.report.junit import write_junit
from fuzzgate.report.sarif import write_sarif
from fuzzgate.report.summary import render_summary, write_summary
from fuzzgate.report.trace import TraceWriter
from fuzzgate.results import RunReport, Status, Verdict
from fuzzgate.seed import SeedChoice, choose_seed
from fuzzgate.store.baseline import Baseline
from fuzzgate.store.diff import classify
from fuzzgate.target.connection import open_connection
from fuzzgate.triage import replay_once


def repository_root(cwd: Path) -> Path:
    """Where SARIF and JUnit paths are relative to: $GITHUB_WORKSPACE, the git top level, or cwd."""
    if workspace := os.environ.get("GITHUB_WORKSPACE"):
        return Path(workspace).resolve()
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        if out.returncode == 0 and out.stdout.strip():
            return Path(out.stdout.strip()).resolve()
    except (OSError, subprocess.SubprocessError):
        pass
    return cwd.resolve()


def _fan_out(*sinks: EventSink) -> EventSink:
    def emit(event: Event) -> None:
        for sink in sinks:
            sink(event)

    return emit


def _oracles(config: Config, seed: int) -> tuple[Oracles, dict[str, str]]:
    canaries = canary_environment(seed) if config.target.kind is TargetKind.STDIO else {}
    scanner = SecretScanner(config.secret_patterns, canaries)
    return Oracles(slow_s=config.slow_ms / 1000, scanner=scanner), canaries


async def _still_failing(config: Config, finding: Finding, attempts: int) -> bool:
    """Whether a recorded finding fails again on a fresh server (stopping at the first failure)."""
    if finding.surface is not Surface.TOOL:
        return False
    oracles, canaries = _oracles(config, finding.repro.seed)
    for _ in range(max(1, attempts)):
        same, _ = await replay_once(config, oracles, finding, canaries)
        if same:
            return True
    return False


async def _replay_baseline(config: Config, known: list[Finding], emit: EventSink) -> set[str]:
    failing: set[str] = set()
    for finding in known:
        still = await _still_failing(config, finding, config.replays)
        if still:
            failing.add(finding.fingerprint)
        emit(BaselineReplayed(finding.fingerprint, still))
    return failing


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


def run_gate(config: Config, console: Console, *, seed_flag: str | None, trace: Path | None, quiet: bool) -> int:
    cwd = Path.cwd()
    choice = choose_seed(seed_flag, config.seed, os.environ, cwd)
    if choice.warning:
        console.print(f"[yellow]warning:[/] {choice.warning}")
    baseline = Baseline.open(config.baseline_dir)
    known = baseline.findings()  # a corrupt baseline stops the run here, before any server starts

    reporter = ConsoleReporter(console, quiet=quiet)
    sinks: list[EventSink] = [reporter]
    tracer: TraceWriter | None = None
    engine = Engine(config, choice.seed, lambda e: None)
    if trace is not None:
        tracer = TraceWriter(trace, redactor_for(config, engine.canaries))
        sinks.append(tracer)
    emit = _fan_out(*sinks)
    engine.emit = emit
    emit(RunStarted(config.target.display_name, choice.seed, choice.source, config.budget_s, config.mode.value))

    async def body() -> tuple[set[str], EngineResult]:
        still_failing = await _replay_baseline(config, known, emit)
        return still_failing, await engine.run()

    try:
        still_failing, result = anyio.run(body)
    finally:
        if tracer is not None:
            tracer.close()

    repo_root = repository_root(cwd)
    report = build_report(config, choice, result, known, still_failing, repo_root)
    write_outputs(report, config.out_dir, repo_root)
    emit(RunFinished(report))
    reporter.summary(report, _config_here(config, cwd))
    if report.fixed:
        console.print(f"remove fixed entries from the baseline with: {prune_command(report.config_path)}")
    _github_extras(report, repo_root)
    return ExitCode.FINDINGS if report.verdict is Verdict.FAIL else ExitCode.OK


def build_report(
    config: Config,
    choice: SeedChoice,
    result: EngineResult,
    known: list[Finding],
    still_failing: set[str],
    repo_root: Path,
) -> RunReport:
    classification = classify(result.findings, known, still_failing)
    draft = RunReport(
        version=__version__,
        target=result.target,
        seed=choice.seed,
        seed_source=choice.source,
        budget_s=config.budget_s,
        duration_s=result.duration_s,
        calls=result.calls,
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
    )
    return replace(draft, verdict=Verdict.FAIL if draft.gating() else Verdict.PASS)


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
            print(line, flush=True)


def list_tools(config: Config, console: Console, *, seed_flag: str | None) -> int:
    choice = choose_seed(seed_flag, config.seed, os.environ, Path.cwd())

    async def body() -> None:
        async with open_connection(config, extra_env=canary_environment(choice.seed)) as connection:
            inventory = await discover(connection, config.target.timeout_ms / 1000)
            protocol = connection.protocol_version
        selection = select(inventory, config, choice.seed)
        table = Table(title=f"{config.target.display_name} (protocol {protocol})")
        table.add_column("tool")
        table.add_column("would be")
        table.add_column("reason")
        decided = {e.name: e for e in selection.entries}
        for tool in inventory.tools:
            entry = decided.get(tool.name)
            status = entry.status.value if entry else Status.FUZZED.value
            table.add_row(escape(tool.name), status, escape(entry.reason or "") if entry else "")
        console.print(table)
        for label, items in (
            ("resources", inventory.resources),
            ("resource templates", inventory.resource_templates),
            ("prompts", inventory.prompts),
        ):
            console.print(f"{label}: {escape(', '.join(items)) if items else '-'}")

    anyio.run(body)
    return ExitCode.OK


def _findings_from_file(path: Path) -> list[Finding]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ReportError(f"{path}: not a readable JSON file ({exc})") from None
    try:
        if isinstance(data, dict) and "findings" in data:
            return [*json_report.read(path).findings]
        from fuzzgate.store.baseline import BaselineEntry

        return [BaselineEntry.from_json(data).to_finding()]
    except Exception as exc:
        raise ReportError(f"{path}: neither a fuzzgate report nor a baseline entry ({exc})") from None


def _find_fingerprint(config: Config, fingerprint: str) -> Finding:
    report_path = config.out_dir / json_report.REPORT_FILE
    candidates: list[Finding] = []
    if report_path.exists():
        candidates += json_report.read(report_path).findings
    candidates += Baseline.open(config.baseline_dir).findings()
    for finding in candidates:
        if finding.fingerprint == fingerprint or (
            len(fingerprint) >= 6 and finding.fingerprint.startswith(fingerprint)
        ):
            return finding
    raise ReportError(
        f"no finding with fingerprint {fingerprint} in {report_path} or {config.baseline_dir}",
        hint="pass the report or baseline file instead, or use --tool with --arguments",
    )


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
    findings = (
        _findings_from_file(path) if path.suffix == ".json" or path.is_file() else [_find_fingerprint(config, finding)]
    )

    async def body() -> list[bool]:
        return [await _still_failing(config, f, config.replays) for f in findings]

    results = anyio.run(body)
    for f, failing in zip(findings, results, strict=True):
        verdict = "[red]still fails[/]" if failing else "[green]no longer fails[/]"
        console.print(f"{verdict}: {f.kind.value} in {escape(f.name)} ({f.fingerprint})")
    return ExitCode.FINDINGS if any(results) else ExitCode.OK


def _replay_adhoc(config: Config, console: Console, tool: str, args: dict[str, Any]) -> int:
    choice = choose_seed(None, config.seed, os.environ, Path.cwd())
    oracles, canaries = _oracles(config, choice.seed)
    probe = Finding(
        kind=next(iter(config.severity)),
        severity=config.fail_on,
        surface=Surface.TOOL,
        name=tool,
        message="",
        fingerprint="",
        repro=Repro(seed=choice.seed, case_index=0, arguments=args, transport=config.target.kind.value),
    )

    async def body() -> list[Any]:
        _, observations = await replay_once(config, oracles, probe, canaries)
        return observations

    observations = anyio.run(body)
    redact = redactor_for(config, canaries)
    for observation in observations:
        console.print(f"[red]fails[/]: {observation.kind.value}: {escape(redact.text(observation.message))}")
    if not observations:
        console.print(f"[green]no finding[/]: {escape(tool)} handled the request correctly")
    return ExitCode.FINDINGS if observations else ExitCode.OK


def baseline_command(action: str, config: Config, console: Console) -> int:
    baseline = Baseline.open(config.baseline_dir)
    if action == "list":
        entries = baseline.findings()
        for f in entries:
            console.print(f"{f.fingerprint}  {f.kind.value:<16} {escape(f.name)}: {escape(f.message)}")
        console.print(f"{len(entries)} baseline entr{'y' if len(entries) == 1 else 'ies'} in {config.baseline_dir}")
        return ExitCode.OK
    if action == "accept":
        report = json_report.read(config.out_dir / json_report.REPORT_FILE)
        for finding in report.findings:
            baseline.record(finding)
        console.print(f"recorded {len(report.findings)} finding(s) in {config.baseline_dir}")
        return ExitCode.OK
    entries = baseline.findings()

    async def body() -> list[bool]:
        return [await _still_failing(config, f, config.replays) for f in entries]

    results = anyio.run(body)
    removed = [f for f, failing in zip(entries, results, strict=True) if not failing]
    for finding in removed:
        baseline.remove(finding.fingerprint)
        console.print(f"pruned {finding.fingerprint} ({finding.kind.value} in {escape(finding.name)})")
    console.print(f"{len(removed)} pruned, {len(entries) - len(removed)} still failing")
    return ExitCode.OK
