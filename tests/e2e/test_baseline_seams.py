"""A baseline holding a prompt's finding, made by real runs of tests/servers/surfaces.py copied into a
project (so it runs on a throwaway layer of it): the finding's traceback location names the
project's file (not the layer), accepting a second run of the same bug leaves the baseline file
byte for byte, `baseline prune` replays the entry as a prompt and keeps it while it still fails,
and refuses with exit 3, keeping it, when the server cannot start."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from fuzzgate.report import json_report
from fuzzgate.report.locate import source_location
from tests.e2e.conftest import ROOT, CliRun, fuzzgate

pytestmark = pytest.mark.e2e

SERVER = ROOT / "tests" / "servers" / "surfaces.py"
TARGET = ("--command", sys.executable, "--arg=surfaces.py")


def _run(project: Path, out: Path) -> CliRun:
    # With seed 5 the buggy prompt fails at its first case; three cases each are plenty.
    return fuzzgate(
        "run", *TARGET, "--cases", "3", "--budget", "120s",
        "--seed", "5", "--baseline", str(project.parent / "baseline"), cwd=project, out=out,
    )  # fmt: skip


def _accept(project: Path, out: Path) -> CliRun:
    return fuzzgate(
        "baseline", "accept", *TARGET, "--out", str(out), "--baseline", str(project.parent / "baseline"), cwd=project
    )


@pytest.fixture(scope="module")
def accepted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, CliRun, bytes]:
    project = tmp_path_factory.mktemp("seams") / "project"
    project.mkdir()
    shutil.copy(SERVER, project / "surfaces.py")
    run = _run(project, project.parent / "out1")
    assert run.code == 1, run.stdout + run.stderr
    assert _accept(project, run.out).code == 0
    [prompt] = run.findings(surface="prompt", name="summarize")
    entry = (project.parent / "baseline" / f"{prompt['fingerprint']}.json").read_bytes()
    return project, run, entry


def test_the_traceback_location_is_the_projects_file(accepted: tuple[Path, CliRun, bytes]) -> None:
    project, run, _ = accepted
    [prompt] = run.findings(surface="prompt", name="summarize")
    # The server ran on a copy (or overlay) of the project under /var/tmp/fuzzgate-*: its traceback
    # named that copy, which SARIF, JUnit and the annotations could not place in the repository.
    assert prompt["details"]["location"] == {"path": str(project / "surfaces.py"), "line": 66}
    assert all(frame.startswith(str(project)) for frame in prompt["details"]["frames"][-1:])
    report = json_report.read(run.out / json_report.REPORT_FILE)
    finding = next(f for f in report.findings if f.fingerprint == prompt["fingerprint"])
    located = source_location(finding, report, project)
    assert (located.path, located.line) == ("surfaces.py", 66)
    # The run's own SARIF, relative to the repository root (here the project: it is no git checkout).
    sarif = json.loads((run.out / "fuzzgate.sarif").read_text())
    [result] = [r for r in sarif["runs"][0]["results"] if r["fingerprints"]["fuzzgate/v1"] == prompt["fingerprint"]]
    physical = result["locations"][0]["physicalLocation"]
    assert (physical["artifactLocation"]["uri"], physical["region"]["startLine"]) == ("surfaces.py", 66)


def test_accepting_the_same_bug_again_leaves_the_file_byte_for_byte(accepted: tuple[Path, CliRun, bytes]) -> None:
    project, _, entry = accepted
    again = _run(project, project.parent / "out2")
    assert again.code == 0, again.stdout + again.stderr  # known now
    [prompt] = again.findings(surface="prompt", name="summarize")
    assert _accept(project, again.out).code == 0
    assert (project.parent / "baseline" / f"{prompt['fingerprint']}.json").read_bytes() == entry


def test_prune_replays_the_prompt_entry_as_a_prompt_and_keeps_it(accepted: tuple[Path, CliRun, bytes]) -> None:
    project, run, entry = accepted
    [prompt] = run.findings(surface="prompt", name="summarize")
    baseline = project.parent / "baseline"
    prune = fuzzgate("baseline", "prune", *TARGET, "--baseline", str(baseline), cwd=project)
    assert prune.code == 0, prune.stdout + prune.stderr
    assert f"pruned {prompt['fingerprint']}" not in prune.stdout, prune.stdout
    assert (baseline / f"{prompt['fingerprint']}.json").read_bytes() == entry


def test_prune_exits_3_and_keeps_every_entry_when_the_server_cannot_start(
    accepted: tuple[Path, CliRun, bytes],
) -> None:
    project, run, entry = accepted
    [prompt] = run.findings(surface="prompt", name="summarize")
    baseline = project.parent / "baseline"
    before = sorted(p.name for p in baseline.iterdir())
    prune = fuzzgate("baseline", "prune", "--command", sys.executable, "--arg=-c", "--arg=raise SystemExit(3)",
                     "--baseline", str(baseline), cwd=project)  # fmt: skip
    assert prune.code == 3, prune.stdout + prune.stderr
    assert "could not start" in prune.stderr and "pruned" not in prune.stdout
    assert sorted(p.name for p in baseline.iterdir()) == before
    assert (baseline / f"{prompt['fingerprint']}.json").read_bytes() == entry
