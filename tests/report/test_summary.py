"""The job summary: verdict, run facts, the per-tool table, findings with repro commands, size cap."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from fuzzgate.model.commands import accept_command, prune_command, repro_command
from fuzzgate.record.results import MemorySummary, RunReport, TargetSummary, Verdict
from fuzzgate.report.summary import SUMMARY_FILENAME, SUMMARY_LIMIT, render_summary, write_summary
from tests.report.report_factory import SECRET, Sample, clean_report, make_finding, sample_report

# CommonMark with raw HTML passed through (GitHub keeps <details>, so escaping must hold on its own)
# and GitHub's table and strikethrough extensions.
_GFM = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def html(markdown: str) -> str:
    """Rendered roughly as GitHub renders it."""
    rendered: str = _GFM.render(markdown)
    return rendered


def section(text: str, title: str) -> str:
    """The body of the `### title` section."""
    start = text.index(f"### {title}")
    end = text.find("\n### ", start + 1)
    return text[start : end if end != -1 else None]


def test_failing_run_shows_verdict_counts_and_facts(report: RunReport, repo: Path) -> None:
    text = render_summary(report, repo)
    assert text.startswith("## ❌ fuzzgate failed: `calc`")
    assert "**3** new finding(s) at or above **medium**" in text
    assert "New: 5 · known: 2 · fixed: 1 · flaky: 2" in text
    assert "| Seed | `123456789` (commit 1a2b3c4) |" in text
    assert "| Budget | 60 s, ran 58.2 s |" in text
    assert "| Calls | 2048 |" in text


def test_passing_run(repo: Path) -> None:
    text = render_summary(clean_report(repo), repo)
    assert text.startswith("## ✅ fuzzgate passed: `calc`")
    assert "No new findings at or above **medium**." in text
    assert "New findings" not in text
    assert accept_command("fuzzgate.toml") not in text  # nothing to accept
    assert prune_command("fuzzgate.toml") not in text


def test_table_has_a_row_per_entry_with_status_cases_and_findings(report: RunReport, repo: Path) -> None:
    table = section(render_summary(report, repo), "Tools")
    assert "| Tool | Status | Cases | Probes sent | Findings |" in table
    assert "| `divide` | fuzzed | 400 | 16 of 16 | 2 new, 1 flaky |" in table
    assert "| `echo` | fuzzed | 380 | 9 of 16 | 1 new, 1 known, 1 flaky |" in table
    assert "| `lookup` | fuzzed | 390 | - | — |" in table
    assert "| `delete_all` | blocked: looks destructive (matches 'delete') | 0 | - | — |" in table
    assert "| `upload` | skipped: excluded by --exclude upload | 0 | - | — |" in table
    assert "| resource `file:///{path}` | fuzzed | 50 | - | — |" in table
    assert "| prompt `summarize` | fuzzed | 40 | - | 1 new |" in table
    rendered = html(table)
    assert rendered.count("<tr>") == 1 + len(report.entries)


def test_the_probes_sent_are_said_with_the_tools_that_could_not_send_all(report: RunReport, repo: Path) -> None:
    text = render_summary(report, repo)
    # Of the 5 fuzzed, as the note says it: the blocked and the skipped tool were never to send any.
    assert "> **Probes:** 25 of 32 sent (1 of 5 could not send all theirs: see the notes)" in text
    assert report.to_json()["probes"] == {"sent": 25, "planned": 32}
    again = RunReport.from_json(report.to_json())
    assert [(e.probes_sent, e.probes_planned) for e in again.entries] == [
        (e.probes_sent, e.probes_planned) for e in report.entries
    ]


def test_the_peak_memory_is_said_against_the_limit_and_past_it(repo: Path) -> None:
    def memory(report: RunReport) -> list[str]:
        return [line for line in render_summary(report, repo).splitlines() if "**Memory:**" in line]

    assert memory(clean_report(repo)) == []  # not watched: nothing said, rather than "0 MiB"
    watched = replace(clean_report(repo), memory=MemorySummary(limit=2 << 30, peak=103 << 20))
    assert memory(watched) == [
        "> **Memory:** one server held at most 103 MiB resident (its processes together), 5% of "
        "memory\\_limit (2.00 GiB)"
    ]
    stopped = replace(watched, memory=MemorySummary(limit=256 << 20, peak=316 << 20))
    assert memory(stopped) == [
        "> **Memory:** one server held at most 316 MiB resident (its processes together), past memory\\_limit "
        "(256 MiB): fuzzgate stopped it"
    ]
    unread = replace(watched, memory=MemorySummary(limit=2 << 30, peak=0))
    assert memory(unread) == []


def test_sections_list_each_finding_with_its_repro_command(report: RunReport, repo: Path, sample: Sample) -> None:
    text = render_summary(report, repo)
    gating = section(text, "New findings (3)")
    for finding in sample.gating:
        assert repro_command(finding, "fuzzgate.toml") in gating
    assert "#### crash · critical · tool `divide`" in gating
    not_gating = section(text, "New findings that do not fail the gate (2)")
    assert "flaky: reproduced 1 of 3 replays, never fails the run" in not_gating
    assert "below fail-on medium" in not_gating
    known = section(text, "Known findings (2)")
    assert repro_command(sample.known, "fuzzgate.toml") in known
    fixed = section(text, "Fixed since the baseline (1)")
    assert repro_command(sample.fixed, "fuzzgate.toml") in fixed
    assert prune_command("fuzzgate.toml") in fixed
    assert text.rstrip().endswith(f"```sh\n{accept_command('fuzzgate.toml')}\n```")


def test_evidence_is_folded_in_details(report: RunReport, repo: Path) -> None:
    text = render_summary(report, repo)
    rendered = html(text)
    assert rendered.count("<details>") == rendered.count("</details>") == 8  # 7 findings + 1 fixed
    assert "<summary>Details</summary>" in rendered
    crash = section(text, "New findings (3)")
    assert "server stderr (last lines):\nTraceback (most recent call last):" in crash
    assert "reported at: server.py:12" in crash
    assert "traceback points at: /usr/lib/python3.11/json/decoder.py:355" in crash


def test_message_text_cannot_break_the_page(repo: Path, sample: Sample) -> None:
    hostile = replace(
        sample.crash_in_repo,
        message="</details> | <script>alert(1)</script> [x](http://e.test) **b** `c` $m$\n# h",
        details=replace(sample.crash_in_repo.details, stderr="```\n</details>\n```"),
    )
    report = sample_report(repo, sample, findings=(hostile,), fixed=())
    rendered = html(render_summary(report, repo))
    assert "<script>" not in rendered and "<a href" not in rendered and "<strong>b" not in rendered
    assert rendered.count("<details>") == rendered.count("</details>") == 1
    assert "&lt;/details&gt; | &lt;script&gt;alert(1)&lt;/script&gt; [x](http://e.test) **b** `c` $m$ # h" in rendered
    assert "```\n&lt;/details&gt;\n```" in rendered  # the stderr, verbatim inside its code block


def test_long_evidence_is_cut_and_says_so(repo: Path, sample: Sample) -> None:
    noisy = replace(
        sample.crash_in_repo,
        details=replace(sample.crash_in_repo.details, stderr="x" * 100_000 + "\nthe last line"),
    )
    text = render_summary(sample_report(repo, sample, findings=(noisy,)), repo)
    assert "earlier characters cut; see report.json" in text
    assert "the last line" in text
    assert len(text) < 20_000


def test_the_summary_stays_under_github_s_limit(repo: Path, sample: Sample) -> None:
    big = sample.crash_in_repo.details
    findings = tuple(
        make_finding(
            f"fp{i:05d}",
            name=f"tool{i}",
            message="m" * 500,
            arguments={"blob": "y" * 1500},
            stderr="e" * 10_000,
            location=big.location,
        )
        for i in range(1500)
    )
    report = sample_report(repo, sample, findings=findings, states={})
    text = render_summary(report, repo)
    assert len(text.encode("utf-8")) < SUMMARY_LIMIT
    shown = text.count("\n#### ")
    assert 0 < shown < len(findings)
    assert f"**Summary cut:** {len(findings) - shown + 1} more finding(s) not shown" in text  # + the fixed one
    assert "Every finding is in `report.json`" in text
    assert text.rstrip().endswith(f"```sh\n{accept_command('fuzzgate.toml')}\n```")  # the footer survives


def test_never_shows_the_command_line_url_or_environment(
    repo: Path, sample: Sample, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("API_TOKEN", SECRET)
    target = TargetSummary(
        name="calc",
        kind="http",
        command="python",
        args=("server.py", f"--token={SECRET}"),
        url=f"https://user:{SECRET}@mcp.example.test/mcp",
    )
    text = render_summary(sample_report(repo, sample, target=target), repo)
    assert SECRET not in text


def test_interrupted_runs_say_so(repo: Path) -> None:
    text = render_summary(replace(clean_report(repo), interrupted=True, verdict=Verdict.PASS), repo)
    assert "**Interrupted:**" in text


def test_write_summary_writes_the_rendered_text(report: RunReport, repo: Path, tmp_path: Path) -> None:
    path = write_summary(report, repo, tmp_path / "out")
    assert path == tmp_path / "out" / SUMMARY_FILENAME
    assert path.read_text(encoding="utf-8") == render_summary(report, repo)
