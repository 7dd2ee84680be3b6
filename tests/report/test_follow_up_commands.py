"""The commands every output prints (a replay per finding, `baseline accept`, `baseline prune`)
repeat the run's own flags a replay needs (`RunReport.command_flags`: where the report and the
baseline are, timeouts, the sandbox), never the target: no output but `report.json` shows the
command line or URL, any of which can carry a credential. `report.json` keeps the flags, and the
names of the headers an HTTP target was sent, whole."""

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

FLAGS = ("--timeout=3s", "--sandbox=off", "--out=reports dir")
TOKEN = "tok-4f1e9a7c"
RELEASED_REPORT = Path(__file__).parent / "fixtures" / "report-0.1.0-release.json"
_TEXTS = st.lists(st.text(st.characters(exclude_categories=("Cs",))), max_size=4).map(tuple)


@given(_TEXTS, _TEXTS)
def test_report_json_keeps_the_flags_and_the_header_names_whole(flags: tuple[str, ...], names: tuple[str, ...]) -> None:
    report = sample_report(Path("/nonexistent"))
    report = replace(report, command_flags=flags, target=replace(report.target, header_names=names))
    back = RunReport.from_json(json.loads(json_report.render(report)))
    assert back.command_flags == flags and back.target.header_names == names


def test_a_report_written_before_them_reads_with_none() -> None:
    data = json.loads(RELEASED_REPORT.read_text())
    assert "command_flags" not in data and "header_names" not in data["target"]
    report = json_report.read(RELEASED_REPORT)
    assert report.command_flags == () and report.target.header_names == ()


def _commands(output: str, text: str) -> list[str]:
    """Every `fuzzgate replay|baseline ...` command `output` prints, to the end of its line (of the
    SARIF, the results' `repro`: its rules' help mentions the command in prose)."""
    if output == "sarif":
        text = "\n".join(r["properties"]["repro"] for r in json.loads(text)["runs"][0]["results"])
    return re.findall(r"fuzzgate (?:replay|baseline (?:accept|prune))[^\n]*", text)


def _outputs(report: RunReport, repo: Path) -> dict[str, str]:
    console = Console(file=io.StringIO(), width=400, highlight=False)
    ConsoleReporter(console).summary(report)
    return {
        "summary.md": render_summary(report, repo),
        "junit.xml": html.unescape(re.sub(r"<[^>]*>", "\n", render_junit(report, repo))),
        "sarif": render_sarif(report, repo),
        "annotations": "\n".join(annotations(report, repo)).replace("%0A", "\n"),
        "console": console.file.getvalue(),  # type: ignore[attr-defined]
    }


def _by_flags(repo: Path) -> RunReport:
    """A report of a run given its server by flags: no config file, a token on its command line."""
    report = replace(sample_report(repo, Sample(repo), config_path=None), command_flags=FLAGS)
    return replace(report, target=replace(report.target, args=("server.py", f"--token={TOKEN}")))


def test_every_printed_command_ends_with_the_run_s_flags(repo: Path) -> None:
    report = _by_flags(repo)
    for output, text in _outputs(report, repo).items():
        commands = _commands(output, text)
        assert commands, output
        for command in commands:
            words = shlex.split(command.rstrip("`"))
            assert tuple(words[-len(FLAGS) :]) == FLAGS, (output, command)
            ns = build_parser().parse_args(words[1:])
            assert ns.out == Path("reports dir") and ns.timeout == "3s" and ns.sandbox == "off", command
            assert ns.target_command is None and ns.url is None, command


def test_no_output_but_report_json_shows_the_command_line(repo: Path, tmp_path: Path) -> None:
    report = _by_flags(repo)
    for output, text in _outputs(report, repo).items():
        assert TOKEN not in text, output
    assert TOKEN in json_report.render(report)


def test_a_run_from_a_config_file_alone_prints_its_commands_as_before(repo: Path) -> None:
    report = sample_report(repo, Sample(repo))
    assert report.command_flags == ()
    for output, text in _outputs(report, repo).items():
        for command in _commands(output, text):
            assert command.rstrip("`").endswith("--config fuzzgate.toml") or output == "console", (output, command)
