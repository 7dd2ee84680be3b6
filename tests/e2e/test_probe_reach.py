"""`fuzzgate run` against servers whose bugs only a probe or a value riding on an accepted call
reaches (tests/servers/slow_tools.py, gated.py), over real stdio, with the real containment:

- a slow server with many tools, where each tool gets a handful of calls: the option probe in the
  second field of a tool whose first field must name a project directory is sent (probes first,
  riding on the call with the schema's example), the run says how many probes it sent of how many
  and that some tools could not send all theirs, and the twin that puts `--` first stays silent;
- a shell injection behind a project id only a listing hands out: the probes ride on the call the
  tool accepted once the dictionary put the id in;
- a crash behind a known time-zone name plus one more path segment: accepted values are sent again
  and changed a little.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import ROOT
from tests.e2e.test_polite_bugs import Contained, confirmed, contained_run, make_user_files, one_line

pytestmark = pytest.mark.e2e

SLOW = ROOT / "tests" / "servers" / "slow_tools.py"
GATED = ROOT / "tests" / "servers" / "gated.py"
SLOW_TOOLS = 12
"""Enough tools that each gets about ten calls in the budget, fewer than its probes."""


def _target(script: Path, root: Path, *extra: str) -> list[str]:
    return ["--command", sys.executable, f"--arg={script}", "--arg=--root", f"--arg={root}", *extra]


def _real(run: Contained, tool: str) -> list[dict[str, object]]:
    return [f for f in run.run.findings(name=tool) if f["kind"] != "slow"]


@pytest.fixture(scope="module")
def slow_run(tmp_path_factory: pytest.TempPathFactory) -> Contained:
    base = tmp_path_factory.mktemp("slow")
    files = make_user_files(base / "user")
    target = _target(SLOW, files.root, f"--arg=--tools={SLOW_TOOLS}", "--arg=--delay=0.2")
    return contained_run(base, "slow", files, *target, "--budget", "30s", "--replays", "1")


@pytest.fixture(scope="module")
def gated_run(tmp_path_factory: pytest.TempPathFactory) -> Contained:
    base = tmp_path_factory.mktemp("gated")
    files = make_user_files(base / "user")
    # Bounded by cases, not by time: what it finds, and that every probe went out, must not depend
    # on the machine's load (400 cases reach both bugs with this seed, in about 9 s on a quiet machine).
    return contained_run(
        base, "gated", files, *_target(GATED, files.root), "--cases", "400", "--budget", "120s", "--replays", "1"
    )


def test_a_slow_tools_option_probe_rides_on_a_valid_first_field(slow_run: Contained) -> None:
    run = slow_run.run
    assert run.code == 1, run.stdout + run.stderr
    (found,) = _real(slow_run, "sort_lines")
    assert found["kind"] == "injection" and found["signature"] == ["option", "target"], found
    assert confirmed(found), found
    # The probe went on a call whose `repo` the server accepted (the schema's example); verification
    # may have shrunk the repro since, keeping the call fuzzing sent beside it.
    sent = found["repro"].get("original_arguments") or found["repro"]["arguments"]
    assert sent["repo"] == "project", found["repro"]
    for clean in ("sort_lines_safe", *(f"note_{i}" for i in range(SLOW_TOOLS - 2))):
        assert _real(slow_run, clean) == [], clean


def test_the_run_says_how_many_probes_it_sent_and_that_some_went_unsent(slow_run: Contained) -> None:
    run = slow_run.run
    report = run.report
    sent, planned = report["probes"]["sent"], report["probes"]["planned"]
    assert 0 < sent < planned
    entries = {e["name"]: e for e in report["entries"]}
    assert sum(e["probes_sent"] for e in entries.values()) == sent
    assert sum(e["probes_planned"] for e in entries.values()) == planned
    # Each tool got its probes before its random cases: most of its calls were probes.
    assert all(e["probes_sent"] >= e["cases"] - 2 for e in entries.values()), entries
    console = one_line(run.stdout)
    assert re.search(rf"probes: {sent} of {planned} sent \(\d+ of {SLOW_TOOLS} could not send all theirs", console)
    (note,) = [n for n in report["notes"] if n.startswith("probes: ")]
    assert note.startswith(f"probes: {sent} of {planned} sent; ") and "sort_lines (" in note
    assert f"**Probes:** {sent} of {planned} sent" in (run.out / "summary.md").read_text()


def test_a_shell_probe_rides_on_the_call_a_listed_id_got_accepted(gated_run: Contained) -> None:
    (found,) = _real(gated_run, "build_project")
    assert found["kind"] == "injection" and found["signature"] == ["shell", "flags"], found
    assert confirmed(found), found
    assert found["repro"]["arguments"]["project_id"].startswith("prj_"), found["repro"]
    assert _real(gated_run, "build_project_safe") == []


def test_an_accepted_value_changed_a_little_reaches_the_bug_behind_it(gated_run: Contained) -> None:
    (found,) = _real(gated_run, "zone_time")
    assert found["kind"] == "internal_error" and confirmed(found), found
    # A zone the server knows, and one more segment.
    head, _, name = found["repro"]["arguments"]["timezone"].rpartition("/")
    assert head and name, found["repro"]
    assert _real(gated_run, "zone_time_safe") == []
    report = gated_run.run.report
    assert report["probes"]["sent"] == report["probes"]["planned"] > 0
    assert not any(n.startswith("probes: ") for n in report["notes"])
