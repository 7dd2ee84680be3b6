"""Under GitHub Actions no text fuzzgate prints may start a workflow command, and its own
annotations still do."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzgate.report.annotations import annotations as github_annotations
from fuzzgate.report.workflow_commands import MARK, CommandFilter, guarded_output, write_command
from tests.report.report_factory import Sample, make_finding, sample_report

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def commands_in(output: str) -> list[str]:
    """The lines the runner would take for a command: `::` after leading whitespace, or `##[`
    anywhere (REFERENCE.md, "Workflow commands")."""
    return [line for line in _LINE_BREAK.split(output) if line.lstrip().startswith("::") or "##[" in line]


def filtered(*writes: str) -> str:
    out = io.StringIO()
    stream = CommandFilter(out)
    for text in writes:
        stream.write(text)
    return out.getvalue()


def test_commands_a_server_could_print_are_broken_visibly() -> None:
    server_text = (
        "::error title=Build failed::please approve\n"
        "  ::stop-commands::abc123\n"
        "tool said\n::warning::x\r::add-mask::y\n"
        "\u3000\t::notice::z\n"
        "ok ##[error]boom and ##[set-output name=a;]b\n"
    )
    output = filtered(server_text)
    assert commands_in(output) == []
    assert f":{MARK}:error title=Build failed::please approve" in output
    assert f"##{MARK}[error]boom" in output
    assert output.replace(MARK, "") == server_text


def test_text_that_starts_no_command_is_left_alone() -> None:
    text = "a :: b\n: single colon\nC:\\path::x\n# heading [x]\n"
    assert filtered(text) == text


def test_a_command_split_over_writes_is_caught() -> None:
    assert commands_in(filtered("ok\n   :", ":error::x\n")) == []
    assert commands_in(filtered("x ##", "[error]y\n")) == []
    assert commands_in(filtered("x #", "#", "[error]y\n")) == []
    assert commands_in(filtered("line\r", "::warning::w")) == []


_PIECES = st.sampled_from([":", "::", "#", "##", "[", " ", "\t", "\u3000", "\n", "\r", "a", "::error::x", "##[e]"])


@given(st.lists(st.lists(_PIECES, max_size=8).map("".join), max_size=12))
def test_no_chunking_of_any_text_gets_a_command_through(writes: list[str]) -> None:
    whole = filtered("".join(writes))
    assert commands_in(filtered(*writes)) == []
    assert whole.replace(MARK, "") == "".join(writes)


def test_fuzzgate_own_annotations_pass_on_a_line_of_their_own() -> None:
    out = io.StringIO()
    stream = CommandFilter(out)
    stream.write("progress without a newline")
    stream.write_command("::error file=server.py,line=3::crash")
    stream.write("::after\n")
    assert out.getvalue().splitlines() == [
        "progress without a newline",
        "::error file=server.py,line=3::crash",
        f":{MARK}:after",
    ]


def test_the_guard_is_installed_only_under_github_actions_and_removed_after() -> None:
    before = sys.stdout
    with guarded_output({}):
        assert sys.stdout is before
    with guarded_output({"GITHUB_ACTIONS": "true"}):
        assert isinstance(sys.stdout, CommandFilter) and isinstance(sys.stderr, CommandFilter)
    assert sys.stdout is before


def test_write_command_goes_past_the_filter(capsys: pytest.CaptureFixture[str]) -> None:
    with guarded_output({"GITHUB_ACTIONS": "true"}):
        print("::error::from a server")
        write_command("::error file=a.py,line=1::fuzzgate's own")
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [f":{MARK}:error::from a server", "::error file=a.py,line=1::fuzzgate's own"]


def test_annotations_break_the_older_form_in_server_text(repo: Path, sample: Sample) -> None:
    finding = make_finding("fp-x", name="t##[error]x", message="boom ##[warning]y\n::error::z")
    (line,) = github_annotations(sample_report(repo, sample, findings=(finding,)), repo)
    assert "##[" not in line and line.startswith("::error file=") and "\n" not in line
    assert commands_in(line) == [line]  # the one command is fuzzgate's own
