"""Findings a maintainer can act on, through the real CLI against planted servers over stdio:
an exception the server caught and answered is low while one nobody caught stays high, a hang says
whether it took the whole server down, a repro is shrunk to the call the bug needs (the one fuzzing
sent kept beside it), and messages name the exception."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.e2e.conftest import CliRun, fuzzgate

SERVERS = Path(__file__).resolve().parents[1] / "servers"


def run(tmp_path: Path, server: str, *extra: str) -> CliRun:
    target = ["--command", sys.executable, f"--arg={SERVERS / server}"]
    return fuzzgate("run", *target, "--seed", "0", "--budget", "90s", *extra, cwd=tmp_path)


def only(found: list[dict[str, Any]]) -> dict[str, Any]:
    assert len(found) == 1, found
    return found[0]


def test_a_caught_exception_is_low_and_one_nobody_caught_stays_high(tmp_path: Path) -> None:
    result = run(tmp_path, "caught.py", "--cases", "3")
    caught = only(result.findings(name="lookup"))
    assert caught["kind"] == "internal_error" and caught["severity"] == "low", caught
    assert caught["message"].startswith("caught KeyError: "), caught
    assert "answered with an isError reply" in caught["message"]
    uncaught = only(result.findings(name="divide"))
    assert uncaught["kind"] == "internal_error" and uncaught["severity"] == "high", uncaught
    assert uncaught["message"] == "unhandled ZeroDivisionError: integer division or modulo by zero"
    # Both are confirmed bugs; only the uncaught one fails the gate at the default fail-on.
    assert caught["reproduced"] == caught["replays"] > 0 and uncaught["reproduced"] == uncaught["replays"] > 0
    assert result.code == 1 and "1 new finding(s) at or above medium" in result.stdout


def test_a_hang_that_wedges_the_server_is_a_denial_of_service_and_a_slow_call_is_not(tmp_path: Path) -> None:
    result = run(tmp_path, "wedged.py", "--cases", "1", "--timeout", "2s", "--exclude", "echo")
    wedged = only(result.findings(name="freeze"))
    assert wedged["kind"] == "hang" and wedged["severity"] == "high", wedged
    assert wedged["details"]["after_timeout"] == "stuck"
    assert "stopped answering altogether" in wedged["message"] and "denial of service" in wedged["message"]
    alone = only(result.findings(name="wait"))
    assert alone["kind"] == "hang" and alone["severity"] == "medium", alone
    assert alone["details"]["after_timeout"] == "alive"
    assert "only this call hangs" in alone["message"]
    assert wedged["fingerprint"] != alone["fingerprint"]


def test_a_repro_is_shrunk_to_the_call_the_bug_needs_and_the_original_kept(tmp_path: Path) -> None:
    result = run(tmp_path, "shrinkable.py", "--cases", "3", "--shrink-tries", "24")
    finding = only(result.findings(name="open_record"))
    repro = finding["repro"]
    original = repro["original_arguments"]
    assert repro["arguments"] == {"path": ""}, repro
    assert len(original["path"]) > 100 and set(original) > {"path"}, original
    assert repro["schema_valid"] is True
    # Confirmed on fresh servers, the message from the shrunk call, the command sends it.
    assert finding["reproduced"] == finding["replays"] > 0
    assert finding["message"] == "unhandled KeyError: ''"
    assert """reproduce: fuzzgate replay --tool open_record --arguments '{"path":""}'""" in result.stdout


def test_every_tool_failing_alike_is_said_to_look_like_the_environment(tmp_path: Path) -> None:
    script = SERVERS / "unconfigured.py"
    result = run(tmp_path, "unconfigured.py", "--cases", "3")
    names = {f["name"] for f in result.findings(kind="internal_error")}
    assert names == {"search_notes", "note_metadata", "note_fulltext"}, result.stdout
    [note] = [n for n in result.report["notes"] if "failed with the same error" in n]
    assert note.startswith("3 of the 3 tools, resources and prompts fuzzed failed with the same error, 'unhandled "
                           "ValueError: Missing required environment variables. Please set NOTES_API_KEY'")  # fmt: skip
    assert "failed with the same error" in (tmp_path / "out" / "summary.md").read_text()
    # Given what it needs, the same server gives no finding and no such note.
    config = tmp_path / "configured" / "fuzzgate.toml"
    config.parent.mkdir()
    config.write_text(
        f'[target]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(script))}]\n'
        'env = { NOTES_API_KEY = "k-1" }\n'
    )  # fmt: skip
    configured = fuzzgate("run", "--seed", "0", "--budget", "90s", "--cases", "3", cwd=config.parent)
    assert configured.code == 0 and configured.report["findings"] == [], configured.stdout
    assert not any("failed with the same error" in n for n in configured.report["notes"])
