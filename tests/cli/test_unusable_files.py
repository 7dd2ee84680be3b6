"""Files a user hands fuzzgate that it cannot use (`report.json`, baseline entries, a repro given to
`replay`, a shard's report) are one error line naming the file and exit 2, never a traceback."""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from fuzzgate.cli.baseline import baseline_command
from fuzzgate.model.errors import BaselineError
from tests.e2e.conftest import CliRun, fuzzgate
from tests.report.test_report_versions import RELEASED_REPORT
from tests.report.test_report_versions import _config as released_config

pytestmark = pytest.mark.e2e

DEEP = "[" * 100_000 + "]" * 100_000
"""Valid JSON nested far past Python's recursion limit."""

FINGERPRINT = "0123456789abcdef0123"


def refused(run: CliRun, file: str) -> str:
    """The one error line of `run`, which must name `file` and exit 2."""
    assert run.code == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr, run.stderr
    (line,) = [line for line in run.stderr.splitlines() if line.startswith("fuzzgate:")]
    assert file in line, line
    return line


def test_replay_of_a_deeply_nested_file(tmp_path: Path) -> None:
    (tmp_path / "deep.json").write_text(DEEP)
    line = refused(fuzzgate("replay", "deep.json", "--command", "x", cwd=tmp_path), "deep.json")
    assert "nested too deeply" in line


@pytest.mark.parametrize("action", ["list", "upgrade"])
def test_a_deeply_nested_baseline_entry(tmp_path: Path, action: str) -> None:
    baseline = tmp_path / ".fuzzgate" / "baseline"
    baseline.mkdir(parents=True)
    (baseline / f"{FINGERPRINT}.json").write_text(DEEP)
    line = refused(fuzzgate("baseline", action, "--command", "x", cwd=tmp_path), f"{FINGERPRINT}.json")
    assert "nested too deeply" in line


def test_accept_of_a_deeply_nested_report(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.json").write_text(DEEP)
    args = ("baseline", "accept", "--command", "x", "--out", "out", "--baseline", "bl")
    line = refused(fuzzgate(*args, cwd=tmp_path), "report.json")
    assert "nested too deeply" in line
    assert not (tmp_path / "bl").exists()


def test_merge_of_a_deeply_nested_shard_report(tmp_path: Path) -> None:
    for shard in ("sh1", "sh2"):
        (tmp_path / shard).mkdir()
        (tmp_path / shard / "report.json").write_text(DEEP)
    line = refused(fuzzgate("merge", "sh1", "sh2", "--out", "merged", cwd=tmp_path), "report.json")
    assert "nested too deeply" in line
    assert not (tmp_path / "merged").exists()


def test_accept_of_a_report_that_is_not_an_object(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.json").write_text("[]")
    args = ("baseline", "accept", "--command", "x", "--out", "out", "--baseline", "bl")
    line = refused(fuzzgate(*args, cwd=tmp_path), "report.json")
    assert "holds an array, not a JSON object" in line
    assert not (tmp_path / "bl").exists()


def test_replay_of_a_fingerprint_with_a_report_that_is_not_an_object(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.json").write_text("[]")
    line = refused(fuzzgate("replay", FINGERPRINT, "--command", "x", "--out", "out", cwd=tmp_path), "report.json")
    assert "holds an array, not a JSON object" in line


def test_merge_of_a_shard_report_that_is_not_an_object(tmp_path: Path) -> None:
    for shard, text in (("sh1", "[]"), ("sh2", "{}")):
        (tmp_path / shard).mkdir()
        (tmp_path / shard / "report.json").write_text(text)
    line = refused(fuzzgate("merge", "sh1", "sh2", "--out", "merged", cwd=tmp_path), "sh1")
    assert "holds an array, not a JSON object" in line
    assert not (tmp_path / "merged").exists()


def _released_report() -> dict[str, object]:
    data: dict[str, object] = json.loads(RELEASED_REPORT.read_text())
    return data


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"fingerprint_scheme": "fuzzgate/9"}, '"fingerprint_scheme": "fuzzgate/9", which this fuzzgate does not know'),
        ({"report_version": 99}, "written by a newer fuzzgate (report_version 99; this fuzzgate reads 1)"),
        ({"report_version": "1"}, 'not a fuzzgate report ("report_version" is "1")'),
        ({"findings": None}, 'no "findings"'),
        ({"findings": {}}, '"findings" is an object, not an array'),
    ],
)
def test_accept_refuses_a_report_it_would_misread_and_writes_nothing(
    tmp_path: Path, change: dict[str, object], said: str
) -> None:
    data = {**_released_report(), **change}
    if data["findings"] is None:
        del data["findings"]
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.json").write_text(json.dumps(data))
    args = ("baseline", "accept", "--command", "x", "--out", "out", "--baseline", "bl")
    line = refused(fuzzgate(*args, cwd=tmp_path), "report.json")
    assert said in line
    assert not (tmp_path / "bl").exists()


@pytest.mark.parametrize("action", ["list", "upgrade"])
def test_a_baseline_entry_that_links_to_nothing_is_named(tmp_path: Path, action: str) -> None:
    baseline = tmp_path / ".fuzzgate" / "baseline"
    baseline.mkdir(parents=True)
    (baseline / f"{FINGERPRINT}.json").symlink_to("/nonexistent")
    line = refused(fuzzgate("baseline", action, "--command", "x", cwd=tmp_path), f"{FINGERPRINT}.json")
    assert "symbolic link to a missing file" in line


def test_accept_on_a_full_disk_writes_no_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "out").mkdir()
    shutil.copy(RELEASED_REPORT, tmp_path / "out" / "report.json")
    synced = 0
    real_fsync = os.fsync

    def fsync_until_full(fd: int) -> None:
        nonlocal synced
        synced += 1
        if synced == 5:
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync_until_full)
    console = Console(file=io.StringIO(), width=200)
    with pytest.raises(BaselineError, match="No space left on device"):
        baseline_command("accept", released_config(tmp_path), console)
    # Nothing written: the baseline directory the accept would have made is not left behind either.
    assert not (tmp_path / "baseline").exists() or os.listdir(tmp_path / "baseline") == []
