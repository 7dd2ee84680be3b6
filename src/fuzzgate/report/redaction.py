"""The last redaction pass, on a run's results just before anything is written from them.

The oracles redact what they observe at the source. This pass redacts every string of a `RunReport`
or `Finding` once more, whatever field it sits in: tool, resource and prompt names (the server's
words), the target's command line and URL (which may hold `${VAR}` expansions), messages and
evidence, and any field added later. Left as they are: fingerprints and baseline states (they are
keys, and a hex fingerprint could contain a short secret by chance) and repros (fuzzgate's own
requests; a redacted argument would no longer reproduce the bug).
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass, replace
from enum import Enum
from typing import Any

from fuzzgate.check.secrets import Redactor
from fuzzgate.findings import Finding
from fuzzgate.results import RunReport

_KEPT_FIELDS = frozenset({"fingerprint", "repro", "states"})


def _redacted(value: Any, redact: Redactor) -> Any:
    if isinstance(value, Enum):
        return value
    if isinstance(value, str):
        return redact.text(value)
    if isinstance(value, tuple):
        return tuple(_redacted(item, redact) for item in value)
    if isinstance(value, list):
        return [_redacted(item, redact) for item in value]
    if is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: _redacted(getattr(value, f.name), redact) for f in fields(value) if f.name not in _KEPT_FIELDS
        }
        return replace(value, **changes)
    return value


def redact_finding(finding: Finding, redact: Redactor) -> Finding:
    redacted: Finding = _redacted(finding, redact)
    return redacted


def redact_report(report: RunReport, redact: Redactor) -> RunReport:
    redacted: RunReport = _redacted(report, redact)
    return redacted
