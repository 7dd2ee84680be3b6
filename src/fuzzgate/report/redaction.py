"""The last redaction pass, on a run's results just before anything is written from them.

The oracles redact what they observe at the source. This pass redacts every string of a `RunReport`
or `Finding` once more, whatever field it sits in: tool, resource and prompt names (the server's
words), the target's command line and URL (which may hold `${VAR}` expansions), messages and
evidence, repros, and any field added later. Left as they are: fingerprints and baseline states
(they are keys, and a hex fingerprint could contain a short secret by chance).

A repro follows the corpus's rule: an entry holding a secret never leaves the run, and neither does
a repro as it was sent. Its every string (arguments and their keys, the values replies brought, the
names of the steps' tools) is redacted and the repro marked `redacted`; the run's own replays used
it before this pass, and a replay from disk rebinds the marker like any value a reply brought
(`triage.sequence.rebind`), so a secret the server handed out still replays.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass, replace
from enum import Enum
from typing import Any

from fuzzgate.check.secrets import Redactor
from fuzzgate.model.findings import Finding, Repro, Step
from fuzzgate.record.results import RunReport

_KEPT_FIELDS = frozenset({"fingerprint", "states"})


def _redacted(value: Any, redact: Redactor) -> Any:
    if isinstance(value, Enum):
        return value
    if isinstance(value, str):
        return redact.text(value)
    if isinstance(value, tuple):
        return tuple(_redacted(item, redact) for item in value)
    if isinstance(value, list):
        return [_redacted(item, redact) for item in value]
    if isinstance(value, Repro):
        return redact_repro(value, redact)
    if is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: _redacted(getattr(value, f.name), redact) for f in fields(value) if f.name not in _KEPT_FIELDS
        }
        return replace(value, **changes)
    return value


def redact_json(value: Any, redact: Redactor) -> Any:
    """A JSON value (a call's arguments) with every string in it, keys included, redacted."""
    if isinstance(value, str):
        return redact.text(value)
    if isinstance(value, list):
        return [redact_json(item, redact) for item in value]
    if isinstance(value, dict):
        return {redact.text(str(key)): redact_json(item, redact) for key, item in value.items()}
    return value


def _redacted_step(step: Step, redact: Redactor) -> Step:
    return replace(
        step,
        tool=redact.text(step.tool),
        arguments=redact_json(step.arguments, redact),
        produced=tuple(redact_json(value, redact) for value in step.produced),
    )


def redact_repro(repro: Repro, redact: Redactor) -> Repro:
    """`repro` with every secret replaced by `[REDACTED]`, and `redacted` set when one was (or was
    before: a baseline entry redacted by an earlier run stays marked)."""
    redacted = replace(
        repro,
        arguments=redact_json(repro.arguments, redact),
        prefix=tuple(_redacted_step(step, redact) for step in repro.prefix),
        tool=None if repro.tool is None else redact.text(repro.tool),
        workspace=None if repro.workspace is None else redact.text(repro.workspace),
    )
    # The arguments as fuzzing first sent them are kept for the record, never replayed: a secret
    # in them alone does not mark the repro (whose `redacted` says what a replay sends).
    original = None if repro.original_arguments is None else redact_json(repro.original_arguments, redact)
    return replace(
        redacted,
        redacted=repro.redacted or redacted != repro,
        original_arguments=original,
    )


def redact_finding(finding: Finding, redact: Redactor) -> Finding:
    redacted: Finding = _redacted(finding, redact)
    return redacted


def redact_report(report: RunReport, redact: Redactor) -> RunReport:
    redacted: RunReport = _redacted(report, redact)
    return redacted
