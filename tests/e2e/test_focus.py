"""The budget goes where the change is: after a run that recorded which files each tool's calls ran,
a run told that one tool's module changed gives that tool most of the cases and says why. Real CLI,
a real stdio server with the coverage collector."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.e2e.conftest import fuzzgate

SERVER = Path(__file__).resolve().parents[1] / "servers" / "focus" / "server.py"
TARGET = ("--command", sys.executable, f"--arg={SERVER}", "--feedback", "auto", "--corpus", "corpus")


def _cases(report: dict[str, object]) -> dict[str, int]:
    return {entry["name"]: entry["cases"] for entry in report["entries"]}  # type: ignore[attr-defined]


def test_a_tool_reaching_a_changed_file_gets_most_of_the_cases(tmp_path: Path) -> None:
    # 16 s: on a loaded CI machine the server's start under the collector has taken 9 s of a 10 s budget.
    first = fuzzgate("run", *TARGET, "--budget", "16s", "--seed", "1", cwd=tmp_path)
    assert first.code in (0, 1), first.stdout + first.stderr
    entries = list((tmp_path / "corpus" / "server").glob("alpha-*.json"))
    assert entries and any('"alpha.py"' in e.read_text() for e in entries), "entries record the files their call ran"

    (tmp_path / "changed.txt").write_text("tests/servers/focus/alpha.py\n")
    second = fuzzgate("run", *TARGET, "--budget", "16s", "--seed", "2", "--changed-files", "changed.txt", cwd=tmp_path)
    assert second.code in (0, 1), second.stdout + second.stderr
    notes = " ".join(second.report["notes"])
    assert "1 of 2 tools favoured" in notes and "alpha (reaches alpha.py)" in notes, notes
    cases = _cases(second.report)
    assert cases["alpha"] > 2 * cases["beta"], cases


def test_with_no_change_list_every_tool_gets_its_share_and_nothing_is_said(tmp_path: Path) -> None:
    run = fuzzgate("run", *TARGET, "--budget", "6s", "--seed", "1", cwd=tmp_path)
    assert not any(note.startswith("budget:") for note in run.report["notes"]), run.report["notes"]


def test_an_unreadable_change_list_is_a_usage_error(tmp_path: Path) -> None:
    run = fuzzgate("run", *TARGET, "--changed-files", "missing.txt", cwd=tmp_path)
    assert run.code == 2
    assert "--changed-files: cannot read missing.txt" in run.stderr and "Traceback" not in run.stderr
