"""Stored calls go through the selection like generated ones: a corpus entry, a baseline entry or
a report's finding of a tool the destructive guard blocks is never sent by `corpus minimize`,
`cleanse`, `merge`, `replay`, `baseline prune` or `run`, and stays where it is. And `baseline
prune` and `corpus merge` refuse a server that answers every call with the same error."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from fuzzgate.model.corpus import CorpusEntry
from fuzzgate.model.findings import Finding, Kind, Repro, Severity, Surface
from fuzzgate.store.baseline import Baseline
from fuzzgate.store.corpus_store import CorpusStore
from tests.e2e.conftest import ROOT, SERVERS, fuzzgate

pytestmark = pytest.mark.e2e

MARKER = ".destructive-called"
BUDGET = ("--seed", "7", "--budget", "120s")


def configure(tmp_path: Path, *, allow: bool = False) -> tuple[Path, Path]:
    """A repository whose config starts the buggy example server writing its marker to a directory
    outside the scope, unsandboxed, so a call of its destructive tool shows there."""
    repo, markers = tmp_path / "repo", tmp_path / "markers"
    (repo / ".git").mkdir(parents=True)
    markers.mkdir()
    allowed = '\n[allow_destructive]\ntools = ["delete_all_notes"]\n' if allow else ""
    (repo / "fuzzgate.toml").write_text(
        "[target]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(SERVERS / 'buggy_server.py'))}]\n"
        f"env = {{ FUZZGATE_EXAMPLE_MARKER_DIR = {json.dumps(str(markers))} }}\n"
        f'sandbox = "off"\nscope = [{json.dumps(str(repo))}]\nfeedback = "behaviour"\n{allowed}',
        encoding="utf-8",
    )
    return repo, markers


DESTRUCTIVE = CorpusEntry("delete_all_notes", {"confirm": True})


def stored(repo: Path) -> dict[str, str]:
    directory = repo / ".fuzzgate" / "corpus" / "buggy_server"
    return {path.name: path.read_text(encoding="utf-8") for path in sorted(directory.glob("*.json"))}


def test_an_allowlisted_entry_is_sent_so_the_marker_shows_a_call(tmp_path: Path) -> None:
    # The control: the other tests' empty marker directory means no call, not no way to see one.
    repo, markers = configure(tmp_path, allow=True)
    CorpusStore(repo / ".fuzzgate" / "corpus", "buggy_server").add(DESTRUCTIVE)
    result = fuzzgate("corpus", "minimize", *BUDGET, cwd=repo)
    assert result.code == 0, result.stderr
    assert (markers / MARKER).read_text(encoding="utf-8").splitlines()[0] == "delete_all_notes"


@pytest.mark.parametrize("action", ["minimize", "cleanse", "merge"])
def test_corpus_tools_never_send_a_blocked_entry_and_leave_it(tmp_path: Path, action: str) -> None:
    repo, markers = configure(tmp_path)
    store = CorpusStore(repo / ".fuzzgate" / "corpus", "buggy_server")
    store.add(DESTRUCTIVE)
    store.add(CorpusEntry("echo", {"text": "hi"}))
    other = CorpusStore.at(tmp_path / "other")
    other.add(CorpusEntry("archive_project", {"project": "roadmap"}))
    before = stored(repo)
    extra = [str(tmp_path / "other")] if action == "merge" else []
    result = fuzzgate("corpus", action, *extra, *BUDGET, cwd=repo)
    assert result.code == 0, result.stderr
    assert not list(markers.iterdir()), (markers / MARKER).read_text(encoding="utf-8")
    after = stored(repo)
    assert after[DESTRUCTIVE.key + ".json"] == before[DESTRUCTIVE.key + ".json"]
    assert "delete_all_notes is blocked: name contains the destructive keyword 'delete'" in result.stdout
    if action == "merge":
        # Another corpus's blocked entry is not imported either.
        assert not any("archive_project" in text for text in after.values())


def stored_finding(tool: str, fingerprint: str, arguments: dict[str, object]) -> Finding:
    """A baseline entry's finding: an unhandled error in `tool`, found by seed 7."""
    return Finding(
        kind=Kind.INTERNAL_ERROR,
        severity=Severity.HIGH,
        surface=Surface.TOOL,
        name=tool,
        message="unhandled error",
        fingerprint=fingerprint,
        repro=Repro(seed=7, case_index=0, arguments=arguments, transport="stdio"),
    )


def blocked_finding() -> Finding:
    return stored_finding("delete_all_notes", "0123456789abcdef", {"confirm": True})


def test_replay_prune_and_run_never_send_a_blocked_baseline_entry(tmp_path: Path) -> None:
    repo, markers = configure(tmp_path)
    baseline = Baseline.open(repo / ".fuzzgate" / "baseline")
    entry = baseline.record(blocked_finding())
    files = {p.name: p.read_bytes() for p in (repo / ".fuzzgate" / "baseline").iterdir()}
    CorpusStore(repo / ".fuzzgate" / "corpus", "buggy_server").add(DESTRUCTIVE)

    replay = fuzzgate("replay", entry.fingerprint, *BUDGET, cwd=repo)
    assert replay.code == 0, replay.stderr
    assert "not replayed (delete_all_notes is blocked" in replay.stdout

    prune = fuzzgate("baseline", "prune", *BUDGET, cwd=repo)
    assert prune.code == 0, prune.stderr
    assert "0 pruned, 0 still failing" in prune.stdout
    assert "1 kept unreplayed: a call of their repro is not selected" in prune.stdout

    run = fuzzgate("run", *BUDGET, "--cases", "1", "--include", "echo", "--include", "delete_all_notes", cwd=repo)
    assert run.code == 0, run.stderr
    report = json.loads((repo / "out" / "report.json").read_text(encoding="utf-8"))
    assert entry.fingerprint not in report["fixed"]

    adhoc = fuzzgate("replay", "--tool", "delete_all_notes", "--arguments", "{}", *BUDGET, cwd=repo)
    assert adhoc.code == 2
    assert adhoc.stderr.strip().splitlines()[0].startswith("fuzzgate: not sent: delete_all_notes is blocked")

    assert not list(markers.iterdir()), (markers / MARKER).read_text(encoding="utf-8")
    assert {p.name: p.read_bytes() for p in (repo / ".fuzzgate" / "baseline").iterdir()} == files
    assert DESTRUCTIVE.key + ".json" in stored(repo)


# --- a degraded server ----------------------------------------------------------------------------


NOT_CONFIGURED = "'Error executing tool <tool>: not configured: set DEGRADED_CONFIG'"


def degraded_repo(tmp_path: Path, *, configured: bool) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True, exist_ok=True)
    env = 'env = { DEGRADED_CONFIG = "yes" }\n' if configured else ""
    (repo / "fuzzgate.toml").write_text(
        "[target]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(ROOT / 'tests' / 'servers' / 'degraded.py'))}]\n"
        f'feedback = "behaviour"\n{env}',
        encoding="utf-8",
    )
    return repo


def test_prune_refuses_a_server_answering_every_replay_with_the_same_error(tmp_path: Path) -> None:
    repo = degraded_repo(tmp_path, configured=True)
    run = fuzzgate("run", *BUDGET, "--cases", "2", "--replays", "1", cwd=repo)
    assert run.code == 1, run.stderr
    assert fuzzgate("baseline", "accept", "--out", str(repo / "out"), cwd=repo).code == 0
    baseline = repo / ".fuzzgate" / "baseline"
    files = {p.name: p.read_bytes() for p in baseline.iterdir()}
    assert len(files) >= 2
    degraded_repo(tmp_path, configured=False)
    prune = fuzzgate("baseline", "prune", *BUDGET, "--replays", "1", cwd=repo)
    assert prune.code == 3, prune.stdout
    lines = prune.stderr.strip().splitlines()
    assert f"every replay answered the same error, {NOT_CONFIGURED}" in lines[0]
    assert "Traceback" not in prune.stderr
    assert {p.name: p.read_bytes() for p in baseline.iterdir()} == files


def test_merge_refuses_a_server_answering_every_entry_with_the_same_error(tmp_path: Path) -> None:
    repo = degraded_repo(tmp_path, configured=False)
    store = CorpusStore(repo / ".fuzzgate" / "corpus", "degraded")
    for n in (1, 2):
        store.add(CorpusEntry("explode", {"n": n}))
        store.add(CorpusEntry("shatter", {"text": str(n)}))
    directory = store.path
    before = {p.name: p.read_bytes() for p in directory.iterdir()}
    (tmp_path / "empty").mkdir()
    merge = fuzzgate("corpus", "merge", str(tmp_path / "empty"), *BUDGET, cwd=repo)
    assert merge.code == 3, merge.stdout
    assert f"every entry measured answered the same error, {NOT_CONFIGURED}" in merge.stderr
    assert "Traceback" not in merge.stderr
    assert {p.name: p.read_bytes() for p in directory.iterdir()} == before


# --- tools the server no longer lists -------------------------------------------------------------


def test_entries_of_tools_no_longer_listed_are_said_so_and_pruned_not_taken_for_a_degraded_server(
    tmp_path: Path,
) -> None:
    # A pull request renamed two tools: each replay answers "unknown tool", which is neither a fix
    # proven nor a server answering every call with the same error.
    repo, _ = configure(tmp_path)
    baseline = Baseline.open(repo / ".fuzzgate" / "baseline")
    names = {"1" * 16: "old_echo", "2" * 16: "old_add"}
    old = [baseline.record(stored_finding(name, fp, {"text": "hi"})) for fp, name in names.items()]

    replay = fuzzgate("replay", old[0].fingerprint, *BUDGET, cwd=repo)
    assert replay.code == 0, replay.stderr
    assert "did not fail again (the server no longer lists old_echo: renamed or removed)" in replay.stdout
    assert "no longer fails" not in replay.stdout

    prune = fuzzgate("baseline", "prune", *BUDGET, "--replays", "1", cwd=repo)
    assert prune.code == 0, prune.stderr
    for entry in old:
        name = names[entry.fingerprint]
        assert f"pruned {entry.fingerprint} (internal_error in {name}): the server no longer lists it" in prune.stdout
    assert "2 pruned, 0 still failing" in prune.stdout
    assert Baseline.open(repo / ".fuzzgate" / "baseline").findings() == []
