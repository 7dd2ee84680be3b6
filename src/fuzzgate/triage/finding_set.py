"""From observations to findings: fingerprint, merge and redact (confirmation on fresh servers is in `verify`).

Fingerprint normalization (also in docs/fingerprints.md): a fingerprint hashes the finding kind,
the surface, the tool name and a signature that describes the bug and never the payload:

- crash / internal_error with a traceback: the raising frame, the innermost outside libraries, as
  `file:function` (not its callers, its line or the exception type, which vary with the payload);
- crash without a traceback: how the process ended (`exit status 1`, `killed by SIGSEGV`);
- internal_error from a JSON-RPC error: the code and the message with numbers, quoted values,
  hex ids, UUIDs and paths replaced by placeholders;
- protocol_error: the anomaly (`non_json`, `invalid_message`, `wrong_id`, `oversized`);
- schema_violation: the failing keyword's path in the output schema, array indices as `*`;
- secret_leak: which pattern matched (`canary`, `github_token`, `custom:<regex>`);
- hang and slow: nothing more than kind and tool.

The hash and its versioned schemes live in `fuzzgate.triage.fingerprint`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from fuzzgate.check import Observation
from fuzzgate.check.secrets import Redactor
from fuzzgate.model.findings import SERVER_NAME, Cause, Details, Finding, Kind, Repro, Severity, Surface
from fuzzgate.triage.fingerprint import Signature, fingerprint

__all__ = ["FindingSet", "evidence", "fingerprint", "subject"]


def subject(observation: Observation, tool: str, surface: Surface = Surface.TOOL) -> tuple[Surface, str]:
    """What a finding is on: the tool (prompt, resource) called, or the server as a whole for a
    server-wide symptom."""
    return (Surface.SERVER, SERVER_NAME) if observation.server_wide else (surface, tool)


def _storable(signature: Signature, redact: Redactor) -> Signature | None:
    # A signature is payload-free by design, but an error message normalized into one may still
    # quote a secret; one the redactor would change is not kept, as a redacted one could not be
    # re-derived anyway.
    return signature if all(redact.text(part) == part for part in signature) else None


def evidence(observation: Observation, redact: Redactor) -> tuple[str, Details]:
    """The message and the evidence a finding of `observation` carries, redacted."""
    details = observation.details
    return redact.text(observation.message), replace(
        details, error=redact(details.error), stderr=redact(details.stderr)
    )


@dataclass(slots=True)
class _Hit:
    finding: Finding
    ambiguous: bool


class FindingSet:
    """Findings of one run keyed by fingerprint, each keeping its smallest repro and a count."""

    def __init__(self, severity: Mapping[Kind, Severity], redact: Redactor) -> None:
        self._severity = severity
        self._redact = redact
        self._hits: dict[str, _Hit] = {}

    def __len__(self) -> int:
        return len(self._hits)

    def add(self, observation: Observation, name: str, repro: Repro) -> Finding:
        """Record `observation` of a call to `name` (on `repro.surface`) sent as `repro`; the
        finding as it now stands."""
        redact = self._redact
        message, details = evidence(observation, redact)
        surface, subject_name = subject(observation, name, repro.surface)
        finding = Finding(
            kind=observation.kind,
            severity=self._severity_of(observation),
            surface=surface,
            name=subject_name,
            message=message,
            fingerprint=fingerprint(observation.kind, surface, subject_name, observation.signature),
            repro=replace(repro, tool=name) if observation.server_wide else repro,
            details=details,
            signature=_storable(observation.signature, redact),
            cause=observation.cause,
        )
        hit = self._hits.get(finding.fingerprint)
        if hit is None:
            self._hits[finding.fingerprint] = _Hit(finding, observation.ambiguous)
        else:
            hit.finding = hit.finding.merged_with(finding)
            hit.ambiguous = hit.ambiguous and observation.ambiguous
        return self._hits[finding.fingerprint].finding

    def _severity_of(self, observation: Observation) -> Severity:
        return severity_of(observation, self._severity)

    def items(self) -> list[tuple[Finding, bool]]:
        return [(h.finding, h.ambiguous) for _, h in sorted(self._hits.items())]


def severity_of(observation: Observation, configured: Mapping[Kind, Severity]) -> Severity:
    """The severity a symptom is reported at: its kind's `configured` one, except that the SDK's
    symptom is low whatever its kind (the server's author can only upgrade the SDK) and that a symptom
    the server survived (a caught exception, a call that alone hangs) has a ceiling."""
    if observation.cause is Cause.SDK:
        return Severity.LOW
    return observation.rated(configured.get(observation.kind, Severity.HIGH))
