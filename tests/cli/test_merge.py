"""`fuzzgate merge` (fuzzgate.cli.merge): shards of one run come back together as the unsharded run would
have reported it, and anything that does not add up is refused before a file is written."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from fuzzgate.cli.merge import MERGE_INDEX, ShardReport, merge_command, merge_reports, read_report, write_outputs
from fuzzgate.config.model import Shard
from fuzzgate.model.errors import ExitCode, ReportError, UsageError
from fuzzgate.model.findings import Severity, Surface
from fuzzgate.plan.shards import shard_of
from fuzzgate.record.results import BaselineState, MemorySummary, RunReport, Status, SurfaceEntry, Verdict
from fuzzgate.report import json_report
from fuzzgate.report.sarif import MAX_RUNS
from tests.model.disk_full import fill_after
from tests.report.report_factory import make_finding, sample_report


def split(report: RunReport, count: int) -> list[RunReport]:
    """`report` as `count` shards of the same run would have written it."""

    def mine(surface: Surface, name: str, index: int) -> bool:
        return shard_of(surface, name, count) == index

    shards = []
    for index in range(1, count + 1):
        entries = tuple(
            e
            if e.status is not Status.FUZZED or mine(e.surface, e.name, index)
            else SurfaceEntry(
                e.surface, e.name, Status.SKIPPED, f"in shard {shard_of(e.surface, e.name, count)}/{count}"
            )
            for e in report.entries
        )
        findings = tuple(f for f in report.findings if mine(f.surface, f.name, index))
        fixed = tuple(f for f in report.fixed if mine(f.surface, f.name, index))
        keep = {f.fingerprint for f in (*findings, *fixed)}
        shards.append(
            replace(
                report,
                shard=Shard(index, count),
                entries=entries,
                findings=findings,
                fixed=fixed,
                states={fp: s for fp, s in report.states.items() if fp in keep},
                calls=report.calls // count,
                notes=(f"note of {index}",),
            )
        )
    return shards


def inputs(reports: list[RunReport]) -> list[ShardReport]:
    return [ShardReport(Path(f"out-{i}"), r) for i, r in enumerate(reports, start=1)]


@pytest.fixture
def whole(tmp_path: Path) -> RunReport:
    return sample_report(tmp_path)


@pytest.mark.parametrize("count", [2, 3, 5])
def test_the_shards_merge_back_into_the_unsharded_report(whole: RunReport, count: int) -> None:
    (merged,) = merge_reports(inputs(split(whole, count)))
    report = merged.report
    assert merged.shards == count and report.shard is None
    assert sorted(f.fingerprint for f in report.findings) == sorted(f.fingerprint for f in whole.findings)
    assert report.states == whole.states
    assert [f.fingerprint for f in report.fixed] == [f.fingerprint for f in whole.fixed]
    assert report.entries == whole.entries
    assert report.verdict is Verdict.FAIL
    assert {f.fingerprint for f in report.gating()} == {f.fingerprint for f in whole.gating()}
    assert report.calls == count * (whole.calls // count)
    assert report.notes == tuple(f"shard {i}/{count}: note of {i}" for i in range(1, count + 1))


def test_the_order_the_shards_are_given_in_does_not_matter(whole: RunReport) -> None:
    shards = split(whole, 3)
    (forward,) = merge_reports(inputs(shards))
    (backward,) = merge_reports(inputs(shards[::-1]))
    assert forward.report == backward.report


def test_the_verdict_is_recomputed_with_fail_on(whole: RunReport) -> None:
    shards = [replace(s, fail_on=Severity.LOW) for s in split(whole, 2)]
    with pytest.raises(ReportError, match="disagree on the fail-on"):
        merge_reports(inputs([shards[0], replace(shards[1], fail_on=Severity.MEDIUM)]))
    (merged,) = merge_reports(inputs(shards), fail_on=Severity.CRITICAL)
    assert merged.report.fail_on is Severity.CRITICAL
    assert {f.fingerprint for f in merged.report.gating()} == {"fp-crash"}


def test_the_merged_peak_memory_is_the_largest_any_shard_read(whole: RunReport) -> None:
    first, second, third = split(whole, 3)
    limit = 2 << 30
    shards = [
        replace(first, memory=MemorySummary(limit, 90 << 20)),
        replace(second, memory=MemorySummary(limit, 300 << 20)),
        replace(third, memory=None),  # a share whose servers' memory was not watched
    ]
    (merged,) = merge_reports(inputs(shards))
    assert merged.report.memory == MemorySummary(limit, 300 << 20)
    (none,) = merge_reports(inputs([replace(s, memory=None) for s in shards]))
    assert none.report.memory is None


def test_a_bug_two_shards_found_is_one_finding_and_confirmed_beats_flaky(tmp_path: Path) -> None:
    confirmed = replace(make_finding("fp-t", surface=Surface.SERVER, name="transport"), count=2)
    flaky = replace(make_finding("fp-t", surface=Surface.SERVER, name="transport", flaky=True), count=5)
    base = sample_report(tmp_path, findings=(), states={}, fixed=())
    one = replace(base, shard=Shard(1, 2), findings=(flaky,), states={"fp-t": BaselineState.NEW})
    two = replace(base, shard=Shard(2, 2), findings=(confirmed,), states={"fp-t": BaselineState.NEW})
    (merged,) = merge_reports(inputs([one, two]))
    (finding,) = merged.report.findings
    assert not finding.flaky and finding.count == 7
    assert merged.report.verdict is Verdict.FAIL


def test_a_baseline_entry_one_shard_still_fails_is_never_fixed(tmp_path: Path) -> None:
    entry = make_finding("fp-old", name="lookup")
    base = sample_report(tmp_path, findings=(), states={}, fixed=())
    one = replace(base, shard=Shard(1, 2), states={"fp-old": BaselineState.KNOWN})
    two = replace(base, shard=Shard(2, 2), states={"fp-old": BaselineState.FIXED}, fixed=(entry,))
    for pair in ([one, two], [two, one]):
        (merged,) = merge_reports(inputs(pair))
        assert merged.report.states == {"fp-old": BaselineState.KNOWN}
        assert merged.report.fixed == ()


@pytest.mark.parametrize(
    ("indices", "words"),
    [
        ([(1, 3), (3, 3)], "shards incomplete: 2/3 missing"),
        ([(1, 2), (1, 2), (2, 2)], "shard 1/2 given twice"),
        ([(1, 2), (2, 3)], "shards of different counts"),
        ([(1, 2), (2, 2), None], "unsharded report cannot be merged"),
        ([None, None], "unsharded report cannot be merged"),
    ],
)
def test_shards_that_do_not_make_one_whole_run_are_refused(
    whole: RunReport, indices: list[tuple[int, int] | None], words: str
) -> None:
    reports = [replace(whole, shard=None if i is None else Shard(*i)) for i in indices]
    with pytest.raises(ReportError, match=words) as caught:
        merge_reports(inputs(reports))
    assert caught.value.exit_code is ExitCode.USAGE
    assert "calc" in caught.value.message


@pytest.mark.parametrize(
    ("change", "what"),
    [
        ({"seed": 1}, "seed"),
        ({"version": "0.2.0"}, "fuzzgate version"),
        ({"hypothesis_version": "6.0.0"}, "Hypothesis version"),
        ({"mode": "conform"}, "mode"),
        ({"budget_s": 30.0}, "budget"),
        ({"config_path": "other.toml"}, "config file"),
        ({"fingerprint_scheme": "fp-0"}, "fingerprint scheme"),
    ],
)
def test_shards_that_disagree_are_refused_saying_on_what(
    whole: RunReport, change: dict[str, object], what: str
) -> None:
    one, two = split(whole, 2)
    with pytest.raises(ReportError, match=f"disagree on the {what}: .* in shard 1/2 \\(out-1\\), .* in shard 2/2"):
        merge_reports(inputs([one, replace(two, **change)]))  # type: ignore[arg-type]


def test_shards_of_another_server_build_are_refused(whole: RunReport) -> None:
    one, two = split(whole, 2)
    other = replace(two, target=replace(two.target, server_version="1.3.0"))
    with pytest.raises(ReportError, match=r"disagree on the server: calc-server 1\.2\.0 in shard 1/2"):
        merge_reports(inputs([one, other]))


def test_shards_that_read_other_baselines_are_refused(tmp_path: Path) -> None:
    found = make_finding("fp-t", surface=Surface.SERVER, name="transport")
    base = sample_report(tmp_path, findings=(found,), fixed=())
    one = replace(base, shard=Shard(1, 2), states={"fp-t": BaselineState.KNOWN})
    two = replace(base, shard=Shard(2, 2), states={"fp-t": BaselineState.NEW})
    with pytest.raises(ReportError, match="disagree on the baseline: finding fp-t is known in shard 1/2"):
        merge_reports(inputs([one, two]))


def test_one_target_writes_a_runs_layout_and_the_index(whole: RunReport, tmp_path: Path) -> None:
    out = tmp_path / "merged"
    targets = merge_reports(inputs(split(whole, 2)))
    write_outputs(targets, out, tmp_path)
    names = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert names == ["calc/report.json", "fuzzgate.sarif", "junit.xml", MERGE_INDEX, "report.json", "summary.md"]
    assert json_report.read(out / "report.json") == targets[0].report
    assert (out / "report.json").read_text() == (out / "calc" / "report.json").read_text()
    index = json.loads((out / MERGE_INDEX).read_text())
    assert index["verdict"] == "fail"
    assert index["targets"][0] | {"sources": None} == {
        "name": "calc", "report": "calc/report.json", "verdict": "fail", "shards": 2, "sources": None,
        "findings": len(whole.findings), "gating": len(whole.gating()), "calls": whole.calls,
    }  # fmt: skip


def _target(report: RunReport, name: str) -> RunReport:
    return replace(report, target=replace(report.target, name=name))


def test_several_targets_share_one_sarif_junit_and_summary(whole: RunReport, tmp_path: Path) -> None:
    out = tmp_path / "merged"
    out.mkdir()
    (out / "report.json").write_text("stale")
    passing = replace(_target(whole, "notes server"), findings=(), states={}, fixed=(), verdict=Verdict.PASS)
    targets = merge_reports(inputs([*split(whole, 2), passing]))
    write_outputs(targets, out, tmp_path)
    assert not (out / "report.json").exists()
    assert json_report.read(out / "notes-server" / "report.json").verdict is Verdict.PASS
    sarif = json.loads((out / "fuzzgate.sarif").read_text())
    assert [run["automationDetails"]["id"] for run in sarif["runs"]] == ["fuzzgate/calc/", "fuzzgate/notes server/"]
    junit = (out / "junit.xml").read_text()
    assert junit.count("<testsuite ") == 2
    summary = (out / "summary.md").read_text()
    assert summary.startswith("# ❌ fuzzgate failed: 1 of 2 target(s)")
    assert "## ❌ fuzzgate failed: `calc`" in summary and "## ✅ fuzzgate passed: `notes server`" in summary
    assert "`notes-server/report.json`" in summary
    assert json.loads((out / MERGE_INDEX).read_text())["verdict"] == "fail"


def test_more_targets_than_github_takes_runs_are_refused_before_writing(whole: RunReport, tmp_path: Path) -> None:
    reports = [_target(whole, f"server-{i}") for i in range(MAX_RUNS + 1)]
    targets = merge_reports(inputs(reports))
    out = tmp_path / "merged"
    with pytest.raises(ReportError, match=f"at most {MAX_RUNS}"):
        write_outputs(targets, out, tmp_path)
    assert not out.exists()


def _shard_dirs(whole: RunReport, tmp_path: Path) -> list[Path]:
    """`whole` split in two shards, each written where `merge` reads a run's output directory."""
    dirs = []
    for index, shard in enumerate(split(whole, 2), start=1):
        json_report.write(shard, tmp_path / f"shard-{index}")
        dirs.append(tmp_path / f"shard-{index}")
    return dirs


def test_the_command_reads_directories_and_exits_like_run(whole: RunReport, tmp_path: Path) -> None:
    dirs = _shard_dirs(whole, tmp_path)
    console = Console(record=True, width=200)
    out = tmp_path / "merged"
    assert merge_command(console, dirs, out=out, fail_on=None, quiet=True) == ExitCode.FINDINGS
    assert merge_command(console, dirs, out=out, fail_on=Severity.CRITICAL, quiet=True) == ExitCode.FINDINGS
    clean = [replace(s, findings=(), states={}, fixed=()) for s in split(whole, 2)]
    for index, shard in enumerate(clean, start=1):
        json_report.write(shard, tmp_path / f"shard-{index}")
    assert merge_command(console, dirs, out=out, fail_on=None, quiet=True) == ExitCode.OK
    assert "merged calc from 2 shards" in console.export_text()
    with pytest.raises(UsageError, match="one of the directories merged"):
        merge_command(console, dirs, out=dirs[0], fail_on=None)


def test_a_full_disk_leaves_the_previous_merge_and_is_one_clear_error(
    whole: RunReport, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dirs = _shard_dirs(whole, tmp_path)
    out = tmp_path / "merged"
    console = Console(record=True, width=200)
    merge_command(console, dirs, out=out, fail_on=None, quiet=True)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    fill_after(monkeypatch, 2)
    with pytest.raises(UsageError, match=r"the outputs could not be written to .*No space left on device") as raised:
        merge_command(console, dirs, out=out, fail_on=Severity.CRITICAL, quiet=True)
    assert raised.value.exit_code == ExitCode.USAGE
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_a_missing_or_corrupt_report_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="no such directory"):
        read_report(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ReportError, match="no such report"):
        read_report(tmp_path / "empty")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "report.json").write_text('{"findings": []}')
    with pytest.raises(ReportError, match="not a fuzzgate report"):
        read_report(tmp_path / "bad")
    (tmp_path / "bad" / "report.json").write_text("{")
    with pytest.raises(ReportError, match="not a readable report"):
        read_report(tmp_path / "bad")
    (tmp_path / "bad" / "report.json").write_text("[]")
    with pytest.raises(ReportError, match="holds an array, not a JSON object"):
        read_report(tmp_path / "bad")
    timing_an_array = {**sample_report(tmp_path).to_json(), "timing": ["startup"]}
    (tmp_path / "bad" / "report.json").write_text(json.dumps(timing_an_array))
    with pytest.raises(ReportError, match="not a fuzzgate report"):
        read_report(tmp_path / "bad")


def test_a_single_unsharded_report_passes_through(whole: RunReport) -> None:
    (merged,) = merge_reports(inputs([whole]))
    assert merged.shards == 1
    assert merged.report == whole


def test_under_github_actions_the_merge_writes_the_summary_and_annotations(
    whole: RunReport, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    dirs = _shard_dirs(whole, tmp_path)
    step_summary = tmp_path / "step-summary.md"
    step_summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.chdir(tmp_path)
    code = merge_command(Console(file=None, width=200), dirs, out=tmp_path / "merged", fail_on=None, quiet=True)
    assert code == ExitCode.FINDINGS
    text = step_summary.read_text()
    assert text.startswith("earlier step\n") and "## ❌ fuzzgate failed: `calc`" in text
    errors = [line for line in capsys.readouterr().out.splitlines() if line.startswith("::error ")]
    assert len(errors) == len(whole.gating())
