"""The `fuzzgate` command. It parses flags, runs the engine, fans events out to reporters and
decides the exit code; it never speaks MCP itself."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from rich.console import Console
from rich.markup import escape

from fuzzgate import __version__
from fuzzgate.cli import interrupt
from fuzzgate.config import Config, Overrides, find_config, load_config
from fuzzgate.model.errors import ExitCode, FuzzgateError, UsageError
from fuzzgate.report.workflow_commands import guarded_output

Handler = Callable[[argparse.Namespace, Console], int]


def _add_config_flags(p: argparse.ArgumentParser) -> None:
    # Also after the command (`fuzzgate run -v`), as the README lists it among these; suppressed as
    # a default so that `fuzzgate -v run` keeps it.
    p.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help="show tracebacks for errors")
    g = p.add_argument_group("configuration (each overrides the config file)")
    g.add_argument("--config", type=Path, help="config file (default: looked up, see README)")
    g.add_argument("--budget", help="time budget for fuzzing, e.g. 60s, 5m (default 60s)")
    g.add_argument("--cases", help="at most this many cases per tool")
    g.add_argument("--mode", choices=["conform", "adversarial", "mixed"], help="generation mode (default mixed)")
    g.add_argument("--concurrency", help="calls in flight at once (default 1)")
    g.add_argument("--include", action="append", metavar="GLOB", help="fuzz only tools matching (repeatable)")
    g.add_argument("--exclude", action="append", metavar="GLOB", help="never fuzz tools matching (repeatable)")
    g.add_argument("--max-tools", help="fuzz at most this many tools")
    g.add_argument("--seed", help="master seed: a number or a commit SHA (default: derived from the commit)")
    g.add_argument("--fail-on", choices=["low", "medium", "high", "critical"], help="lowest failing severity")
    g.add_argument(
        "--fail-on-sdk",
        action="store_const",
        const=True,
        default=None,
        help="fail on new findings the server's MCP SDK causes too (they are low)",
    )
    g.add_argument("--out", type=Path, help="output directory (default .fuzzgate/out)")
    g.add_argument("--secret-pattern", action="append", metavar="REGEX", help="extra secret pattern (repeatable)")
    g.add_argument("--slow", help="slow-call threshold, e.g. 2s")
    g.add_argument("--max-string", help="string size cap, e.g. 64KiB")
    g.add_argument("--replays", help="replays per finding on fresh servers (default 3)")
    g.add_argument(
        "--shrink-tries",
        metavar="N",
        help="fresh servers shrinking a confirmed finding's call may take (default 24; 0: none)",
    )
    g.add_argument(
        "--coverage-sampling", metavar="N", help="on a tool's coverage plateau, measure 1 call in N (default 8; 1: all)"
    )
    g.add_argument("--protocol", choices=["auto", "legacy", "2026-07-28"], help="protocol negotiation")
    g.add_argument("--baseline", type=Path, help="baseline directory (default .fuzzgate/baseline)")
    g.add_argument("--corpus", type=Path, help="corpus directory (default .fuzzgate/corpus)")
    g.add_argument("--shard", metavar="I/N", help="fuzz only the I-th of N stable shares of the tools")
    g.add_argument(
        "--store", metavar="URL|DIR", help="shared store (redis://host:port/db or a directory): corpus, findings, stats"
    )
    g.add_argument(
        "--feedback",
        choices=["auto", "behaviour", "off"],
        help=(
            "what counts as new: auto (coverage of a Python or Node server, else behaviour), behaviour, off "
            "(default auto)"
        ),
    )
    g.add_argument("--timeout", help="per-request timeout, e.g. 5s")
    g.add_argument("--startup-timeout", help="time allowed for the server to start and initialize")
    g.add_argument("--memory-limit", help="most resident memory the server's processes may hold, e.g. 2GiB, or off")
    g.add_argument("--name", help="the target's name in reports (default: derived from the command or URL)")
    g.add_argument(
        "--sandbox",
        choices=["auto", "required", "off"],
        help="run the server in a Linux-namespace sandbox: auto (where it works), required, off (default auto)",
    )
    g.add_argument(
        "--fuzz-guarded-in-sandbox",
        action="store_const",
        const=True,
        help="fuzz tools the destructive guard blocks, where (and only where) the sandbox holds for the server",
    )
    t = p.add_argument_group("target (instead of or over the config file's [target])")
    _add_target_flags(t, "stdio server command", "stdio server argument", "streamable HTTP endpoint")
    t.add_argument("--header", action="append", metavar="'NAME: VALUE'", help="HTTP header (repeatable)")


def _add_target_flags(p: argparse.ArgumentParser | argparse._ArgumentGroup, command: str, arg: str, url: str) -> None:
    """`--command`, `--arg` and `--url`, as every command that takes a target spells them."""
    p.add_argument("--command", dest="target_command", help=command)
    p.add_argument(
        "--arg", dest="target_args", action="append", metavar="ARG",
        help=f"{arg} (repeatable; write --arg=--flag for one that starts with --)",
    )  # fmt: skip
    p.add_argument("--url", help=url)


def _overrides(ns: argparse.Namespace) -> Overrides:
    def tup(values: list[str] | None) -> tuple[str, ...] | None:
        return tuple(values) if values else None

    return Overrides(
        budget=ns.budget,
        cases=ns.cases,
        mode=ns.mode,
        concurrency=ns.concurrency,
        include=tup(ns.include),
        exclude=tup(ns.exclude),
        max_tools=ns.max_tools,
        fail_on=ns.fail_on,
        fail_on_sdk=getattr(ns, "fail_on_sdk", None),
        out=ns.out,
        secret_patterns=tup(ns.secret_pattern),
        slow=ns.slow,
        max_string=ns.max_string,
        replays=ns.replays,
        shrink_tries=ns.shrink_tries,
        coverage_sampling=ns.coverage_sampling,
        protocol=ns.protocol,
        startup_timeout=ns.startup_timeout,
        memory_limit=ns.memory_limit,
        baseline=ns.baseline,
        # Only `run` has these: the other commands never replay on the base revision.
        base=getattr(ns, "base", None),
        changed_files=getattr(ns, "changed_files", None),
        corpus=ns.corpus,
        shard=ns.shard,
        store=ns.store,
        name=ns.name,
        command=ns.target_command,
        args=tup(ns.target_args),
        url=ns.url,
        headers=tup(ns.header),
        timeout=ns.timeout,
        sandbox=ns.sandbox,
        feedback=ns.feedback,
        fuzz_guarded_in_sandbox=ns.fuzz_guarded_in_sandbox,
    )


def load(ns: argparse.Namespace, console: Console, *, recorded: bool = False, report: Path | None = None) -> Config:
    """The configuration of `ns`. `recorded`: with no config file and no target flag, the target
    the last report (or the report file `report`) recorded (`cli.recorded`), as the commands a run
    by flags prints expect."""
    cwd = Path.cwd()
    explicit = ns.config
    target_flag = ns.target_command or ns.url
    path = None if (explicit is None and target_flag) else find_config(explicit, cwd, os.environ)
    overrides = _overrides(ns)
    if recorded and path is None and not target_flag:
        from fuzzgate.cli.recorded import recorded_target

        found = recorded_target(overrides, report)
        if found is not None:
            overrides, line = found
            console.print(escape(line), highlight=False)

    def warn(message: str) -> None:
        console.print(f"[yellow]warning:[/] {escape(message)}", highlight=False)

    return load_config(path, overrides, os.environ, warn=warn)


def _cmd_run(ns: argparse.Namespace, console: Console) -> int:
    from fuzzgate.cli.run import run_gate

    config = load(ns, console)
    return run_gate(config, console, seed_flag=ns.seed, trace=ns.trace, quiet=ns.quiet)


def _cmd_tools(ns: argparse.Namespace, console: Console) -> int:
    from fuzzgate.cli.run import list_tools

    return list_tools(load(ns, console), console, seed_flag=ns.seed)


def _cmd_replay(ns: argparse.Namespace, console: Console) -> int:
    from fuzzgate.cli.replay import replay

    if ns.tool is None and ns.finding is None:
        raise UsageError("replay needs a FINGERPRINT, a FILE, or --tool with --arguments")
    given = Path(ns.finding) if ns.finding is not None and Path(ns.finding).is_file() else None
    config = load(ns, console, recorded=True, report=given)
    return replay(config, console, finding=ns.finding, tool=ns.tool, arguments=ns.arguments, seed_flag=ns.seed)


def _cmd_init(ns: argparse.Namespace, console: Console) -> int:
    from fuzzgate.cli.starter import check_starter_path, starter_file

    path: Path = ns.path
    check_starter_path(path)
    if path.exists() and not ns.force:
        raise UsageError(f"{path} already exists", hint="pass --force to overwrite it")
    from fuzzgate.model.files import check_output_directory, write_atomic, write_failed

    check_output_directory(path.parent, what="directory of the config file", files=(path.name,))
    command, url = ns.target_command, ns.url
    text = starter_file("http" if ns.http or url else "stdio", command, tuple(ns.target_args or ()), url)
    try:
        write_atomic(path, text)
    except OSError as exc:
        raise write_failed("the config file", path, exc, hint="choose another path, or make room there") from None
    edit = "" if command is not None or url is not None else "edit [target], then "
    console.print(escape(f"wrote {path}: {edit}run `fuzzgate tools` to see what would be fuzzed"))
    return ExitCode.OK


def _cmd_baseline(ns: argparse.Namespace, console: Console) -> int:
    from fuzzgate.cli.baseline import baseline_command

    if ns.pre_existing and ns.action != "accept":
        raise UsageError(f"--pre-existing goes with `baseline accept`, not `baseline {ns.action}`")
    return baseline_command(ns.action, load(ns, console, recorded=True), console, pre_existing=ns.pre_existing)


def _cmd_corpus(ns: argparse.Namespace, console: Console) -> int:
    from fuzzgate.cli import corpus as corpus_tools

    if ns.action == "list":
        flags_only = ns.config is None and not (ns.target_command or ns.url)
        if flags_only and find_config(None, Path.cwd(), os.environ) is None:
            # No target to narrow to: every target in the corpus directory.
            return corpus_tools.list_corpus(console, root=ns.corpus or Path(".fuzzgate/corpus"), target=None)
        config = load(ns, console)
        target = None if ns.all else config.target.display_name
        return corpus_tools.list_corpus(console, root=config.corpus, target=target)
    config = load(ns, console)
    if ns.action == "merge":
        return corpus_tools.merge_command(config, console, ns.dirs, seed_flag=ns.seed)
    return corpus_tools.reduce_command(config, console, ns.action, seed_flag=ns.seed)


def _cmd_merge(ns: argparse.Namespace, console: Console) -> int:
    from fuzzgate.cli.merge import merge_command
    from fuzzgate.model.findings import Severity

    fail_on = None if ns.fail_on is None else Severity(ns.fail_on)
    return merge_command(console, ns.dirs, out=ns.out, fail_on=fail_on, quiet=ns.quiet)


def _cmd_report(ns: argparse.Namespace, console: Console) -> int:
    from fuzzgate.cli.report import report_command
    from fuzzgate.config import flag_secret_patterns

    patterns = flag_secret_patterns(ns.secret_pattern or ())
    return report_command(console, ns.store, ns.out, target=ns.target, secret_patterns=patterns)


def _cmd_work(ns: argparse.Namespace, console: Console) -> int:
    from fuzzgate.cli.work import WorkOptions, load_configs, work
    from fuzzgate.config import parse_duration

    # --budget bounds the whole work (none by default); each cycle's engine run gets --cycle.
    total, ns.budget = ns.budget, None
    for flag, value in (("--cycles", ns.cycles), ("--tools", ns.tools)):
        if value is not None and value < 1:
            # 0 or less did nothing (--cycles) or meant every tool (--tools), silently.
            raise UsageError(f"{flag}: expected a whole number of at least 1, got {value}")
    options = WorkOptions(
        cycle_s=parse_duration(ns.cycle, what="--cycle"),
        budget_s=None if total is None else parse_duration(total, what="--budget"),
        cycles=ns.cycles,
        nice=ns.nice,
        tools=ns.tools,
        wait_s=parse_duration(ns.wait, what="--wait"),
    )

    def warn(message: str) -> None:
        console.print(f"[yellow]warning:[/] {escape(message)}", highlight=False)

    return work(load_configs(load(ns, console), ns.also, _overrides(ns), warn), console, options)


class _Parser(argparse.ArgumentParser):
    """argparse's parser with abbreviations off, for the top level and (as `add_subparsers` makes
    each subparser of its parent's class) every command. By default argparse takes any unambiguous
    prefix of a flag for the flag: `run --base DIR` would silently mean `--baseline DIR`, and every
    flag added later would change what an existing command line means. An unknown flag is a usage
    error (exit 2)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        if message == "argument --arg: expected one argument":
            # `--arg --repository` (the server's own flag) is how a server's command line is first typed.
            message += " (a server argument that starts with - is written --arg=VALUE: --arg=--repository)"
        super().error(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="fuzzgate",
        description="Deterministic fuzzing gate for MCP servers.",
        epilog="exit codes: 0 no new finding at or above --fail-on, 1 new findings, "
        "2 usage/config/baseline error, 3 the server could not be started or initialized, 4 internal error",
    )
    parser.add_argument("--version", action="version", version=f"fuzzgate {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="show tracebacks for errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser("run", help="fuzz the configured server and gate on new findings")
    _add_config_flags(run)
    run.add_argument(
        "--base",
        type=Path,
        metavar="DIR",
        help="the base revision of the repository, installed like the head: findings that fail there too are"
        " pre-existing and do not fail the gate",
    )
    run.add_argument(
        "--changed-files",
        type=Path,
        metavar="FILE",
        help="the paths the change touched, one per line (default with --base: the files that differ):"
        " tools reaching them get most of the budget",
    )
    run.add_argument("--trace", type=Path, help="write every request and outcome as JSON lines")
    run.add_argument("-q", "--quiet", action="store_true", help="print only the summary")
    run.set_defaults(handler=_cmd_run)

    tools = sub.add_parser("tools", help="show what a run would fuzz, block and skip, calling nothing")
    _add_config_flags(tools)
    tools.set_defaults(handler=_cmd_tools)

    replay = sub.add_parser("replay", help="send a finding's repro again: exit 1 if it still fails")
    replay.add_argument("finding", nargs="?", help="a fingerprint, or a report/baseline JSON file")
    replay.add_argument("--tool", help="tool to call (with --arguments) instead of a recorded finding")
    replay.add_argument("--arguments", default="{}", help="JSON object of arguments for --tool")
    _add_config_flags(replay)
    replay.set_defaults(handler=_cmd_replay)

    init = sub.add_parser("init", help="write a commented starter config")
    init.add_argument("path", nargs="?", type=Path, default=Path("fuzzgate.toml"))
    init.add_argument("--http", action="store_true", help="for a streamable HTTP server (default stdio)")
    init.add_argument("--force", action="store_true", help="overwrite an existing file")
    _add_target_flags(
        init, "the server's command, in place of the example", "an argument of --command",
        "the streamable HTTP endpoint (makes the file an http one)",
    )  # fmt: skip
    init.set_defaults(handler=_cmd_init)

    baseline = sub.add_parser("baseline", help="manage the baseline corpus of known findings")
    baseline.add_argument(
        "action",
        choices=["accept", "prune", "list", "upgrade"],
        help="accept the last run's findings, prune fixed entries, list them, or upgrade them to this "
        "fuzzgate's fingerprint scheme and file format",
    )
    baseline.add_argument(
        "--pre-existing",
        action="store_true",
        help="accept: only the findings the last run showed failing on the base revision (run --base)",
    )
    _add_config_flags(baseline)
    baseline.set_defaults(handler=_cmd_baseline)

    corpus = sub.add_parser("corpus", help="list, merge, minimize or cleanse the corpus of inputs kept between runs")
    actions = corpus.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="entries per target and tool: sizes, signals, environments")
    listing.add_argument("--all", action="store_true", help="every target in the corpus, not only the configured one")
    merge = actions.add_parser("merge", help="merge other corpora in, keeping a smallest set with all their feedback")
    merge.add_argument("dirs", nargs="+", type=Path, metavar="DIR", help="a corpus directory, or a target's directory")
    actions.add_parser("minimize", help="shrink every entry to a smaller input with the same feedback")
    actions.add_parser("cleanse", help="replace each part of every entry with the simplest value keeping its feedback")
    for action in actions.choices.values():
        _add_config_flags(action)
    corpus.set_defaults(handler=_cmd_corpus)

    merge = sub.add_parser("merge", help="merge the outputs of `run --shard` jobs (or of several targets): one verdict")
    merge.add_argument("dirs", nargs="+", type=Path, metavar="DIR", help="an output directory of `fuzzgate run`")
    merge.add_argument("--out", type=Path, default=Path(".fuzzgate/out"), help="where to write (default .fuzzgate/out)")
    merge.add_argument("--fail-on", choices=["low", "medium", "high", "critical"], help="default: the runs' own")
    merge.add_argument("-q", "--quiet", action="store_true", help="print only one line per target")
    merge.set_defaults(handler=_cmd_merge)

    report = sub.add_parser("report", help="draw one self-contained HTML page over a shared store (no worker needed)")
    report.add_argument("--store", required=True, metavar="URL|DIR", help="redis://host:port/db or a directory")
    report.add_argument("--out", type=Path, help="page to write (default .fuzzgate/report.html)")
    report.add_argument("--target", metavar="NAME", help="only this target (default: every target in the store)")
    report.add_argument("--secret-pattern", action="append", metavar="REGEX", help="extra secret pattern to redact")
    report.set_defaults(handler=_cmd_report)

    work = sub.add_parser("work", help="fuzz until stopped, in cycles, sharing corpus, findings and stats via --store")
    work.add_argument("--cycle", default="60s", help="each cycle's budget (default 60s); --budget bounds all")
    work.add_argument("--cycles", type=int, metavar="N", help="stop after N cycles (default: until stopped)")
    work.add_argument("--tools", type=int, default=4, metavar="N", help="tools fuzzed per cycle (default 4)")
    work.add_argument("--nice", type=int, default=10, metavar="N", help="lower the priority by N (default 10)")
    work.add_argument("--wait", default="30s", help="how long to wait for the store at start (default 30s)")
    work.add_argument(
        "--also", action="append", type=Path, default=[], metavar="CONFIG", help="another target's config (repeatable)"
    )
    _add_config_flags(work)
    work.set_defaults(handler=_cmd_work)

    store = sub.add_parser("store", help="export, import, merge or show a shared store (a directory or redis:// URL)")
    store_actions = store.add_subparsers(dest="action", metavar="ACTION", required=True)
    export = store_actions.add_parser("export", help="copy the --store into DEST, or its corpus into --corpus-dir")
    export.add_argument("dest", nargs="?", metavar="DEST", help="a directory or redis:// URL to add every value to")
    imports = store_actions.add_parser("import", help="add SRC (a store), or a run's --corpus-dir, to the --store")
    imports.add_argument("source", nargs="?", metavar="SRC", help="a store directory or redis:// URL")
    imports.add_argument("--target", metavar="NAME", help="with --corpus-dir: the target a one-target directory is of")
    merging = store_actions.add_parser("merge", help="union stores into the --store; each worker's latest stats kept")
    merging.add_argument("sources", nargs="+", metavar="SRC", help="a store directory or redis:// URL")
    store_actions.add_parser("show", help="targets, corpus sizes, findings by state and workers of the --store")
    for action in store_actions.choices.values():
        action.add_argument("--store", required=True, metavar="URL|DIR", help="redis://host:port/db or a directory")
        action.add_argument("--retry-for", type=float, default=10.0, metavar="S", help="retry Redis S s (default 10)")
    for action in (export, imports):
        action.add_argument("--corpus-dir", type=Path, metavar="DIR", help="a run's corpus directory, one per target")
    store.set_defaults(handler=_cmd_store)
    return parser


def _cmd_store(ns: argparse.Namespace, console: Console) -> int:
    from fuzzgate.cli import store as store_tools

    retry = ns.retry_for
    if ns.action == "export":
        return store_tools.export_command(console, ns.store, ns.dest, ns.corpus_dir, retry_for=retry)
    if ns.action == "import":
        return store_tools.import_command(console, ns.source, ns.store, ns.corpus_dir, ns.target, retry_for=retry)
    if ns.action == "merge":
        return store_tools.merge_command(console, ns.sources, ns.store, retry_for=retry)
    return store_tools.show_command(console, ns.store, retry_for=retry)


def _print_error(console: Console, error: FuzzgateError) -> None:
    """The error in its lines. A message or detail can quote a server's words (its last stderr
    lines): their control characters are written as escapes, so a server's terminal sequences
    cannot erase, hide or recolour fuzzgate's lines, and the detail is indented under them."""
    from fuzzgate.check.headline import printable

    def shown(text: str) -> str:
        return "\n".join(printable(line) for line in text.splitlines())

    console.print(f"[bold red]fuzzgate: {error.title}:[/] {escape(shown(error.message))}", highlight=False)
    if error.detail:
        detail = "\n".join(f"  {printable(line)}" for line in error.detail.splitlines())
        console.print(escape(detail), highlight=False)
    if error.hint:
        console.print(f"[dim]hint:[/] {escape(shown(error.hint))}", highlight=False)


def main(argv: Sequence[str] | None = None) -> int:
    # Under GitHub Actions no server text may become a workflow command (README, "Safety").
    with guarded_output(os.environ):
        return _main(argv)


def _reanchor_cwd() -> None:
    """Make the working directory the one its path names now. A process started in a directory and
    then moved into a mount namespace that mounts over it (`netjail.sh --rw DIR`, which the README
    advises for servers that reach the network) keeps the old directory: its relative paths
    (`.fuzzgate/out`, the corpus) landed on the read-only mount below while absolute ones did not,
    so the outputs' check passed and writing them failed after the run."""
    with contextlib.suppress(OSError):
        os.chdir(os.getcwd())


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    ns = parser.parse_args(argv)
    # Errors stay one line however narrow the terminal; CI logs are not a terminal and get room for tables.
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    out = Console(highlight=False)
    if not out.is_terminal:
        out = Console(highlight=False, width=160)
    if ns.command is None:
        parser.print_help()
        return ExitCode.USAGE
    handler: Handler = ns.handler
    if not ns.verbose:
        # A library's log record with no handler configured reaches stderr through logging's last
        # resort: the MCP SDK's client logs a traceback ("Error parsing SSE message") when a
        # session fuzzgate closes still has a reply streaming in, which says nothing about the server.
        logging.getLogger().addHandler(logging.NullHandler())
    _reanchor_cwd()
    from fuzzgate.sandbox.process_tree import become_subreaper

    # Orphans of a server's processes become fuzzgate's children, to be found and killed (process_tree).
    become_subreaper()
    interrupt.install()
    try:
        try:
            return int(handler(ns, out))
        except BaseExceptionGroup as group:
            # anyio task groups wrap what their tasks raise; the user's error is the one inside.
            raise _single(group) from None
        finally:
            _kill_last_orphans()
    except FuzzgateError as error:
        if ns.verbose:
            err.print_exception()
        _print_error(err, error)
        return int(error.exit_code)
    except interrupt.Interrupted as stop:
        if stop.outputs_written:
            err.print(f"fuzzgate: {stop} after the outputs were written")
        else:
            err.print(f"fuzzgate: {stop}; the server was stopped and no partial report was written")
        return stop.exit_code
    except KeyboardInterrupt:
        err.print("fuzzgate: interrupted; the server was stopped and no partial report was written")
        return 130
    except Exception:
        err.print_exception()
        err.print("[bold red]fuzzgate: internal error[/] (a bug in fuzzgate: please report it with the traceback)")
        return int(ExitCode.INTERNAL)


def _kill_last_orphans() -> None:
    """No process a server started outlives fuzzgate, whichever way the command ended."""
    from fuzzgate.sandbox.process_tree import CUSTODY, kill_orphans

    if CUSTODY.subreaper:
        import anyio

        anyio.run(lambda: kill_orphans(last=True))


def _single(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The one meaningful exception in a (nested) group: a user error or an interrupt if there is one."""
    leaves: list[BaseException] = []

    def walk(exc: BaseException) -> None:
        if isinstance(exc, BaseExceptionGroup):
            for inner in exc.exceptions:
                walk(inner)
        else:
            leaves.append(exc)

    walk(group)
    for wanted in (interrupt.Interrupted, KeyboardInterrupt, FuzzgateError):
        for leaf in leaves:
            if isinstance(leaf, wanted):
                return leaf
    return leaves[0] if leaves else group


if __name__ == "__main__":
    sys.exit(main())
