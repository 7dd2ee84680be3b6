"""GitHub `::error` annotations for the findings that fail the gate."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from fuzzgate.model.commands import repro_command
from fuzzgate.record.results import RunReport

# Aliased: `annotations` is also the name of the __future__ feature imported above.
from fuzzgate.report.annotations import annotations as github_annotations
from fuzzgate.report.annotations import escape_data, escape_property
from fuzzgate.report.workflow_commands import neutralize_legacy
from tests.report.report_factory import Sample, clean_report, make_finding, sample_report

_COMMAND = re.compile(r"::error (?P<props>[^:]*)::(?P<data>.*)")


def _unescape(text: str) -> str:
    for code, char in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(code, char)
    return text


def parse(line: str) -> tuple[dict[str, str], str]:
    """Read a workflow command back the way the runner does."""
    match = _COMMAND.fullmatch(line)
    assert match, line
    props = dict(prop.split("=", 1) for prop in match["props"].split(","))
    return {k: _unescape(v) for k, v in props.items()}, _unescape(match["data"])


def test_one_error_per_gating_finding(report: RunReport, repo: Path, sample: Sample) -> None:
    lines = github_annotations(report, repo)
    assert len(lines) == len(sample.gating) == 3
    parsed = [parse(line) for line in lines]
    assert [(p["file"], p["line"]) for p, _ in parsed] == [
        ("server.py", "12"),
        ("fuzzgate.toml", "3"),
        ("fuzzgate.toml", "3"),
    ]
    props, message = parsed[0]
    assert props["title"] == "fuzzgate: crash (critical) in tool divide"
    assert message == (
        f"ZeroDivisionError: division by zero\nReproduce: {repro_command(sample.crash_in_repo, 'fuzzgate.toml')}"
    )


def test_each_annotation_is_one_line_with_escaped_properties(report: RunReport, repo: Path) -> None:
    for line in github_annotations(report, repo):
        assert "\n" not in line and "\r" not in line
        props = _COMMAND.fullmatch(line)
        assert props is not None
        for prop in props["props"].split(","):
            key, value = prop.split("=", 1)
            assert key in {"file", "line", "title"}
            assert ":" not in value and "," not in value


def test_no_annotations_for_a_clean_run(repo: Path) -> None:
    assert github_annotations(clean_report(repo), repo) == []


def test_awkward_text_is_escaped(repo: Path, sample: Sample) -> None:
    (repo / "a,b:c").mkdir()
    finding = make_finding("fp-odd", name="to,ol:x", message="100% broken\r\nline two", location=("a,b:c/mod.py", 4))
    (line,) = github_annotations(sample_report(repo, sample, findings=(finding,)), repo)
    assert line.startswith(
        "::error file=a%2Cb%3Ac/mod.py,line=4,title=fuzzgate%3A crash (critical) in tool to%2Col%3Ax::"
    )
    assert "::100%25 broken%0D%0Aline two%0AReproduce: " in line
    props, message = parse(line)
    assert props["file"] == "a,b:c/mod.py"
    assert message.startswith("100% broken\r\nline two\n")


def test_escaping_examples() -> None:
    assert escape_data("50%\r\n: ,") == "50%25%0D%0A: ,"
    assert escape_property("50%\r\n: ,") == "50%25%0D%0A%3A %2C"
    assert escape_property("%3A") == "%253A"  # a literal escape sequence survives the round trip


@given(st.text())
def test_escaping_round_trips(text: str) -> None:
    # Round trips but for the older `##[` command form, which stays broken (a server wrote it).
    assert _unescape(escape_property(text)) == neutralize_legacy(text)
    assert _unescape(escape_data(text)) == neutralize_legacy(text)
    assert "##[" not in escape_property(text) and "##[" not in escape_data(text)
    assert not set(escape_property(text)) & {"\r", "\n", ":", ","}
    assert not set(escape_data(text)) & {"\r", "\n"}
