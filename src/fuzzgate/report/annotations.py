"""GitHub workflow-command annotations: one `::error` line per finding that fails the gate, so
each shows on the file and line the SARIF report points at.

A finding's name and message are the server's words, so besides the runner's own escapes the
older `##[` command form, which the runner reads anywhere in a line, is broken in them too.
"""

# No `from __future__ import annotations` here: this module's public function is called
# `annotations`, and every annotation below is valid at runtime on Python 3.11.

from pathlib import Path

from fuzzgate.model.commands import repro_command
from fuzzgate.model.findings import Finding
from fuzzgate.record.results import RunReport
from fuzzgate.report.locate import source_location
from fuzzgate.report.workflow_commands import neutralize_legacy


def escape_data(text: str) -> str:
    """Escape a workflow command's message (after `::`)."""
    return neutralize_legacy(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def escape_property(text: str) -> str:
    """Escape a workflow command's property value (`file=`, `title=`...)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(finding: Finding, report: RunReport, repo_root: Path) -> str:
    """The `::error` line for one finding."""
    where = source_location(finding, report, repo_root)
    title = f"fuzzgate: {finding.kind.value} ({finding.severity.value}) in {finding.surface.value} {finding.name}"
    message = f"{finding.message}\nReproduce: {repro_command(finding, report.config_path, report.command_flags)}"
    properties = {"file": where.path, "line": str(where.line), "title": title}
    props = ",".join(f"{key}={escape_property(value)}" for key, value in properties.items())
    # Once more on the whole line: a `##[` must not form where two escaped parts meet either.
    return neutralize_legacy(f"::error {props}::{escape_data(message)}")


def annotations(report: RunReport, repo_root: Path) -> list[str]:
    """One annotation per new gating finding (new, confirmed, at or above fail-on), in report order."""
    return [annotation(finding, report, repo_root) for finding in report.gating()]
