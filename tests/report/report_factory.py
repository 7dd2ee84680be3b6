"""Run reports built in code that cover every case the writers handle."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from fuzzgate.model.findings import Details, Finding, Kind, Repro, Severity, Surface
from fuzzgate.record.results import BaselineState, RunReport, Status, SurfaceEntry, TargetSummary, Verdict

SECRET = "sk-live-7f3a9c1e5b2d"
"""A credential the server's environment holds; no output may contain it."""


def make_finding(
    fingerprint: str,
    *,
    kind: Kind = Kind.CRASH,
    severity: Severity = Severity.CRITICAL,
    surface: Surface = Surface.TOOL,
    name: str = "divide",
    message: str = "ZeroDivisionError: division by zero",
    arguments: dict[str, object] | None = None,
    location: tuple[str, int] | None = None,
    stderr: str | None = None,
    flaky: bool = False,
) -> Finding:
    return Finding(
        kind=kind,
        severity=severity,
        surface=surface,
        name=name,
        message=message,
        fingerprint=fingerprint,
        repro=Repro(seed=42, case_index=7, arguments=arguments or {"a": 1, "b": 0}, transport="stdio"),
        details=Details(
            error=message,
            stderr=stderr,
            frames=("server.py:12 in divide",),
            location=location,
        ),
        count=3,
        replays=3,
        reproduced=1 if flaky else 3,
        flaky=flaky,
    )


class Sample:
    """The findings of `sample_report`, by role."""

    def __init__(self, repo: Path) -> None:
        self.crash_in_repo = make_finding(
            "fp-crash",
            location=(str(repo / "server.py"), 12),
            stderr="Traceback (most recent call last):\n  File server.py, line 12\nZeroDivisionError",
        )
        self.internal_outside = make_finding(
            "fp-internal",
            kind=Kind.INTERNAL_ERROR,
            severity=Severity.HIGH,
            name="echo",
            message="JSON-RPC error -32603: Expecting value: line 1 column 1, char 0 | <b>bold</b> `x`",
            arguments={"text": "\x00"},
            location=("/usr/lib/python3.11/json/decoder.py", 355),
        )
        self.flaky_new = make_finding(
            "fp-flaky",
            kind=Kind.HANG,
            severity=Severity.HIGH,
            name="echo",
            message="no reply in 5000 ms",
            flaky=True,
        )
        self.slow_new = make_finding(
            "fp-slow", kind=Kind.SLOW, severity=Severity.LOW, name="divide", message="answered after 2.5 s"
        )
        self.known = make_finding(
            "fp-known",
            kind=Kind.SCHEMA_VIOLATION,
            severity=Severity.MEDIUM,
            name="echo",
            message="structuredContent.length: expected integer",
        )
        self.known_flaky = make_finding(
            "fp-known-flaky",
            kind=Kind.HANG,
            severity=Severity.HIGH,
            name="divide",
            message="no reply",
            flaky=True,
        )
        self.prompt_new = make_finding(
            "fp-prompt",
            kind=Kind.PROTOCOL_ERROR,
            severity=Severity.HIGH,
            surface=Surface.PROMPT,
            name="summarize",
            message="non-JSON line on stdout: 'debug: hello'",
        )
        self.fixed = make_finding(
            "fp-fixed",
            kind=Kind.SECRET_LEAK,
            severity=Severity.CRITICAL,
            name="lookup",
            message="response contains [REDACTED]",
            location=("server.py", 40),
        )

    @property
    def findings(self) -> tuple[Finding, ...]:
        return (
            self.crash_in_repo,
            self.internal_outside,
            self.flaky_new,
            self.slow_new,
            self.known,
            self.known_flaky,
            self.prompt_new,
        )

    @property
    def gating(self) -> list[Finding]:
        return [self.crash_in_repo, self.internal_outside, self.prompt_new]


def sample_report(repo: Path, sample: Sample | None = None, **changes: object) -> RunReport:
    sample = sample or Sample(repo)
    states = {f.fingerprint: BaselineState.NEW for f in sample.findings}
    states[sample.known.fingerprint] = BaselineState.KNOWN
    states[sample.known_flaky.fingerprint] = BaselineState.KNOWN
    states[sample.fixed.fingerprint] = BaselineState.FIXED
    report = RunReport(
        version="0.1.0",
        target=TargetSummary(
            name="calc",
            kind="stdio",
            command="python",
            args=("server.py",),
            protocol_version="2025-11-25",
            server_name="calc-server",
            server_version="1.2.0",
        ),
        seed=123456789,
        seed_source="commit 1a2b3c4",
        budget_s=60.0,
        duration_s=58.25,
        calls=2048,
        mode="mixed",
        fail_on=Severity.MEDIUM,
        entries=(
            SurfaceEntry(Surface.TOOL, "divide", Status.FUZZED, cases=400, probes_planned=16, probes_sent=16),
            SurfaceEntry(Surface.TOOL, "echo", Status.FUZZED, cases=380, probes_planned=16, probes_sent=9),
            SurfaceEntry(Surface.TOOL, "lookup", Status.FUZZED, cases=390),
            SurfaceEntry(Surface.TOOL, "delete_all", Status.BLOCKED, reason="looks destructive (matches 'delete')"),
            SurfaceEntry(Surface.TOOL, "upload", Status.SKIPPED, reason="excluded by --exclude upload"),
            SurfaceEntry(Surface.RESOURCE, "file:///{path}", Status.FUZZED, cases=50),
            SurfaceEntry(Surface.PROMPT, "summarize", Status.FUZZED, cases=40),
        ),
        findings=sample.findings,
        verdict=Verdict.FAIL,
        states=states,
        fixed=(sample.fixed,),
        config_path="fuzzgate.toml",
        target_line=3,
    )
    return replace(report, **changes)  # type: ignore[arg-type]


def clean_report(repo: Path) -> RunReport:
    """A passing run: nothing found, nothing in the baseline."""
    return sample_report(repo, findings=(), states={}, fixed=(), verdict=Verdict.PASS)
