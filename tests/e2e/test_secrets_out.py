"""Secrets stay out of everything fuzzgate writes, by every path a user's value can take: a `${VAR}`
the config file expands anywhere, a Redis store's password in any form redis-py takes it.

Each test makes one cheap run (bounded by `--cases`, with a generous budget) and reads every file it
wrote, its stdout and its stderr for the secret, in every form the redactor knows."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fuzzgate.check.secrets import Redactor, encodings
from tests.e2e.conftest import ROOT, SERVERS, CliRun, fuzzgate
from tests.redis_server import RedisServer

pytestmark = pytest.mark.e2e

# Matches none of the built-in patterns: only the redactor's known values can take it out.
TOKEN = "tok-3f9a1c2e7b4d8e6f0a5b"
PASSWORD = "pw-Q7v2Lr9xKc4TzW8e"
FLAGS = ("--include=split_bill", "--timeout", "2s", "--replays", "1", "--cases", "8", "--budget", "120s")


def _texts(run: CliRun, *paths: Path) -> dict[str, str]:
    """`stdout`, `stderr` and the text of every file under `paths`, by where it is."""
    texts = {"stdout": run.stdout, "stderr": run.stderr}
    for root in paths:
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        texts |= {str(f): f.read_text(encoding="utf-8", errors="replace") for f in files}
    return texts


def _leaks(secret: str, run: CliRun, *paths: Path) -> list[str]:
    """Where `secret` shows (in any of its encoded forms): `stdout`, `stderr`, or a file's path."""
    forms = encodings(secret)
    return [where for where, text in _texts(run, *paths).items() if any(form in text for form in forms)]


@pytest.fixture
def guarded_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A real redis-server on loopback that asks for `PASSWORD` (`requirepass`)."""
    with RedisServer(tmp_path_factory.mktemp("redis"), password=PASSWORD) as server:
        yield server


def test_an_expanded_value_and_a_store_password_are_in_no_output(tmp_path: Path, guarded_redis: RedisServer) -> None:
    """One run carries both: a `${VAR}` the config file expands into `[target] args`, and a store
    URL with the password in its query (a form redis-py takes). The userinfo forms (`redis://:pw@`,
    `rediss://user:pw@`) take the same paths; their masking and redaction are unit tests
    (tests/store/test_shared.py, tests/check/test_redactor.py)."""
    config = tmp_path / "fuzzgate.toml"
    config.write_text(
        "[target]\n"
        f"command = {str(sys.executable)!r}\n"
        # `--host` means nothing to a stdio server: the token only rides along on its command line.
        f"args = [{str(SERVERS / 'buggy_server.py')!r}, '--host=${{SOME_TOKEN}}']\n"
    )
    url = f"redis://127.0.0.1:{guarded_redis.port}/0?password={PASSWORD}"
    trace = tmp_path / "trace.jsonl"
    run = fuzzgate(
        "run", "--config", str(config), *FLAGS, "--feedback", "behaviour", "--store", url, "--trace", str(trace),
        cwd=tmp_path, env={"SOME_TOKEN": TOKEN},
    )  # fmt: skip
    assert run.code == 1, run.stdout + run.stderr
    assert run.report["target"]["args"][-1] == "--host=[REDACTED]"
    [note] = [note for note in run.report["notes"] if note.startswith("store ")]
    assert "wrote" in note and "password=***" in note, note
    page = fuzzgate("report", "--store", url, "--out", str(tmp_path / "page.html"), cwd=tmp_path)
    assert page.code == 0, page.stdout + page.stderr
    shown = fuzzgate("store", "show", "--store", url, cwd=tmp_path)
    assert shown.code == 0 and "buggy_server" in shown.stdout, shown.stdout + shown.stderr

    for secret in (TOKEN, PASSWORD):
        assert _leaks(secret, run, run.out, trace) == [], secret
        assert _leaks(secret, page, tmp_path / "page.html") == [], secret
        assert _leaks(secret, shown) == [], secret


def test_a_store_password_is_in_no_error(tmp_path: Path, guarded_redis: RedisServer) -> None:
    """A wrong password, given in the query: each command's one error does not name it."""
    wrong = f"redis://127.0.0.1:{guarded_redis.port}/0?username=default&password={PASSWORD}x"
    shown = fuzzgate("store", "show", "--store", wrong, cwd=tmp_path)
    assert shown.code == 2 and "authentication failed" in shown.stderr, shown.stderr
    page = fuzzgate("report", "--store", wrong, "--out", str(tmp_path / "page.html"), cwd=tmp_path)
    assert page.code == 2 and "authentication failed" in page.stderr, page.stderr

    assert _leaks(PASSWORD, shown) == []
    assert _leaks(PASSWORD, page) == []


def test_a_token_the_server_handed_out_is_in_no_repro_and_the_repro_still_replays(tmp_path: Path) -> None:
    """tests/servers/objects.py with `--token-ids`: a new note's id is a GitHub token, which the
    use-after-delete sequence sends back. Written repros hold `[REDACTED]` in its place, like the
    corpus keeps no entry holding it; the run's own replays and `fuzzgate replay` still reproduce."""
    config = tmp_path / "fuzzgate.toml"
    config.write_text('[allow_destructive]\ntools = ["delete_note"]\n')
    server = (
        "--config",
        str(config),
        "--command",
        sys.executable,
        f"--arg={ROOT / 'tests' / 'servers' / 'objects.py'}",
        "--arg=--token-ids",
    )
    trace = tmp_path / "trace.jsonl"
    run = fuzzgate(
        "run", *server, *(f"--include={tool}" for tool in ("create_note", "delete_note", "get_note")),
        "--seed", "7", "--cases", "10", "--budget", "120s", "--replays", "1", "--shrink-tries", "0",
        "--feedback", "behaviour",
        "--trace", str(trace), cwd=tmp_path,
    )  # fmt: skip
    assert run.code == 1, run.stdout + run.stderr
    (used,) = run.findings(name="get_note", kind="internal_error")
    repro = used["repro"]
    assert repro["redacted"] is True and repro["arguments"] == {"note_id": "[REDACTED]"}, repro
    assert any("[REDACTED]" in step.get("produced", []) for step in repro["prefix"]), repro
    assert used["reproduced"] > 0, used
    assert "repro redacted" in (run.out / "summary.md").read_text()

    accepted = fuzzgate("baseline", "accept", "--out", str(run.out), *server, cwd=tmp_path)
    assert accepted.code == 0, accepted.stdout + accepted.stderr
    replayed = fuzzgate("replay", used["fingerprint"], "--out", str(run.out), *server, "--replays", "1", cwd=tmp_path)
    assert replayed.code == 1 and "still fails" in replayed.stdout, replayed.stdout + replayed.stderr

    # Fixed, the bug no longer fails; but a redacted repro that did not fail again proves no fix
    # (a secret fuzzgate sent of its own would have been replayed as the marker): the entry stays.
    pruned = fuzzgate("baseline", "prune", *server, "--arg=--clean", "--replays", "1", cwd=tmp_path)
    assert pruned.code == 0 and "0 pruned" in pruned.stdout, pruned.stdout + pruned.stderr
    baseline = tmp_path / ".fuzzgate" / "baseline"
    assert used["fingerprint"] in " ".join(p.name for p in baseline.rglob("*.json"))

    # Nothing written holds what the redactor (its built-in patterns) would take out.
    patterns = Redactor(())
    texts = _texts(run, run.out, trace, baseline) | _texts(replayed) | _texts(pruned)
    assert [where for where, text in texts.items() if patterns.text(text) != text] == []
