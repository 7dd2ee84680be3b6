"""A run whose requests mostly never reached the server, that fuzzed nothing, or that called less
than half of what it was to fuzz is inconclusive, never a pass: the verdict, its exit code, and how
report.json, the console and the job summary say it."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from fuzzgate.cli.merge import overall
from fuzzgate.model.errors import ExitCode
from fuzzgate.model.findings import Surface
from fuzzgate.record.results import RunReport, Status, SurfaceEntry, Verdict, exit_code
from fuzzgate.report.console import ConsoleReporter
from fuzzgate.report.summary import render_summary
from tests.report.report_factory import clean_report, sample_report


def _unsent(report: RunReport, calls: int, unsendable: int, client_failed: int) -> RunReport:
    draft = replace(report, calls=calls, unsendable=unsendable, client_failed=client_failed)
    return replace(draft, verdict=draft.decide())


def test_most_requests_not_reaching_the_server_is_inconclusive_not_a_pass(repo: Path) -> None:
    clean = clean_report(repo)
    assert _unsent(clean, calls=122, unsendable=1, client_failed=0).verdict is Verdict.PASS
    assert _unsent(clean, calls=100, unsendable=0, client_failed=100).verdict is Verdict.PASS
    inconclusive = _unsent(clean, calls=122, unsendable=1, client_failed=11_363)
    assert inconclusive.verdict is Verdict.INCONCLUSIVE
    assert exit_code(Verdict.INCONCLUSIVE) is ExitCode.INTERNAL
    assert (exit_code(Verdict.PASS), exit_code(Verdict.FAIL)) == (ExitCode.OK, ExitCode.FINDINGS)
    # A gating finding among the calls that did reach the server still fails the run.
    assert _unsent(sample_report(repo), calls=122, unsendable=1, client_failed=11_363).verdict is Verdict.FAIL
    assert overall([Verdict.PASS, Verdict.INCONCLUSIVE]) is Verdict.INCONCLUSIVE
    assert overall([Verdict.INCONCLUSIVE, Verdict.FAIL]) is Verdict.FAIL


def test_report_json_console_and_summary_say_what_never_reached_the_server(repo: Path) -> None:
    report = replace(_unsent(clean_report(repo), 122, 1, 11_363), cut_off=("echo case 9",))
    data = report.to_json()
    assert (data["calls"], data["unsendable"], data["client_failed"]) == (122, 1, 11_363)
    assert data["verdict"] == "inconclusive" and data["cut_off_calls"] == ["echo case 9"]
    again = RunReport.from_json(data)
    assert (again.unsendable, again.client_failed, again.cut_off, again.verdict) == (
        1, 11_363, ("echo case 9",), Verdict.INCONCLUSIVE,
    )  # fmt: skip
    text = render_summary(report, repo)
    assert text.startswith("## ⚠️ fuzzgate inconclusive: `calc`")
    assert "**11364** requests never reached the server (**122** did)" in text
    out = io.StringIO()
    ConsoleReporter(Console(file=out, width=200)).summary(report)
    assert "INCONCLUSIVE: 11364 requests never reached the server, 122 did" in out.getvalue()
    assert "PASS" not in out.getvalue()


def _nothing(report: RunReport, *entries: SurfaceEntry) -> RunReport:
    draft = replace(report, calls=0, entries=entries)
    return replace(draft, verdict=draft.decide())


def test_a_run_that_fuzzed_nothing_is_inconclusive_unless_other_shards_fuzz_its_tools(repo: Path) -> None:
    clean = clean_report(repo)
    excluded = SurfaceEntry(Surface.TOOL, "add", Status.SKIPPED, "matched by an exclude pattern")
    blocked = SurfaceEntry(Surface.TOOL, "wipe", Status.BLOCKED, "annotated destructiveHint: true")
    elsewhere = SurfaceEntry(Surface.TOOL, "mul", Status.SKIPPED, "in shard 2/2")
    for entries in [(excluded, blocked), (blocked,), (), (elsewhere, excluded)]:
        nothing = _nothing(clean, *entries)
        assert nothing.fuzzed_nothing() and nothing.verdict is Verdict.INCONCLUSIVE, entries
    # A shard whose every tool lies in another share has nothing of its own to fuzz.
    assert _nothing(clean, elsewhere).verdict is Verdict.PASS
    # One call that reached the server is a run that tested something.
    assert replace(_nothing(clean, excluded), calls=1).decide() is Verdict.PASS
    out = io.StringIO()
    ConsoleReporter(Console(file=out, width=200)).summary(_nothing(clean, excluded))
    assert "INCONCLUSIVE: no call reached the server, nothing was tested" in out.getvalue()
    assert "PASS" not in out.getvalue()
    assert "nothing was tested" in render_summary(_nothing(clean, excluded), repo)


def _called(name: str, cases: int, probes: int = 0) -> SurfaceEntry:
    return SurfaceEntry(Surface.TOOL, name, Status.FUZZED, None, cases, probes, probes)


def test_a_run_that_called_less_than_half_of_its_tools_is_inconclusive(repo: Path) -> None:
    """@cyanheads/git-mcp-server under a collector that blocked it: 4 calls, 27 of its 30 tools
    never called, and the gate said PASS."""
    clean = clean_report(repo)
    blocked = SurfaceEntry(Surface.TOOL, "wipe", Status.BLOCKED, "annotated destructiveHint: true")
    elsewhere = SurfaceEntry(Surface.TOOL, "mul", Status.SKIPPED, "in shard 2/2")

    def decided(*entries: SurfaceEntry) -> RunReport:
        draft = replace(clean, calls=4, entries=entries)
        return replace(draft, verdict=draft.decide())

    few = decided(_called("a", 3), _called("b", 1), _called("c", 0), _called("d", 0), _called("e", 0), blocked)
    assert few.untested() == (3, 5) and few.verdict is Verdict.INCONCLUSIVE
    # Half called is not "most untested"; what the run does not fuzz (blocked, another shard's) is not counted.
    half = decided(_called("a", 3), _called("b", 1), _called("c", 0), _called("d", 0), blocked, elsewhere)
    assert half.untested() == (2, 4) and half.verdict is Verdict.PASS
    # A tool that got only probes was called.
    assert decided(_called("a", 0, probes=2), _called("b", 0, probes=1), _called("c", 0)).verdict is Verdict.PASS
    # A gating finding still fails the run.
    assert replace(sample_report(repo), entries=few.entries).decide() is Verdict.FAIL
    assert RunReport.from_json(few.to_json()).verdict is Verdict.INCONCLUSIVE
    out = io.StringIO()
    ConsoleReporter(Console(file=out, width=200)).summary(few)
    assert "INCONCLUSIVE: 3 of the 5 tools, resources and prompts to fuzz got no call (4 calls)" in out.getvalue()
    assert "PASS" not in out.getvalue()
    assert "**3** of the **5** tools, resources and prompts to fuzz got no call" in render_summary(few, repo)
