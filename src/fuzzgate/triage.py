"""From observations to findings: fingerprint, merge, redact, and confirm on fresh servers.

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
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import anyio

from fuzzgate.check import Observation, Oracles
from fuzzgate.check.secrets import Redactor
from fuzzgate.config.model import Config
from fuzzgate.errors import TargetError
from fuzzgate.findings import Details, Finding, Kind, Repro, Severity, Surface
from fuzzgate.target.connection import call_tool, open_connection

FINGERPRINT_VERSION = "fuzzgate/1"
FINGERPRINT_CHARS = 20
REPLAYS_IN_PARALLEL = 4


def fingerprint(kind: Kind, surface: Surface, name: str, signature: tuple[str, ...]) -> str:
    material = "\x1f".join((FINGERPRINT_VERSION, kind.value, surface.value, name, *signature))
    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()[:FINGERPRINT_CHARS]


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
        redact = self._redact
        details = observation.details
        finding = Finding(
            kind=observation.kind,
            severity=self._severity.get(observation.kind, Severity.HIGH),
            surface=Surface.TOOL,
            name=name,
            message=redact.text(observation.message),
            fingerprint=fingerprint(observation.kind, Surface.TOOL, name, observation.signature),
            repro=repro,
            details=Details(
                error=redact(details.error),
                stderr=redact(details.stderr),
                frames=details.frames,
                location=details.location,
            ),
        )
        hit = self._hits.get(finding.fingerprint)
        if hit is None:
            self._hits[finding.fingerprint] = _Hit(finding, observation.ambiguous)
        else:
            hit.finding = hit.finding.merged_with(finding)
            hit.ambiguous = hit.ambiguous and observation.ambiguous
        return self._hits[finding.fingerprint].finding

    def items(self) -> list[tuple[Finding, bool]]:
        return [(h.finding, h.ambiguous) for _, h in sorted(self._hits.items())]


async def replay_once(
    config: Config, oracles: Oracles, finding: Finding, extra_env: Mapping[str, str]
) -> tuple[bool, list[Observation]]:
    """Send the repro to a fresh server; whether the same bug showed again, and what was seen."""
    arguments: dict[str, Any] = finding.repro.arguments
    async with open_connection(config, extra_env=extra_env) as connection:
        outcome = await call_tool(connection, finding.name, arguments, config.target.timeout_ms / 1000)
    observations = oracles.observe(arguments, finding.repro.schema_valid, outcome)
    same = any(
        fingerprint(o.kind, finding.surface, finding.name, o.signature) == finding.fingerprint for o in observations
    )
    return same, observations


async def confirm(
    config: Config,
    oracles: Oracles,
    candidates: list[tuple[Finding, bool]],
    extra_env: Mapping[str, str],
    on_done: Callable[[Finding, bool], None],
) -> list[Finding]:
    """Replay each finding `config.replays` times on fresh servers and label it.

    A finding that fails every replay is confirmed; one that fails some is `flaky` and never fails
    a run; one that was only ever seen while other calls were in flight, and never fails alone,
    was most likely another call's symptom and is dropped.
    """
    results: dict[str, Finding] = {}
    # Replays are independent fresh servers; a few at once keeps triage short without starving the CPU.
    limiter = anyio.CapacityLimiter(REPLAYS_IN_PARALLEL)

    async def one(finding: Finding, ambiguous: bool) -> None:
        async with limiter:
            reproduced = attempts = 0
            for _ in range(config.replays):
                try:
                    same, _ = await replay_once(config, oracles, finding, extra_env)
                except TargetError:
                    break
                attempts += 1
                reproduced += same
        dropped = ambiguous and attempts > 0 and reproduced == 0
        labelled = replace(finding, replays=attempts, reproduced=reproduced, flaky=reproduced < attempts)
        if not dropped:
            results[finding.fingerprint] = labelled
        on_done(labelled, dropped)

    async with anyio.create_task_group() as tg:
        for finding, ambiguous in candidates:
            tg.start_soon(one, finding, ambiguous)
    return [results[fp] for fp in sorted(results)]
