"""`fuzzgate run`'s outputs are one set: a disk that fills while they are written leaves the
previous run's outputs as they were, never some files of each run."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from fuzzgate.cli.run import OUTPUT_FILES, write_outputs
from fuzzgate.record.results import Verdict
from tests.model.disk_full import fill_after
from tests.report.report_factory import sample_report


def test_every_output_is_written(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_outputs(sample_report(tmp_path), out, tmp_path)
    assert sorted(os.listdir(out)) == sorted(OUTPUT_FILES)


@pytest.mark.parametrize("room", range(len(OUTPUT_FILES)))
def test_a_full_disk_leaves_the_previous_runs_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, room: int
) -> None:
    out = tmp_path / "out"
    report = sample_report(tmp_path)
    write_outputs(report, out, tmp_path)
    before = {name: (out / name).read_bytes() for name in OUTPUT_FILES}
    fill_after(monkeypatch, room)
    later = replace(report, seed=report.seed + 1, findings=(), states={}, fixed=(), verdict=Verdict.PASS)
    with pytest.raises(OSError):
        write_outputs(later, out, tmp_path)
    assert {name: (out / name).read_bytes() for name in OUTPUT_FILES} == before
    assert sorted(os.listdir(out)) == sorted(OUTPUT_FILES)
