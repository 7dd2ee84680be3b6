"""The versions that decide generated values, in `report.json` and baseline entries; old files
written by the released fuzzgate read as they were."""

from __future__ import annotations

import io
import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from fuzzgate import __version__
from fuzzgate.cli.baseline import baseline_command
from fuzzgate.config import Config, Overrides, load_config
from fuzzgate.record.results import RunReport
from fuzzgate.report import json_report
from fuzzgate.store.baseline import Baseline
from fuzzgate.triage.versions import GeneratorVersions, hypothesis_version, replay_warning

RELEASED_REPORT = Path(__file__).parent / "fixtures" / "report-0.1.0-release.json"
"""A report.json written by the released fuzzgate 0.1.0 for the example server (no versions recorded)."""


def test_report_json_records_the_versions_and_the_scheme(report: RunReport, tmp_path: Path) -> None:
    report = replace(report, hypothesis_version="6.100.1", fingerprint_scheme="fuzzgate/1")
    path = json_report.write(report, tmp_path)
    data = json.loads(path.read_text())
    assert data["version"] == report.version
    assert data["hypothesis_version"] == "6.100.1" and data["fingerprint_scheme"] == "fuzzgate/1"
    back = json_report.read(path)
    assert back.hypothesis_version == "6.100.1" and back.fingerprint_scheme == "fuzzgate/1"
    assert back.generated_by() == GeneratorVersions(report.version, "6.100.1")


def test_a_report_of_the_released_version_reads_with_the_original_scheme() -> None:
    report = json_report.read(RELEASED_REPORT)
    assert report.version == "0.1.0"
    assert report.hypothesis_version is None and report.fingerprint_scheme == "fuzzgate/1"
    assert len(report.findings) == 9 and all(f.signature is None for f in report.findings)
    assert report.findings_in_current_scheme() == report.findings


def _config(tmp_path: Path) -> Config:
    overrides = Overrides(command=sys.executable, args=("server.py",), out=tmp_path / "out",
                          baseline=tmp_path / "baseline")  # fmt: skip
    return load_config(None, overrides, {}, warn=lambda message: None)


def test_accept_records_the_versions_of_the_report_not_of_the_running_fuzzgate(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    data = json.loads(RELEASED_REPORT.read_text())
    data["version"], data["hypothesis_version"] = "0.0.9", "6.90.0"
    (tmp_path / "out" / "report.json").write_text(json.dumps(data))
    console = Console(file=io.StringIO(), width=200)
    assert baseline_command("accept", _config(tmp_path), console) == 0
    entries = Baseline.open(tmp_path / "baseline").entries()
    assert len(entries) == 9
    assert {e.generated_by for e in entries} == {GeneratorVersions("0.0.9", "6.90.0")}
    assert {e.scheme for e in entries} == {"fuzzgate/1"}
    # The report recorded no signatures (released version): the entries have none to go by.
    assert {e.signature for e in entries} == {None}


def test_reading_and_listing_never_rewrite_an_entry(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.json").write_text(RELEASED_REPORT.read_text())
    config = _config(tmp_path)
    console = Console(file=io.StringIO(), width=200)
    baseline_command("accept", config, console)
    files = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in (tmp_path / "baseline").iterdir()}
    baseline_command("list", config, console)
    Baseline.open(tmp_path / "baseline").findings()
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in (tmp_path / "baseline").iterdir()} == files


def test_running_versions() -> None:
    running = GeneratorVersions.running()
    assert running.fuzzgate == __version__
    assert running.hypothesis == hypothesis_version() is not None


@pytest.mark.parametrize(
    ("recorded", "warns"),
    [
        (None, False),
        ("same", False),
        (GeneratorVersions(__version__, None), False),
        (GeneratorVersions(__version__, "0.0.1"), True),
        (GeneratorVersions("0.0.1", None), True),
    ],
)
def test_replay_warns_only_for_versions_known_to_differ(recorded: GeneratorVersions | str | None, warns: bool) -> None:
    if recorded == "same":
        recorded = GeneratorVersions.running()
    assert not isinstance(recorded, str)
    warning = replay_warning(recorded)
    assert (warning is not None) is warns
    if warning is not None:
        assert "\n" not in warning and "replayed exactly" in warning and "--seed/--cases" in warning
