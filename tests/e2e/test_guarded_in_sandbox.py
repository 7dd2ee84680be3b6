"""`fuzz_guarded_in_sandbox`: a tool the destructive guard blocks (tests/servers/guarded_notes.py's
`delete_note`, whose double delete kills the server) is fuzzed when, and only when, the sandbox
holds for the server: found with the opt-in in the sandbox; never called with the opt-in and
`--sandbox off`, by a run, `fuzzgate tools`' decision or a replay. The server appends a line to a
marker file outside its scope at every call of `delete_note`: unsandboxed it lands there, so an
empty marker directory after an unsandboxed run proves the tool was never called (the control,
allowlisting it, shows the line)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import ROOT, fuzzgate

pytestmark = pytest.mark.e2e

SERVER = ROOT / "tests" / "servers" / "guarded_notes.py"
MARKER = ".delete-called"
RUN = ("run", "--seed", "7", "--cases", "12", "--replays", "2", "--shrink-tries", "0", "--budget", "90s")


def _jail_works_here() -> bool:
    """Whether this machine can build the namespaces the jail needs (asked of util-linux, not of fuzzgate)."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
    done = subprocess.run(
        [unshare, *user, "--mount", "--net", "--pid", "--fork", "true"], capture_output=True, timeout=30, check=False
    )
    return done.returncode == 0


def configure(tmp_path: Path, extra: str = "") -> tuple[Path, Path]:
    work, markers = tmp_path / "work", tmp_path / "markers"
    work.mkdir()
    markers.mkdir()
    (work / "fuzzgate.toml").write_text(
        "[target]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(SERVER))}]\n"
        f"env = {{ GUARDED_MARKER_DIR = {json.dumps(str(markers))} }}\n"
        f'feedback = "behaviour"\n{extra}',
        encoding="utf-8",
    )
    return work, markers


def entry(report: dict[str, object], name: str) -> dict[str, object]:
    entries = report["entries"]
    assert isinstance(entries, list)
    return next(e for e in entries if e["name"] == name)


@pytest.mark.skipif(not _jail_works_here(), reason="needs Linux namespaces (root or unprivileged user namespaces)")
def test_with_the_opt_in_the_guarded_tool_is_fuzzed_in_the_sandbox_and_its_bug_found(tmp_path: Path) -> None:
    work, markers = configure(tmp_path, "[fuzzgate]\nfuzz_guarded_in_sandbox = true\n")
    run = fuzzgate(*RUN, cwd=work)
    assert run.code == 1, run.stdout + run.stderr
    assert run.report["containment"].startswith("sandboxed: ")
    deleted = entry(run.report, "delete_note")
    assert deleted["status"] == "fuzzed" and "fuzzed in the sandbox" in str(deleted["reason"]), deleted
    crashes = run.findings(name="delete_note", kind="crash")
    assert len(crashes) == 1 and crashes[0]["reproduced"] >= 1, run.report["findings"]
    assert [step["tool"] for step in crashes[0]["repro"]["prefix"]][-1] == "delete_note", crashes[0]["repro"]
    # It was called many times, and none of its writes outside the layer reached the host.
    assert not list(markers.iterdir())
    listing = fuzzgate("tools", cwd=work)
    assert "fuzzed in the sandbox" in " ".join(listing.stdout.split()), listing.stdout


def test_with_the_opt_in_and_sandbox_off_the_guarded_tool_is_never_called(tmp_path: Path) -> None:
    work, markers = configure(tmp_path)
    run = fuzzgate(*RUN, "--fuzz-guarded-in-sandbox", "--sandbox", "off", cwd=work)
    assert run.code == 0, run.stdout + run.stderr
    deleted = entry(run.report, "delete_note")
    assert deleted["status"] == "blocked", deleted
    reason = str(deleted["reason"])
    assert 'fuzz_guarded_in_sandbox is on, but the sandbox does not hold for this server (sandbox = "off")' in reason
    assert not run.findings(name="delete_note")
    replay = fuzzgate(
        "replay", "--tool", "delete_note", "--arguments", '{"id": 1}', "--fuzz-guarded-in-sandbox", "--sandbox", "off",
        cwd=work,
    )  # fmt: skip
    refused = " ".join(replay.stderr.split())
    assert replay.code == 2 and "not sent: delete_note is blocked" in refused, replay.stdout + replay.stderr
    assert "the sandbox does not hold for this server" in refused, refused
    listing = fuzzgate("tools", "--fuzz-guarded-in-sandbox", "--sandbox", "off", cwd=work)
    assert "the sandbox does not hold for this server" in " ".join(listing.stdout.split()), listing.stdout
    assert not list(markers.iterdir()), (markers / MARKER).read_text(encoding="utf-8")


def test_the_control_an_allowlisted_call_unsandboxed_leaves_the_marker(tmp_path: Path) -> None:
    work, markers = configure(tmp_path, '[allow_destructive]\ntools = ["delete_note"]\n')
    replay = fuzzgate("replay", "--tool", "delete_note", "--arguments", '{"id": 1}', "--sandbox", "off", cwd=work)
    assert replay.code == 0, replay.stdout + replay.stderr
    assert (markers / MARKER).read_text(encoding="utf-8") == "delete_note 1\n"
