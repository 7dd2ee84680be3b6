"""SARIF 2.1.0 for GitHub code scanning: one run, a rule per finding kind, a result per finding.

Choices, and why:

- **Which findings.** Results are this run's new and known findings. Fixed baseline entries are
  left out rather than sent as `baselineState: "absent"`: code scanning ignores `baselineState`,
  so an absent result would keep its alert open, while a result missing from the latest upload
  of a category is what closes an alert.
- **baselineState.** new -> `"new"`, known -> `"unchanged"`.
- **Flaky findings** (failed some replays, not all) never fail a run, so they never open an
  alert: a new flaky finding is left out. A known one stays in, at level `note` with the tag
  `flaky`, so its alert does not close and reopen as the replays come and go.
- **Level** comes from the finding's own severity (critical/high -> error, medium -> warning,
  low -> note), as does `properties.security-severity` on the result. Code scanning reads
  `security-severity` from the rule only; a rule carries its kind's default severity.
- **Location.** Code scanning rejects a whole upload if one result has no location, so every
  result has exactly one, chosen by `report.locate.source_location` (the JUnit report, the job
  summary and the annotations use the same one). URIs are relative to the repository root and
  percent-encoded, without `uriBaseId` (code scanning does not read `originalUriBaseIds`).
- **Category.** `automationDetails.id` is `fuzzgate/<target>/`, so several servers fuzzed in one
  repository keep separate alert sets instead of replacing each other's. `fuzzgate merge` writes one
  log with a run per target (`sarif_log_many`), each its own category, within GitHub's limits of
  `MAX_RUNS` runs per upload and `MAX_RESULTS` results per run: past them it refuses (an upload
  GitHub rejects would close no alert and open none).
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jschema_to_python.to_json import to_json
from sarif_om import (
    ArtifactLocation,
    Location,
    Message,
    MultiformatMessageString,
    PhysicalLocation,
    Region,
    ReportingConfiguration,
    ReportingDescriptor,
    Result,
    Run,
    RunAutomationDetails,
    SarifLog,
    Tool,
    ToolComponent,
)

from fuzzgate.model.commands import repro_command
from fuzzgate.model.errors import ReportError
from fuzzgate.model.files import write_atomic
from fuzzgate.model.findings import DEFAULT_SEVERITY, Finding, JSONValue, Kind, Severity
from fuzzgate.record.results import BaselineState, RunReport
from fuzzgate.report.locate import source_location

SARIF_FILENAME = "fuzzgate.sarif"
SARIF_SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/fuzzgate/fuzzgate"
MAX_RUNS = 20
MAX_RESULTS = 25_000
"""GitHub code scanning's limits for one upload: runs per file, results per run."""


@dataclass(frozen=True, slots=True)
class _RuleText:
    name: str
    short: str
    full: str
    fix: str
    tags: tuple[str, ...]
    precision: str


_RULES: dict[Kind, _RuleText] = {
    Kind.CRASH: _RuleText(
        name="ServerCrash",
        short="The MCP server process died or dropped the connection while handling a request.",
        full=(
            "A request made the server exit or close its transport instead of answering. Every client "
            "connected to the server loses its session, so one bad input from a model or a user takes "
            "the server down for everyone."
        ),
        fix=(
            "Find the exception or signal in the server's stderr, handle the input that caused it, and "
            "return a tool error result (`isError: true`) instead of letting the process exit."
        ),
        tags=("availability", "external/cwe/cwe-248"),
        precision="very-high",
    ),
    Kind.HANG: _RuleText(
        name="RequestHang",
        short="The MCP server did not answer a request within the timeout.",
        full=(
            "A request got no response within the configured timeout. A request that never finishes "
            "ties up the client and often the server's worker, and repeated ones exhaust it."
        ),
        fix=(
            "Bound loops, retries and I/O by time and by input size; reject inputs too large to "
            "process; make blocking calls asynchronous or give them timeouts."
        ),
        tags=("availability", "external/cwe/cwe-400"),
        precision="high",
    ),
    Kind.PROTOCOL_ERROR: _RuleText(
        name="ProtocolViolation",
        short="The MCP server sent something that is not valid JSON-RPC for the conversation.",
        full=(
            "The server wrote a message that breaks the protocol: text that is not JSON, a malformed "
            "JSON-RPC message, a response with the wrong id, or an oversized message. Clients drop "
            "the connection or mismatch responses when this happens."
        ),
        fix=(
            "On stdio, write logs to stderr and nothing but protocol messages to stdout; answer each "
            "request once, with its id; use the MCP SDK's transport instead of writing messages by hand."
        ),
        tags=("reliability", "external/cwe/cwe-684"),
        precision="high",
    ),
    Kind.INTERNAL_ERROR: _RuleText(
        name="InternalError",
        short="The MCP server answered a request with a JSON-RPC error from an unhandled failure.",
        full=(
            "Instead of a result, or a tool error result explaining what was wrong with the input, the "
            "server returned a JSON-RPC error such as -32603 (internal error). This usually means an "
            "exception escaped the handler, and its text may reveal internals to the client."
        ),
        fix=(
            "Validate the arguments the handler receives and catch the failure at the tool boundary; "
            "return `isError: true` with a short message the model can act on."
        ),
        tags=("reliability", "external/cwe/cwe-755"),
        precision="high",
    ),
    Kind.SCHEMA_VIOLATION: _RuleText(
        name="OutputSchemaViolation",
        short="A result did not match the output schema the server declared.",
        full=(
            "The tool declared an output schema, and the structured content it returned does not "
            "conform to it. Clients that rely on the declared shape fail or misread the result."
        ),
        fix=(
            "Make the result conform to the declared schema for every input, including edge cases "
            "(empty, missing and null values), or correct the schema."
        ),
        tags=("correctness", "external/cwe/cwe-684"),
        precision="high",
    ),
    Kind.SECRET_LEAK: _RuleText(
        name="SecretLeak",
        short="A response contained a secret from the server's environment or matching a secret pattern.",
        full=(
            "Something the server sent back (a result, an error message) contains a value from the "
            "server's configured secrets or matches a secret pattern. Anything a server returns can "
            "end up in a model's context, its logs and its output."
        ),
        fix=(
            "Do not echo configuration, environment variables, headers or raw exception text to the "
            "client; return a generic message and log the details on the server side."
        ),
        tags=("confidentiality", "external/cwe/cwe-200"),
        precision="high",
    ),
    Kind.SLOW: _RuleText(
        name="SlowResponse",
        short="The MCP server took longer than the configured limit to answer a request.",
        full=(
            "A request was answered, but only after the slow-response threshold. Inputs that make a "
            "server slow are a cheap way to exhaust it."
        ),
        fix="Profile the request with the reproduced input and bound the work it does by input size.",
        tags=("performance", "external/cwe/cwe-400"),
        precision="medium",
    ),
    Kind.SCOPE_ESCAPE: _RuleText(
        name="ScopeEscape",
        short="The MCP server acted on a path outside the directories it was given.",
        full=(
            "While answering a request, the server created, changed or deleted something outside its "
            "scope (the directories named on its command line and its working directory), or answered "
            "with the content of a file planted outside it. A client or a prompt-injected model can "
            "then read or write anywhere the server's user can."
        ),
        fix=(
            "Resolve every path argument (following symbolic links) and refuse it unless it lies inside "
            "an allowed directory; do not create parent directories outside them."
        ),
        tags=("confidentiality", "integrity", "external/cwe/cwe-22"),
        precision="high",
    ),
    Kind.INJECTION: _RuleText(
        name="ArgumentInjection",
        short="An argument was run as a command-line option or a shell command.",
        full=(
            "fuzzgate sent an argument that names a file only an injected command-line option (such "
            "as --output=) or shell fragment (such as $(...)) would create, and the file appeared: "
            "the server passes arguments to a subprocess without separating options from operands, "
            "or through a shell."
        ),
        fix=(
            "Run subprocesses without a shell, with arguments as a list, and put `--` before any "
            "argument that comes from the client; reject values that start with '-' where an operand is expected."
        ),
        tags=("integrity", "external/cwe/cwe-88", "external/cwe/cwe-78"),
        precision="high",
    ),
    Kind.SSRF: _RuleText(
        name="ServerSideRequestForgery",
        short="The MCP server fetched a URL its caller gave it, reaching addresses only it can reach.",
        full=(
            "fuzzgate gave a URL-like argument a canary URL pointing at the server's own loopback (as "
            "127.0.0.1, its decimal form, ::1, localhost, or through a redirect) or a file:// canary, "
            "and the server requested it or answered with its content. A client or a prompt-injected "
            "model can then make the server reach internal services, cloud metadata endpoints or "
            "local files on its behalf."
        ),
        fix=(
            "Resolve the URL's host and refuse loopback, private, link-local and other internal addresses "
            "(after every redirect, or do not follow redirects), and allow only the schemes the tool needs."
        ),
        tags=("confidentiality", "external/cwe/cwe-918"),
        precision="high",
    ),
    Kind.OUT_OF_MEMORY: _RuleText(
        name="MemoryExhaustion",
        short="The MCP server's memory grew past the limit while handling a request.",
        full=(
            "While a request was pending, the resident memory of the server's processes grew past the "
            "configured limit, and fuzzgate stopped the server. A client, or a model it runs, can send "
            "the same input to exhaust the memory of the machine the server runs on, taking down the "
            "server and whatever shares the machine with it."
        ),
        fix=(
            "Bound what the input controls: sizes, counts, repetitions, recursion depth and the "
            "amount read or buffered; reject inputs past those bounds with a tool error result."
        ),
        tags=("availability", "external/cwe/cwe-400", "external/cwe/cwe-789"),
        precision="high",
    ),
}

_SECURITY_SEVERITY: dict[Severity, str] = {
    Severity.CRITICAL: "9.5",
    Severity.HIGH: "8.0",
    Severity.MEDIUM: "5.5",
    Severity.LOW: "3.0",
}

_LEVEL: dict[Severity, str] = {
    Severity.CRITICAL: "error",
    Severity.HIGH: "error",
    Severity.MEDIUM: "warning",
    Severity.LOW: "note",
}

_REPRODUCE_TEXT = (
    "Each alert's message ends with a `fuzzgate replay` command that sends the failing request to "
    "the server again; run it from the repository root. `fuzzgate replay FINGERPRINT` replays a "
    "finding recorded in the baseline or the last report."
)


def _rule(kind: Kind) -> Any:
    text = _RULES[kind]
    severity = DEFAULT_SEVERITY[kind]
    help_text = f"{text.full}\n\nHow to fix: {text.fix}\n\nHow to reproduce: {_REPRODUCE_TEXT}"
    help_markdown = (
        f"**{text.short}**\n\n{text.full}\n\n"
        f"### How to fix\n\n{text.fix}\n\n"
        f"### How to reproduce\n\n{_REPRODUCE_TEXT}\n\n"
        f"Default severity: {severity.value}. Findings that fail some replays are reported as flaky "
        f"and never fail a run."
    )
    return ReportingDescriptor(
        id=kind.value,
        name=text.name,
        short_description=MultiformatMessageString(text=text.short),
        full_description=MultiformatMessageString(text=text.full),
        help=MultiformatMessageString(text=help_text, markdown=help_markdown),
        default_configuration=ReportingConfiguration(level=_LEVEL[severity]),
        properties={
            "tags": ["security", "mcp", "fuzzing", *text.tags],
            "precision": text.precision,
            "security-severity": _SECURITY_SEVERITY[severity],
        },
    )


def reported_findings(report: RunReport) -> list[Finding]:
    """The findings that become SARIF results: new, pre-existing and known, minus new flaky ones."""
    shown = (BaselineState.KNOWN, BaselineState.PRE_EXISTING)
    return [
        f
        for f in report.findings
        if report.state_of(f) in shown or (report.state_of(f) is BaselineState.NEW and not f.flaky)
    ]


def _result(finding: Finding, report: RunReport, repo_root: Path, rule_index: int) -> Any:
    command = repro_command(finding, report.config_path, report.command_flags)
    where = source_location(finding, report, repo_root)
    state = report.state_of(finding)
    # SARIF's baselineState has no word for "on the base revision": unchanged, as code scanning
    # then shows it as an existing alert, with fuzzgate's own state in the properties.
    known = state in (BaselineState.KNOWN, BaselineState.PRE_EXISTING)
    properties: dict[str, JSONValue] = {
        "fingerprint": finding.fingerprint,
        "kind": finding.kind.value,
        "severity": finding.severity.value,
        "security-severity": _SECURITY_SEVERITY[finding.severity],
        "surface": finding.surface.value,
        "name": finding.name,
        "repro": command,
        "sequence": [step.to_json() for step in finding.repro.prefix],
        "flaky": finding.flaky,
        "unconfirmed": finding.unconfirmed,
        "count": finding.count,
        "replays": finding.replays,
        "reproduced": finding.reproduced,
        "baseline_state": state.value,
    }
    if finding.repro.redacted:
        properties["repro_redacted"] = True
    if finding.flaky:
        properties["tags"] = ["flaky"]
    return Result(
        rule_id=finding.kind.value,
        rule_index=rule_index,
        level="note" if finding.flaky else _LEVEL[finding.severity],
        message=Message(text=f"{finding.surface.value} {finding.name}: {finding.message}\nReproduce: {command}"),
        baseline_state="unchanged" if known else "new",
        locations=[
            Location(
                physical_location=PhysicalLocation(
                    artifact_location=ArtifactLocation(uri=urllib.parse.quote(where.path)),
                    region=Region(start_line=where.line),
                )
            )
        ],
        partial_fingerprints={"primaryLocationLineHash": finding.fingerprint},
        fingerprints={"fuzzgate/v1": finding.fingerprint},
        properties=properties,
    )


def sarif_log(report: RunReport, repo_root: Path) -> Any:
    """The run as a `sarif_om.SarifLog`."""
    return SarifLog(version="2.1.0", schema_uri=SARIF_SCHEMA_URI, runs=[_run(report, repo_root)])


def sarif_log_many(reports: list[RunReport], repo_root: Path) -> Any:
    """One log with a run per report (per target: each its own category). Raises `ReportError`
    past GitHub's limits (`MAX_RUNS`, `MAX_RESULTS`)."""
    if len(reports) > MAX_RUNS:
        raise ReportError(
            f"{len(reports)} targets make {len(reports)} SARIF runs; GitHub code scanning takes at most "
            f"{MAX_RUNS} per upload",
            hint=f"merge at most {MAX_RUNS} targets at a time and upload each SARIF file separately",
        )
    categories = [_category(report) for report in reports]
    if len(set(categories)) != len(categories):
        twice = sorted({c for c in categories if categories.count(c) > 1})
        raise ReportError(f"two runs would share the SARIF category {twice[0]}: each target needs its own name")
    for report in reports:
        results = len(reported_findings(report))
        if results > MAX_RESULTS:
            raise ReportError(
                f"target {report.target.name}: {results} SARIF results; GitHub code scanning takes at most "
                f"{MAX_RESULTS} per run",
                hint="accept the known findings into the baseline (`fuzzgate baseline accept`) or raise --fail-on",
            )
    return SarifLog(version="2.1.0", schema_uri=SARIF_SCHEMA_URI, runs=[_run(r, repo_root) for r in reports])


def _category(report: RunReport) -> str:
    return f"fuzzgate/{report.target.name}/"


def _run(report: RunReport, repo_root: Path) -> Any:
    kinds = list(Kind)
    return Run(
        tool=Tool(
            driver=ToolComponent(
                name="fuzzgate",
                version=report.version,
                semantic_version=report.version,
                information_uri=INFORMATION_URI,
                rules=[_rule(kind) for kind in kinds],
            )
        ),
        automation_details=RunAutomationDetails(id=_category(report)),
        results=[_result(f, report, repo_root, kinds.index(f.kind)) for f in reported_findings(report)],
        properties={
            "seed": report.seed,
            "seedSource": report.seed_source,
            "mode": report.mode,
            "failOn": report.fail_on.value,
            "verdict": report.verdict.value,
        },
    )


def render_sarif(report: RunReport, repo_root: Path) -> str:
    """The SARIF log for `report` as JSON text, paths relative to `repo_root`."""
    text: str = to_json(sarif_log(report, repo_root))
    return text + "\n"


def render_sarif_many(reports: list[RunReport], repo_root: Path) -> str:
    """The SARIF log with a run per report, as JSON text (`sarif_log_many`)."""
    text: str = to_json(sarif_log_many(reports, repo_root))
    return text + "\n"


def write_sarif(report: RunReport, repo_root: Path, out_dir: Path) -> Path:
    """Write `fuzzgate.sarif` into `out_dir` atomically; returns its path."""
    path = out_dir / SARIF_FILENAME
    write_atomic(path, render_sarif(report, repo_root))
    return path
