"""What the engine and the verifier read of the configuration: small frozen views built once in `cli/`.

`EngineSettings.of(config)` is the engine's (and its other entry points'); `VerifySettings` is the
verifier's, derived from it (`EngineSettings.verification`) or built alone (`VerifySettings.of`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from fuzzgate.config.model import Config, TargetConfig
from fuzzgate.config.views import ServerSettings
from fuzzgate.engine.base_check import BaseRevision
from fuzzgate.model.findings import DEFAULT_SEVERITY, Kind, Severity
from fuzzgate.plan.focus import Changes
from fuzzgate.plan.selection import SelectionSettings
from fuzzgate.triage.minimize import MAX_TRIES


@dataclass(frozen=True, slots=True)
class VerifySettings:
    """What replaying findings on fresh servers reads: how to start one, which calls may be sent
    (`Admission`), and how many replays a finding gets."""

    server: ServerSettings
    selection: SelectionSettings
    replays: int
    severity: Mapping[Kind, Severity] = field(default_factory=lambda: dict(DEFAULT_SEVERITY))
    """`[severity]`: a shrunk call counts only if its symptom is rated as the finding is."""
    shrink_tries: int = MAX_TRIES
    """`[fuzzgate] shrink_tries`: fresh servers shrinking one finding's call may take, and as many
    for its sequence's calls; 0: none."""
    fail_on: Severity = Severity.MEDIUM
    """`fail_on`: a finding below it with only ambiguous evidence and no replay is not reported
    (`engine.labels`)."""

    @classmethod
    def of(cls, config: Config) -> VerifySettings:
        server, selection = ServerSettings.of(config), SelectionSettings.of(config)
        return cls(server, selection, config.replays, config.severity, config.shrink_tries, config.fail_on)

    @property
    def target(self) -> TargetConfig:
        return self.server.target


@dataclass(frozen=True, slots=True)
class EngineSettings:
    """What a run of the engine reads, besides its seed, time box and connector."""

    server: ServerSettings
    selection: SelectionSettings
    budget_s: float
    cases: int | None
    concurrency: int
    replays: int
    slow_ms: int
    severity: dict[Kind, Severity]
    fail_on: Severity
    """The severity `session.replay_call` gives the finding it replays."""
    coverage_sampling: int = 8
    """`[fuzzgate] coverage_sampling`: on a tool's coverage plateau, one call in this many is measured
    (`fuzzgate.learn.sampling`); 1 measures every call."""
    shrink_tries: int = MAX_TRIES
    """`[fuzzgate] shrink_tries` (`VerifySettings.shrink_tries`)."""
    base: BaseRevision | None = None
    """`--base DIR`: where new findings are replayed to tell pre-existing ones (`cli.run` sets it)."""
    changes: Changes | None = None
    """The files the change touched, when known (`cli.run` sets it): the tools reaching them get most
    of the budget (`fuzzgate.plan.focus`)."""

    @classmethod
    def of(cls, config: Config) -> EngineSettings:
        return cls(
            server=ServerSettings.of(config),
            selection=SelectionSettings.of(config),
            budget_s=config.budget_s,
            cases=config.cases,
            concurrency=config.concurrency,
            replays=config.replays,
            slow_ms=config.slow_ms,
            severity=config.severity,
            fail_on=config.fail_on,
            coverage_sampling=config.coverage_sampling,
            shrink_tries=config.shrink_tries,
        )

    @property
    def target(self) -> TargetConfig:
        return self.server.target

    @property
    def verification(self) -> VerifySettings:
        return VerifySettings(
            self.server, self.selection, self.replays, self.severity, self.shrink_tries, self.fail_on
        )
