"""The commands every output prints (a replay per finding, `baseline accept`, `baseline prune`)
repeat the run's own flags (`RunReport.command_flags`), so a run given its target by flags alone
prints commands that start the same server; `report.json` keeps them whole."""

from __future__ import annotations

import html
import io
import json
import re
import shlex
from dataclasses import replace
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from fuzzgate.cli.main import build_parser
from fuzzgate.record.results import RunReport
from fuzzgate.report import json_report
from fuzzgate.report.annotations import annotations
from fuzzgate.report.console import ConsoleReporter
from fuzzgate.report.junit import render_junit
from fuzzgate.report.sarif import render_sarif
from fuzzgate.report.summary import render_summary
from tests.report.report_factory import Sample, sample_report

FLAGS = ("--command=python3", "--arg=srv dir/server.py", "--arg=--port=0", "--timeout=3s", "--out=reports")
RELEASED_REPORT = Path(__file__).parent / "fixtures" / "report-0.1.0-release.json"


@given(st.lists(st.text(st.characters(exclude_categories=("Cs",))), max_size=4).map(tuple))
def test_report_json_keeps_the_flags_whole(flags: tuple[str, ...]) -> None:
    report = replace(sample_report(Path("/nonexistent")), command_flags=flags)
    assert RunReport.from_json(json.loads(json_report.render(report))).command_flags == flags


def test_a_report_written_before_them_reads_with_none() -> None:
    assert "command_flags" not in json.loads(RELEASED_REPORT.read_text())
    assert json_report.read(RELEASED_REPORT).command_flags == ()


def _commands(text: str) -> list[str]:
    """Every `fuzzgate replay|baseline ...` command in `text`, to the end of its line."""
    return re.findall(r"fuzzgate (?:replay|baseline (?:accept|prune))[^\n]*", text)


def _outputs(report: RunReport, repo: Path) -> dict[str, str]:
    console = Console(file=io.StringIO(), width=400, highlight=False)
    ConsoleReporter(console).summary(report)
    sarif = json.loads(render_sarif(report, repo))
    return {
        "summary.md": render_summary(report, repo),
        "junit.xml": html.unescape(re.sub(r"<[^>]*>", "\n", render_junit(report, repo))),
        "sarif": "\n".join(r["properties"]["repro"] for r in sarif["runs"][0]["results"]),
        "annotations": "\n".join(annotations(report, repo)).replace("%0A", "\n"),
        "console": console.file.getvalue(),  # type: ignore[attr-defined]
    }


def test_every_printed_command_ends_with_the_run_s_flags_and_parses_to_its_target(repo: Path) -> None:
    report = replace(sample_report(repo, Sample(repo), config_path=None), command_flags=FLAGS)
    for output, text in _outputs(report, repo).items():
        commands = _commands(text)
        assert commands, output
        for command in commands:
            words = shlex.split(command.rstrip("`"))
            assert tuple(words[-len(FLAGS) :]) == FLAGS, (output, command)
            ns = build_parser().parse_args(words[1:])
            assert ns.target_command == "python3" and ns.target_args == ["srv dir/server.py", "--port=0"], command
            assert ns.out == Path("reports") and ns.timeout == "3s", command


def test_a_run_from_a_config_file_alone_prints_its_commands_as_before(repo: Path) -> None:
    report = sample_report(repo, Sample(repo))
    assert report.command_flags == ()
    for output, text in _outputs(report, repo).items():
        for command in _commands(text):
            words = shlex.split(command.rstrip("`"))
            assert not any(w.startswith(("--command", "--arg=")) for w in words), (output, command)
