"""`fuzzgate run` against a server that fetches URLs for its caller (tests/servers/fetcher.py), over
real stdio with the real sandbox: the SSRF listener on the jail's loopback sees the requests of the
two buggy tools, each an `ssrf` finding naming its argument, and nothing of the clean twin that
refuses non-public addresses. Without the sandbox the server's 127.0.0.1 is the machine's: no URL
probe is sent, the containment line says so, and a replayed canary URL leads nowhere."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import ROOT, CliRun, fuzzgate

pytestmark = pytest.mark.e2e

FETCHER = ROOT / "tests" / "servers" / "fetcher.py"
BUGGY = {"fetch_page": "url", "preview_link": "link"}
CLEAN = ("fetch_page_safe", "word_count")


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


JAIL = _jail_works_here()


def _run(tmp_path: Path, *extra: str) -> tuple[CliRun, Path]:
    """A run from `tmp_path/work` (the server's scope); the server logs what it was given outside it,
    where only an unsandboxed server can write."""
    log = tmp_path / "logs" / "received.log"
    log.parent.mkdir()
    log.touch()
    work = tmp_path / "work"
    work.mkdir()
    config = work / "fuzzgate.toml"
    config.write_text(
        "[target]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(FETCHER))}]\n"
        f"env = {{ FETCHER_LOG = {json.dumps(str(log))} }}\n"
        'feedback = "behaviour"\n',
        encoding="utf-8",
    )
    run = fuzzgate(
        "run", "--seed", "7", "--cases", "40", "--budget", "90s", "--replays", "2", "--shrink-tries", "0", *extra,
        cwd=work,
    )
    return run, log


@pytest.mark.skipif(not JAIL, reason="needs Linux namespaces (root or unprivileged user namespaces)")
def test_the_listener_sees_the_buggy_tools_fetch_and_nothing_of_the_clean_twin(tmp_path: Path) -> None:
    run, _ = _run(tmp_path)
    assert run.code == 1, run.stdout + run.stderr
    line = run.report["containment"]
    assert line.startswith("sandboxed: ") and "SSRF listener on its loopback (port " in line, line
    for tool, argument in BUGGY.items():
        found = run.findings(name=tool, kind="ssrf")
        assert len(found) == 1, (tool, run.report["findings"])
        finding = found[0]
        assert finding["signature"] == ["fetch", argument] and finding["severity"] == "high", finding
        assert f"argument `{argument}` = " in finding["message"] and "fzgurl-" in finding["message"], finding
        assert finding["reproduced"] >= 1, finding
    for tool in CLEAN:
        assert not [f for f in run.findings(name=tool) if f["kind"] != "slow"], run.findings(name=tool)
    sarif = json.loads((run.out / "fuzzgate.sarif").read_text())
    rules = {rule["id"]: rule for rule in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert "external/cwe/cwe-918" in rules["ssrf"]["properties"]["tags"]

    # The one-line repro, pasted where the seed differs (another commit, `--seed`, no git at all):
    # its URL names the finding run's listener port, and the replay's listener is at another. It
    # still reproduces; it used to answer "fetch failed" and "no finding".
    [finding] = run.findings(name="fetch_page", kind="ssrf")
    [line] = [
        line.strip().removeprefix("reproduce: ")
        for line in run.stdout.splitlines()
        if line.strip().startswith("reproduce: ") and "fetch_page" in line
    ]
    words = shlex.split(line)
    assert words[1:3] == ["replay", "--tool"] and "--seed" not in words, words
    work = tmp_path / "work"
    for seed in (["--seed", "8"], []):
        again = fuzzgate(*words[1:], *seed, cwd=work)
        assert again.code == 1, again.stdout + again.stderr
        assert "fails: ssrf: fetched a URL its caller gave it" in again.stdout, again.stdout
    # A recorded finding replays with its own seed; a --seed beside it is said to go unused.
    recorded = fuzzgate("replay", finding["fingerprint"], "--out", str(run.out), "--seed", "8", cwd=work)
    assert recorded.code == 1 and "--seed is not used" in recorded.stdout, recorded.stdout + recorded.stderr
    port = finding["repro"]["arguments"]["url"].split(":")[2].split("/")[0]
    assert f"port {port})" in run.report["containment"]

    # Accepted into the baseline, and replayed where the server gets no listener (no sandbox): the
    # canary URL would lead nowhere, so the entries are not replayed and stay known, never "fixed".
    accepted = fuzzgate("baseline", "accept", "--out", str(run.out), cwd=work)
    assert accepted.code == 0, accepted.stdout + accepted.stderr
    unjailed = fuzzgate(
        "run", "--seed", "9", "--cases", "5", "--budget", "90s", "--replays", "1", "--sandbox", "off",
        cwd=work, out=tmp_path / "unjailed",
    )  # fmt: skip
    assert unjailed.code == 0, unjailed.stdout + unjailed.stderr
    assert unjailed.report["fixed"] == [], unjailed.report["fixed"]
    assert (
        "2 baseline entries were not replayed: their evidence is a request only the SSRF listener sees"
    ) in " ".join(unjailed.report["notes"]), unjailed.report["notes"]
    replayed = fuzzgate("replay", finding["fingerprint"], "--sandbox", "off", cwd=work)
    assert replayed.code == 0 and "not replayed (its evidence is a request only the SSRF" in " ".join(
        replayed.stdout.split()
    ), replayed.stdout + replayed.stderr
    pruned = fuzzgate("baseline", "prune", "--sandbox", "off", cwd=work)
    assert pruned.code == 0 and "2 kept unreplayed (ssrf)" in pruned.stdout, pruned.stdout + pruned.stderr
    for found in run.findings(kind="ssrf"):
        assert (work / ".fuzzgate" / "baseline" / f"{found['fingerprint']}.json").is_file()
    adhoc = fuzzgate(*words[1:], "--sandbox", "off", cwd=work)
    assert adhoc.code == 0, adhoc.stdout + adhoc.stderr
    assert "the arguments carry an SSRF probe's URL, and whether the server fetched it" in " ".join(
        adhoc.stdout.split()
    ), adhoc.stdout


def test_without_the_sandbox_no_url_probe_is_sent_and_a_replayed_one_leads_nowhere(tmp_path: Path) -> None:
    run, log = _run(tmp_path, "--sandbox", "off")
    received = log.read_text(encoding="utf-8").splitlines()
    line = run.report["containment"]
    assert line.startswith('not sandboxed (sandbox = "off")') and "no SSRF listener" in line, line
    assert "URL probes are not sent" in line
    assert not run.findings(kind="ssrf")
    assert received and not any("fzgurl-" in url for url in received), received
    # A recorded canary URL replayed where the server's loopback is the machine's goes to a name that
    # resolves nowhere, never to a local port.
    canary = "http://127.0.0.1:20367/fzgurl-5d8f40e11dd1bcc9"
    work = log.parent.parent / "work"
    arguments = json.dumps({"url": canary})
    replay = fuzzgate("replay", "--tool", "fetch_page", "--arguments", arguments, "--sandbox", "off", cwd=work)
    assert replay.code == 0 and "no finding" in replay.stdout, replay.stdout + replay.stderr
    last = log.read_text(encoding="utf-8").splitlines()[-1]
    assert last == "http://fuzzgate-listener.invalid/fzgurl-5d8f40e11dd1bcc9", last
