"""No piece of a secret a server printed reaches any output, wherever fuzzgate's cuts fall.

A secret (the target's env value; random, so none of its 6-character pieces occurs anywhere by
chance) is planted, as written and in one of its encodings (JSON-escaped, percent-encoded, base64,
as Hypothesis picks), at every offset around every limit at which fuzzgate cuts or excerpts that
channel's text, in every channel a server's text arrives by: reply texts (and stack traces in them),
error texts, JSON-RPC error messages, non-JSON, invalid and wrong-id lines on stdout, stderr
(tracebacks, and the line the last-40-lines excerpt starts at) and tool names. The outcomes go
through the real oracles, `FindingSet`, the final redaction pass and every writer: report.json,
SARIF, JUnit, summary.md, the annotations, the trace, a baseline accepted from the report (and
listed), and what the console prints. None may hold a 6-character piece of what was planted.
"""

from __future__ import annotations

import json
import os
import random
import string
import sys
from collections.abc import Callable, Iterator
from io import StringIO
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from fuzzgate.check import (
    PROTOCOL_EXCERPT_CHARS,
    RPC_MESSAGE_CHARS,
    SCHEMA_ERROR_CHARS,
    STDERR_EXCERPT_LINES,
    Oracles,
)
from fuzzgate.check.secrets import SecretScanner, canary_environment, encodings, redactor_for
from fuzzgate.cli.baseline import baseline_command
from fuzzgate.config.model import Config, TargetConfig, TargetKind
from fuzzgate.config.views import ServerSettings
from fuzzgate.engine.events import CallFinished, FindingTriaged
from fuzzgate.engine.result import target_summary
from fuzzgate.model.findings import Repro, Severity, Surface
from fuzzgate.model.outcome import CallOutcome, OutcomeStatus
from fuzzgate.record.results import RunReport, Status, SurfaceEntry, TargetSummary, Verdict
from fuzzgate.report import annotations, json_report
from fuzzgate.report.console import ConsoleReporter
from fuzzgate.report.junit import write_junit
from fuzzgate.report.redaction import redact_report
from fuzzgate.report.sarif import write_sarif
from fuzzgate.report.summary import write_summary
from fuzzgate.report.trace import TEXT_CHARS, TraceWriter
from fuzzgate.target.stdio import EXCERPT_CHARS, ServerProcess, StdioSpec
from fuzzgate.triage.finding_set import FindingSet

PIECE = 6
FILLER = "."
"""Not in the secret's alphabet, so filler and secret never make a piece together."""
SECRET_CHARS = 16
SPECIALS = '/+%"\\é'
"""Characters that JSON, percent-encoding and `repr` write differently."""
JUNIT_MESSAGE_CHARS = 200
"""JUnit's one-line failure message (report/junit.py); the summary cuts an error at 2000."""
SUMMARY_ERROR_CHARS = 2000
TRACEBACK = 'Traceback (most recent call last):\n  File "/srv/app/server.py", line 7, in handler\nValueError: '
NOT_JSON, INVALID, WRONG_ID = "", '{"jsonrpc": "2.0", "junk": "', '{"jsonrpc": "2.0", "id": 99, "result": {"t": "'


def make_secret(seed: int) -> str:
    rng = random.Random(seed)
    chars = [rng.choice(string.ascii_letters + string.digits) for _ in range(SECRET_CHARS)]
    for _ in range(2):
        chars[rng.randrange(1, SECRET_CHARS - 1)] = rng.choice(SPECIALS)
    return "".join(chars)


def pieces(text: str) -> set[str]:
    return {text[i : i + PIECE] for i in range(len(text) - PIECE + 1)}


def config_for(secret: str, root: Path) -> Config:
    return Config(
        target=TargetConfig(
            kind=TargetKind.STDIO,
            command=sys.executable,
            args=("server.py", f"--token={secret}"),
            env={"API_TOKEN": secret},
        ),
        out_dir=root / "out",
        baseline_dir=root / "baseline",
    )


def place(secret: str, at: int, before: str = "") -> str:
    """`before`, filler, and `secret` starting at character `at` of the result."""
    return before + FILLER * max(0, at - len(before)) + secret + FILLER * 3


def stderr_with(secret: str, at: int) -> str:
    """A log whose last-40-lines excerpt starts on the second of two lines holding the secret, and
    ends with a traceback (three lines) whose message holds it at `at`."""
    between = [f"log line {i}" for i in range(STDERR_EXCERPT_LINES - 4)]
    return "\n".join(["log start", place(secret, 5), place(secret, 5), *between, place(secret, at, TRACEBACK)])


def wire(secret: str, at: int, process: ServerProcess) -> CallOutcome:
    """A call during which the server wrote a non-JSON line, an invalid message and a reply with a
    wrong id, each holding the secret at character `at` of its line (excerpts are cut from lines)."""
    mark = process.wire.mark()
    for before in (NOT_JSON, INVALID, WRONG_ID):
        line = place(secret, at, before)
        process._check_line((line + '"}' if before else line).encode())
    return CallOutcome(OutcomeStatus.OK, 0.01, text="ok", anomalies=process.wire.since(mark))


def reply(text: str) -> CallOutcome:
    return CallOutcome(OutcomeStatus.OK, 0.01, text=text, payload=json.dumps({"text": text}))


CHANNELS: dict[str, tuple[tuple[int, ...], Callable[[str, int, ServerProcess], CallOutcome]]] = {
    # channel: (the limits its text is cut at, before redaction or in an output; the outcome)
    "wire": ((PROTOCOL_EXCERPT_CHARS, EXCERPT_CHARS), wire),
    "rpc": (
        (RPC_MESSAGE_CHARS, TEXT_CHARS),
        lambda s, at, _: CallOutcome(
            OutcomeStatus.RPC_ERROR, 0.01, text=place(s, at), rpc_code=-32603, error=place(s, at)
        ),
    ),
    "schema": (
        (SCHEMA_ERROR_CHARS,),
        lambda s, at, _: CallOutcome(OutcomeStatus.OUTPUT_INVALID, 0.01, text=place(s, at), schema_path="x"),
    ),
    "reply": ((TEXT_CHARS,), lambda s, at, _: reply(place(s, at))),
    "reply-trace": ((TEXT_CHARS, JUNIT_MESSAGE_CHARS), lambda s, at, _: reply(place(s, at, TRACEBACK))),
    "stderr": (
        (JUNIT_MESSAGE_CHARS,),
        lambda s, at, _: CallOutcome(OutcomeStatus.TOOL_ERROR, 0.01, text="bad input", stderr=stderr_with(s, at)),
    ),
    "crash": (
        (JUNIT_MESSAGE_CHARS,),
        lambda s, at, _: CallOutcome(OutcomeStatus.CLOSED, 0.01, stderr=stderr_with(s, at), exit_code=1),
    ),
    "hang": (
        (JUNIT_MESSAGE_CHARS, SUMMARY_ERROR_CHARS),
        lambda s, at, _: CallOutcome(OutcomeStatus.TIMEOUT, 5.0, error=place(s, at), stderr=place(s, at)),
    ),
}
"""Every way a server's text reaches an outcome. A tool named with the secret is planted too."""


def calls(secret: str, process: ServerProcess) -> Iterator[tuple[str, int, CallOutcome]]:
    """(tool, offset, outcome) for the secret at every offset around every limit of every channel."""
    for channel, (limits, outcome) in CHANNELS.items():
        for limit in limits:
            for at in range(max(0, limit - len(secret) - 1), limit + 2):
                yield f"{channel}-{limit}-{at}", at, outcome(secret, at, process)
    # A tool named with the secret in it, answering the SDK's message for an unhandled exception.
    for at in range(0, len(secret) + 2):
        name = "t" + place(secret, at)
        yield name, at, CallOutcome(OutcomeStatus.TOOL_ERROR, 0.01, text=f"Error executing tool {name}")


def write_everything(config: Config, secret: str, planted_forms: list[str], root: Path) -> dict[str, str]:
    """Run the outcomes through oracles, findings, redaction and every writer; the outputs by name."""
    canaries = canary_environment(7)
    redact = redactor_for(ServerSettings.of(config), canaries)
    oracles = Oracles(slow_s=2.0, scanner=SecretScanner(config.secret_patterns, canaries), redact=redact)
    found = FindingSet(config.severity, redact)
    process = ServerProcess(StdioSpec(sys.executable, (), {}, None), redact)
    trace_path = root / "trace.jsonl"
    tracer = TraceWriter(trace_path, redact)
    console_out = StringIO()
    reporter = ConsoleReporter(Console(file=console_out, width=160, highlight=False), redact=redact)
    names: list[str] = []
    for form in planted_forms:
        for name, at, outcome in calls(form, process):
            arguments = {"n": at}
            repro = Repro(seed=7, case_index=at, arguments=arguments, transport="stdio")
            observations = oracles.observe(arguments, True, outcome)
            for observation in observations:
                found.add(observation, name, repro)
            names.append(name)
            tracer(CallFinished(name, at, arguments, True, "conform", outcome, len(observations), 1, 1, 0.1))
    tracer.close()
    findings = tuple(f for f, _ in found.items())
    assert len(findings) > len(names) // 2, "the planted outcomes must make findings, or nothing is tested"
    for finding in findings:
        reporter(FindingTriaged(finding))
    report = RunReport(
        version="0.0.0",
        target=target_summary(ServerSettings.of(config), None, redact),
        seed=7,
        seed_source="test",
        budget_s=1.0,
        duration_s=1.0,
        calls=len(names),
        mode="mixed",
        fail_on=Severity.LOW,
        entries=tuple(SurfaceEntry(Surface.TOOL, n, Status.FUZZED, None, 1) for n in dict.fromkeys(names)),
        findings=findings,
        verdict=Verdict.FAIL,
        resources=(f"file:///{FILLER * 3}{secret}",),
        prompts=(f"p{secret}",),
    )
    report = redact_report(report, redact)
    json_report.write(report, config.out_dir)
    write_sarif(report, root, config.out_dir)
    write_junit(report, root, config.out_dir)
    write_summary(report, root, config.out_dir)
    reporter.summary(report)
    baseline_console = StringIO()
    baseline_command("accept", config, Console(file=baseline_console, width=160, highlight=False))
    baseline_command("list", config, Console(file=baseline_console, width=160, highlight=False))
    outputs = {path.name: path.read_text(encoding="utf-8") for path in config.out_dir.iterdir()}
    outputs |= {f"baseline/{p.name}": p.read_text(encoding="utf-8") for p in config.baseline_dir.iterdir()}
    outputs["annotations"] = "\n".join(annotations.annotations(report, root))
    outputs["trace"] = trace_path.read_text(encoding="utf-8")
    outputs["console"] = console_out.getvalue()
    outputs["baseline console"] = baseline_console.getvalue()
    assert len([k for k in outputs if k.startswith("baseline/")]) == len(findings)
    return outputs


def assert_no_piece(outputs: dict[str, str], *secrets: str) -> None:
    for secret in secrets:
        for where, text in outputs.items():
            leaked = sorted(p for p in pieces(secret) if p in text)
            assert not leaked, f"{where} holds {leaked[:3]} of {secret!r}"


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32), which=st.integers(0, 2**16))
def test_no_piece_of_a_planted_secret_reaches_any_output(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, seed: int, which: int
) -> None:
    # Durability is not what is tested here, and a few hundred baseline files each fsynced are slow.
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    secret = make_secret(seed)
    forms = sorted(encodings(secret) - {secret})
    encoded = forms[which % len(forms)]
    root = tmp_path_factory.mktemp("run")
    outputs = write_everything(config_for(secret, root), secret, [secret, encoded], root)
    assert_no_piece(outputs, secret, encoded)


def test_the_target_summary_hides_expanded_values() -> None:
    secret = make_secret(1)
    config = Config(
        target=TargetConfig(
            kind=TargetKind.HTTP, url=f"https://user:{secret}@mcp.example/mcp?t={secret}", headers={"X-Key": secret}
        )
    )
    summary: TargetSummary = target_summary(
        ServerSettings.of(config), None, redactor_for(ServerSettings.of(config), {})
    )
    assert summary.url is not None and secret not in summary.url and "[REDACTED]" in summary.url


def test_a_password_in_the_url_is_a_secret_without_being_configured_elsewhere() -> None:
    config = Config(target=TargetConfig(kind=TargetKind.HTTP, url="https://bot:Pa55w0rd-x@mcp.example/mcp"))
    assert redactor_for(ServerSettings.of(config), {}).text("connect https://bot:Pa55w0rd-x@mcp.example/mcp") == (
        "connect https://bot:[REDACTED]@mcp.example/mcp"
    )
