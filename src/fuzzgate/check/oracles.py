"""The oracles: every registered check run on one call's outcome."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fuzzgate.check.observation import Observation
from fuzzgate.check.registry import CallContext, Check, CheckEnv, registered_checks
from fuzzgate.check.sdk import ServerFacts
from fuzzgate.check.secrets import Redactor, SecretScanner
from fuzzgate.model.outcome import CallOutcome


class Oracles:
    """The checks of one run, with what they share (`CheckEnv`).

    `checks` defaults to every check registered when the oracles are built (all the built-in ones
    once `fuzzgate.check` is imported); a test may pass its own."""

    def __init__(
        self,
        *,
        slow_s: float,
        scanner: SecretScanner,
        redact: Redactor | None = None,
        checks: Iterable[Check] | None = None,
        probes: Mapping[str, Any] | None = None,
        canaries: Iterable[Any] = (),
        server: ServerFacts | None = None,
    ) -> None:
        self.env = CheckEnv(
            slow_s=slow_s,
            scanner=scanner,
            redact=redact if redact is not None else Redactor(()),
            probes=probes if probes is not None else {},
            canaries=tuple(canaries),
            server=server if server is not None else ServerFacts(),
        )
        self.checks = tuple(checks) if checks is not None else registered_checks()

    def observe_call(self, ctx: CallContext) -> list[Observation]:
        """What in the call is a bug, check by check in their order."""
        return [observation for c in self.checks for observation in c.run(ctx, self.env)]

    def observe(self, arguments: dict[str, Any], schema_valid: bool, outcome: CallOutcome) -> list[Observation]:
        """`observe_call` for a call whose tool the caller does not name."""
        return self.observe_call(CallContext(tool="", arguments=arguments, schema_valid=schema_valid, outcome=outcome))
