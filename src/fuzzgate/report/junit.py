"""JUnit XML, as test-report actions read it: the target is a test suite, each tool, resource
template and prompt a test case.

A test case fails when the run found a finding on it that fails the gate (new, confirmed, at or
above fail-on): the same findings that make the verdict "fail", so the report and the exit code
agree. A test case carries at most one `<failure>`: readers disagree on how to count several
(junit-xml counts failing cases, junitparser counts elements), so when one tool has several
gating findings the first (most severe) gives the message and all of them are in the body.
Known, flaky and below-threshold findings go to `system-out`; blocked and skipped entries are
`<skipped>` with their reason (a failure, should one have findings, takes precedence).
`file`/`line` are the location the SARIF report uses. `fuzzgate merge` of several targets writes
one `<testsuites>` with a suite per target (`render_junit_many`).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from junit_xml import TestCase, TestSuite, to_xml_report_string

from fuzzgate.check.secrets import REDACTED
from fuzzgate.model.commands import repro_command, sequence_text
from fuzzgate.model.files import write_atomic
from fuzzgate.model.findings import Cause, Finding, Surface
from fuzzgate.record.results import BaselineState, RunReport, Status, SurfaceEntry
from fuzzgate.report.locate import source_location

JUNIT_FILENAME = "junit.xml"

_MESSAGE_LIMIT = 200
_STDERR_LIMIT = 4000


def case_name(surface: Surface, name: str) -> str:
    """The test case name: a tool's name as is, a resource template or prompt prefixed by its kind
    (a tool and a prompt may share a name)."""
    return name if surface is Surface.TOOL else f"{surface.value} {name}"


def render_junit(report: RunReport, repo_root: Path) -> str:
    """The JUnit XML for `report`, file paths relative to `repo_root`."""
    return render_junit_many([report], repo_root)


def render_junit_many(reports: list[RunReport], repo_root: Path) -> str:
    """The JUnit XML with a test suite per report (per target)."""
    xml: str = to_xml_report_string([_suite(r, repo_root) for r in reports], prettyprint=True, encoding="utf-8")
    return xml


def _suite(report: RunReport, repo_root: Path) -> TestSuite:
    by_subject: dict[tuple[Surface, str], list[Finding]] = defaultdict(list)
    for finding in report.findings:
        by_subject[(finding.surface, finding.name)].append(finding)
    gating = {f.fingerprint for f in report.gating()}
    cases = [
        _case(report, repo_root, gating, entry, by_subject.pop((entry.surface, entry.name), []))
        for entry in report.entries
    ]
    # Findings on something the entries do not list (a concrete resource URI, say) still get a case.
    cases += [
        _case(report, repo_root, gating, SurfaceEntry(surface, name, Status.FUZZED), findings)
        for (surface, name), findings in by_subject.items()
    ]
    return TestSuite(
        report.target.name,
        cases,
        properties={
            "fuzzgate.version": report.version,
            "seed": str(report.seed),
            "seed_source": report.seed_source,
            "mode": report.mode,
            "fail_on": report.fail_on.value,
            "budget_s": f"{report.budget_s:g}",
            "calls": str(report.calls),
            "verdict": report.verdict.value,
        },
    )


def _case(
    report: RunReport, repo_root: Path, gating: set[str], entry: SurfaceEntry, findings: list[Finding]
) -> TestCase:
    failing = sorted((f for f in findings if f.fingerprint in gating), key=lambda f: -f.severity.rank)
    others = [f for f in findings if f.fingerprint not in gating]
    where = source_location(failing[0] if failing else (findings[0] if findings else None), report, repo_root)
    case = TestCase(
        case_name(entry.surface, entry.name),
        classname=report.target.name,
        file=where.path,
        line=str(where.line),
        stdout="\n\n".join(_note(report, f) for f in others) or None,
    )
    if failing:
        message = _one_line(failing[0])
        if len(failing) > 1:
            message += f" (+{len(failing) - 1} more)"
        case.add_failure_info(
            message=message,
            output="\n\n".join(_body(report, repo_root, f) for f in failing),
            failure_type=failing[0].kind.value,
        )
    elif entry.status is not Status.FUZZED:
        case.add_skipped_info(message=f"{entry.status.value}: {entry.reason or _DEFAULT_REASON[entry.status]}")
    return case


_DEFAULT_REASON = {
    Status.BLOCKED: "looks destructive and is not allowlisted, so it was never called",
    Status.SKIPPED: "not fuzzed in this run",
}


def _one_line(finding: Finding) -> str:
    text = " ".join(f"{finding.kind.value} ({finding.severity.value}): {finding.message}".split())
    return text if len(text) <= _MESSAGE_LIMIT else text[: _MESSAGE_LIMIT - 1] + "…"


def _body(report: RunReport, repo_root: Path, finding: Finding) -> str:
    where = source_location(finding, report, repo_root)
    lines = [
        _one_line(finding),
        f"reproduce: {repro_command(finding, report.config_path, report.command_flags)}",
        *([f"sequence: {sequence}"] if (sequence := sequence_text(finding)) else []),
        *([f"repro redacted: a secret it sent is written {REDACTED}"] if finding.repro.redacted else []),
        f"fingerprint: {finding.fingerprint}",
        f"location: {where.path}:{where.line}",
        (
            "replays: none, the budget ran out first (unconfirmed)"
            if finding.unconfirmed
            else f"replays: reproduced {finding.reproduced} of {finding.replays}"
        )
        + f"; hit {finding.count} time(s)",
    ]
    details = finding.details
    if details.error:
        lines.append(f"error: {details.error}")
    if details.frames:
        lines += ["frames:", *(f"  {frame}" for frame in details.frames)]
    if details.stderr:
        lines += ["stderr (last lines):", _tail(details.stderr, _STDERR_LIMIT)]
    return "\n".join(lines)


def _note(report: RunReport, finding: Finding) -> str:
    state = report.state_of(finding)
    if finding.flaky:
        why = f"flaky, reproduced {finding.reproduced} of {finding.replays} replays; never fails the run"
    elif state is BaselineState.KNOWN:
        why = "known, in the baseline"
    elif state is BaselineState.PRE_EXISTING:
        why = "pre-existing, fails on the base revision too; never fails the run"
    elif finding.cause is Cause.SDK and not report.fail_on_sdk:
        why = "new, caused by the server's SDK; fails no gate without fail_on_sdk"
    else:
        why = f"new, below fail-on {report.fail_on.value}"
    return (
        f"[{why}] {_one_line(finding)}\nreproduce: {repro_command(finding, report.config_path, report.command_flags)}"
    )


def _tail(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"[… {len(text) - limit} earlier characters cut]\n{text[-limit:]}"


def write_junit(report: RunReport, repo_root: Path, out_dir: Path) -> Path:
    """Write `junit.xml` into `out_dir` atomically; returns its path."""
    path = out_dir / JUNIT_FILENAME
    write_atomic(path, render_junit(report, repo_root))
    return path
