"""The GitHub Action's entrypoint: turn the action's inputs into a `fuzzgate run`, run it in-process,
and hand the run's results to later steps as step outputs.

GitHub passes each input `name` of `action.yml` as the environment variable `INPUT_<NAME>`, upper-cased
but with hyphens kept (`INPUT_FAIL-ON`); both spellings are read. The job summary and the `::error`
annotations are written by `fuzzgate run` itself when it sees `$GITHUB_STEP_SUMMARY` and
`GITHUB_ACTIONS=true`, so this module adds only the step outputs. The exit code is the run's.

    python -m fuzzgate.cli.action
"""

from __future__ import annotations

import os
import secrets
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

from rich.console import Console

from fuzzgate.cli import main as cli
from fuzzgate.model.errors import ExitCode, FuzzgateError, UsageError
from fuzzgate.record.results import BaselineState
from fuzzgate.report.json_report import REPORT_FILE, read
from fuzzgate.report.junit import JUNIT_FILENAME
from fuzzgate.report.sarif import SARIF_FILENAME
from fuzzgate.report.summary import SUMMARY_FILENAME

INPUT_NAMES = (
    "config",
    "budget",
    "seed",
    "mode",
    "fail-on",
    "baseline",
    "corpus",
    "output",
    "working-directory",
    "base",
    "changed-files",
    "args",
)
"""The inputs `action.yml` declares, spelled as there."""

OUTPUT_NAMES = ("verdict", "new", "pre_existing", "known", "fixed", "sarif", "junit", "report", "summary", "seed")
"""The outputs `action.yml` declares; a run that could not report sets only `verdict`."""

ERROR_VERDICT = "error"
"""`verdict` when the run ended without a report (exit 2 or 3): never mistaken for a pass."""

OutputValue = str | int


@dataclass(frozen=True, slots=True)
class ActionInputs:
    """The action's inputs, whitespace-trimmed; an empty string means "not given"."""

    config: str = ""
    budget: str = ""
    seed: str = ""
    mode: str = ""
    fail_on: str = ""
    baseline: str = ""
    corpus: str = ""
    output: str = ""
    working_directory: str = ""
    args: tuple[str, ...] = ()
    base: str = ""
    changed_files: str = ""

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> ActionInputs:
        def get(name: str) -> str:
            hyphenated = f"INPUT_{name.upper()}"
            value = environ.get(hyphenated)
            if value is None:
                value = environ.get(hyphenated.replace("-", "_"), "")
            return value.strip()

        values = {name.replace("-", "_"): get(name) for name in INPUT_NAMES}
        raw_args = values.pop("args")
        try:
            args = tuple(shlex.split(raw_args))
        except ValueError as exc:
            raise UsageError(
                f"input `args`: cannot split {raw_args!r} ({exc})",
                hint="quote arguments as in a POSIX shell, e.g. args: --include 'search_*'",
            ) from None
        return cls(**values, args=args)

    def run_argv(self) -> list[str]:
        """The `fuzzgate` command line; inputs left empty leave the config file's value in force."""
        argv = ["run"]
        for flag, value in (
            ("--config", self.config),
            ("--budget", self.budget),
            ("--seed", self.seed),
            ("--mode", self.mode),
            ("--fail-on", self.fail_on),
            ("--baseline", self.baseline),
            ("--corpus", self.corpus),
            ("--out", self.output),
            ("--base", self.base),
            ("--changed-files", self.changed_files),
        ):
            if value:
                argv += [flag, value]
        return argv + list(self.args)


def working_directory(inputs: ActionInputs, environ: Mapping[str, str]) -> tuple[Path, Path]:
    """The workspace (`$GITHUB_WORKSPACE`, else the current directory) and where to run in it."""
    workspace = Path(environ.get("GITHUB_WORKSPACE") or Path.cwd()).resolve()
    where = (workspace / (inputs.working_directory or ".")).resolve()
    if not where.is_dir():
        raise UsageError(
            f"input `working-directory`: no such directory: {where}",
            hint="give a directory relative to the repository root, and check out the repository first",
        )
    if inputs.base and not (where / inputs.base).resolve().is_relative_to(workspace):
        raise UsageError(
            f"input `base`: {inputs.base} lies outside the workspace {workspace}",
            hint="check the base revision out into a directory inside the workspace (the action's container"
            " sees only the workspace), e.g. with actions/checkout's `path: base`",
        )
    return workspace, where


def run_cli(argv: Sequence[str]) -> int:
    """`fuzzgate` with `argv`, in this process; argparse's own exits (bad flags) become exit codes."""
    try:
        return cli.main(argv)
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return int(ExitCode.USAGE)


def out_dir(argv: Sequence[str]) -> Path:
    """The output directory the run used: the CLI's own parser and config loader decide it."""
    ns = cli.build_parser().parse_args(argv)
    return cli.load(ns, Console(file=StringIO())).out_dir.resolve()


def run_outputs(directory: Path, workspace: Path) -> dict[str, OutputValue]:
    """The step outputs of a run that wrote its report into `directory`."""
    report = read(directory / REPORT_FILE)
    states = [report.state_of(finding) for finding in report.findings]

    def shown(name: str) -> str:
        path = directory / name
        return path.relative_to(workspace).as_posix() if path.is_relative_to(workspace) else str(path)

    return {
        "verdict": report.verdict.value,
        "new": states.count(BaselineState.NEW),
        "pre_existing": states.count(BaselineState.PRE_EXISTING),
        "known": states.count(BaselineState.KNOWN),
        "fixed": len(report.fixed),
        "sarif": shown(SARIF_FILENAME),
        "junit": shown(JUNIT_FILENAME),
        "report": shown(REPORT_FILE),
        "summary": shown(SUMMARY_FILENAME),
        "seed": report.seed,
    }


def format_outputs(outputs: Mapping[str, OutputValue]) -> str:
    """`$GITHUB_OUTPUT` lines: numbers as `name=value`, text as `name<<DELIMITER` blocks.

    Text goes in a block under a random delimiter that does not occur in it, so a value holding a
    newline (a path can) cannot end its block early and set another output.
    """
    lines: list[str] = []
    for name, value in outputs.items():
        if isinstance(value, int):
            lines.append(f"{name}={value}\n")
            continue
        delimiter = f"FUZZGATE_{secrets.token_hex(16)}"
        while delimiter in value:
            delimiter = f"FUZZGATE_{secrets.token_hex(16)}"
        lines.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    return "".join(lines)


def write_outputs(outputs: Mapping[str, OutputValue], environ: Mapping[str, str]) -> None:
    if path := environ.get("GITHUB_OUTPUT"):
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(format_outputs(outputs))


def _print_error(error: FuzzgateError) -> None:
    print(f"fuzzgate: {error.title}: {error.message}", file=sys.stderr)
    if error.hint:
        print(f"hint: {error.hint}", file=sys.stderr)


def main() -> int:
    environ = os.environ
    try:
        inputs = ActionInputs.from_environ(environ)
        workspace, where = working_directory(inputs, environ)
    except FuzzgateError as error:
        _print_error(error)
        write_outputs({"verdict": ERROR_VERDICT}, environ)
        return int(error.exit_code)
    os.chdir(where)
    argv = inputs.run_argv()
    try:
        code = run_cli(argv)
    except BaseException:
        # An internal error: say so to later steps, then let the traceback through.
        write_outputs({"verdict": ERROR_VERDICT}, environ)
        raise
    # Only exits 0 and 1 come after a report was written; after any other, a report.json in the
    # output directory is an earlier run's and must not speak for this one.
    if code not in (ExitCode.OK, ExitCode.FINDINGS):
        write_outputs({"verdict": ERROR_VERDICT}, environ)
        return code
    try:
        outputs = run_outputs(out_dir(argv), workspace)
    except FuzzgateError as error:
        _print_error(error)
        write_outputs({"verdict": ERROR_VERDICT}, environ)
        return int(error.exit_code)
    write_outputs(outputs, environ)
    return code


if __name__ == "__main__":
    sys.exit(main())
