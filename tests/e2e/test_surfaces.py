"""`fuzzgate run` on a server whose bugs sit behind a resource template and a prompt
(tests/servers/surfaces.py), over real stdio and streamable HTTP: both bugs are found, confirmed
and replayable by fingerprint, their clean twins and the plain resource give nothing, and every
template and prompt is its own JUnit testcase."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from xml.etree import ElementTree

import pytest

from tests.e2e.conftest import ROOT, CliRun, free_port, fuzzgate, served_over_http

pytestmark = pytest.mark.e2e

SERVER = ROOT / "tests" / "servers" / "surfaces.py"
BUGS = {("resource", "docs://{name}"), ("prompt", "summarize")}
CLEAN = {("resource", "notes://{name}"), ("prompt", "greet"), ("resource", "config://settings"), ("tool", "echo")}


def _run(tmp_path: Path, *target: str) -> CliRun:
    # Bounded by cases, not time, and the same cases for the bugs and their clean twins: with seed 5
    # the buggy template first fails at case 10 and again every few cases, the buggy prompt at its first.
    return fuzzgate(
        "run", *target, "--cases", "40", "--shrink-tries", "0", "--budget", "120s", "--seed", "5",
        "--out", str(tmp_path / "out"),
        cwd=tmp_path,
    )  # fmt: skip


def _stdio(*extra: str) -> list[str]:
    return ["--command", sys.executable, f"--arg={SERVER}", *(f"--arg={x}" for x in extra)]


def _subjects(run: CliRun) -> set[tuple[str, str]]:
    # The SDK's server drops a lone-surrogate request: one server-wide finding on `transport`,
    # which is not what this test is about.
    return {(f["surface"], f["name"]) for f in run.report["findings"] if f["surface"] != "server"}


@pytest.fixture(scope="module")
def stdio_run(tmp_path_factory: pytest.TempPathFactory) -> CliRun:
    return _run(tmp_path_factory.mktemp("surfaces"), *_stdio())


def test_template_and_prompt_bugs_are_found_and_confirmed(stdio_run: CliRun) -> None:
    run = stdio_run
    assert run.code == 1, run.stdout + run.stderr
    assert _subjects(run) == BUGS, run.stdout
    template = run.findings(surface="resource", name="docs://{name}")[0]
    assert template["kind"] == "internal_error" and "UnicodeEncodeError" in template["message"]
    assert template["repro"]["surface"] == "resource" and template["reproduced"] >= 1
    prompt = run.findings(surface="prompt", name="summarize")[0]
    assert prompt["kind"] == "internal_error" and "KeyError" in prompt["message"]
    assert prompt["repro"]["surface"] == "prompt" and prompt["reproduced"] >= 1
    # The failing request is the prompt's, whose arguments are strings as the specification types them.
    assert all(isinstance(value, str) for value in prompt["repro"]["arguments"].values())


def test_every_surface_is_an_entry_and_a_junit_testcase(stdio_run: CliRun) -> None:
    run = stdio_run
    entries = {(e["surface"], e["name"]): e for e in run.report["entries"]}
    assert set(entries) == BUGS | CLEAN
    assert all(e["status"] == "fuzzed" and e["cases"] >= 1 for e in entries.values())
    # A resource without arguments is read once: there is nothing to vary.
    assert entries[("resource", "config://settings")]["cases"] == 1
    cases = {c.get("name"): c for c in ElementTree.parse(run.out / "junit.xml").getroot().iter("testcase")}
    assert {"resource docs://{name}", "prompt summarize", "resource notes://{name}", "prompt greet"} <= set(cases)
    assert cases["prompt summarize"].find("failure") is not None
    assert cases["prompt greet"].find("failure") is None


def test_a_template_finding_replays_by_fingerprint(stdio_run: CliRun) -> None:
    run = stdio_run
    template = run.findings(surface="resource", name="docs://{name}")[0]
    replay = fuzzgate("replay", template["fingerprint"], "--out", str(run.out), *_stdio(), cwd=run.out.parent)
    assert replay.code == 1, replay.stdout + replay.stderr
    assert "still fails" in replay.stdout, replay.stdout


def test_the_clean_twins_give_nothing(tmp_path: Path) -> None:
    run = _run(tmp_path, *_stdio("--clean"))
    assert _subjects(run) == set(), run.stdout


@pytest.fixture
def http_url() -> Iterator[str]:
    port = free_port()
    with served_over_http([sys.executable, str(SERVER), "--port", str(port)], port) as url:
        yield url


def test_over_http_the_same_bugs_are_found(tmp_path: Path, http_url: str) -> None:
    run = _run(tmp_path, "--url", http_url)
    assert _subjects(run) == BUGS, run.stdout
