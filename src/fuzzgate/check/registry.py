"""The registry of checks: small functions, each with one job, that read one call and say what in
it is a bug. A check is added by decorating it in a module of its own; the oracles run every
registered check on every call, in the checks' `order`.

    @check(order=800)
    def scope_escape(ctx: CallContext, env: CheckEnv) -> Iterable[Observation]:
        ...

Built-in checks register when `fuzzgate.check` is imported (it imports their modules).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from fuzzgate.check.observation import Observation
from fuzzgate.check.sdk import ServerFacts
from fuzzgate.check.secrets import Redactor, SecretScanner
from fuzzgate.model.findings import Surface
from fuzzgate.model.outcome import CallOutcome, OutcomeStatus

_REPLIES = frozenset(
    {OutcomeStatus.OK, OutcomeStatus.TOOL_ERROR, OutcomeStatus.RPC_ERROR, OutcomeStatus.OUTPUT_INVALID}
)


@dataclass(frozen=True, slots=True)
class CallContext:
    """One call as the checks see it: what was sent and what came back, raw (unredacted)."""

    tool: str
    """The tool called ("" when the caller did not say, through `Oracles.observe`)."""
    arguments: dict[str, Any]
    schema_valid: bool
    """Whether `arguments` conform to the tool's input schema."""
    outcome: CallOutcome
    effects: tuple[Any, ...] = ()
    """What the call did outside the reply (file-system effects, the listener's requests), for the
    checks that read them."""
    surface: Surface = Surface.TOOL
    """Which request it was: a tool's `tools/call`, a prompt's `prompts/get`, a resource read."""

    @property
    def replied(self) -> bool:
        """Whether the server answered the call: a result (conforming or not) or an error reply."""
        return self.outcome.status in _REPLIES


@dataclass(frozen=True, slots=True)
class CheckEnv:
    """What the checks of one run share: its settings and the means to read and quote replies.
    Fields a new check needs are added here, with a default."""

    slow_s: float
    """A call slower than this many seconds is reported as slow."""
    scanner: SecretScanner
    """Finds secrets in a reply (raw text)."""
    redact: Redactor
    """Every text a check puts into an observation goes through this, whole, before it is cut."""
    probes: Mapping[str, Any] = field(default_factory=dict)
    """The run's probes by the file name only each could create (`fuzzgate.generate.probes.Probe`);
    filled as tools' probes are built."""
    canaries: tuple[Any, ...] = ()
    """The canaries planted outside the scope (`fuzzgate.sandbox.canaries.Canary`)."""
    server: ServerFacts = field(default_factory=ServerFacts)
    """What the engine learnt about the server it started (its SDK, whether it is jailed); filled
    once the server is up."""


CheckFunction = Callable[[CallContext, CheckEnv], Iterable[Observation]]
_F = TypeVar("_F", bound=CheckFunction)


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    order: int
    """Checks run (and their observations are listed) in ascending order, then by name."""
    run: CheckFunction


_REGISTRY: dict[str, Check] = {}


def check(*, order: int, name: str | None = None) -> Callable[[_F], _F]:
    """Register the decorated function as a check (under its own name unless `name` is given).

    The order decides where its observations stand among a call's: order is part of the output
    (the first finding of a call is the one a report lists first), so it is explicit rather than
    left to the order in which modules happen to be imported."""

    def register(function: _F) -> _F:
        key = name if name is not None else str(getattr(function, "__name__", repr(function)))
        if key in _REGISTRY:
            raise ValueError(f"a check named {key!r} is already registered")
        _REGISTRY[key] = Check(key, order, function)
        return function

    return register


def load_builtin_checks() -> None:
    """Import (and so register) the built-in checks; the package imports them on first use."""
    import fuzzgate.check.crash
    import fuzzgate.check.effects
    import fuzzgate.check.internal_error
    import fuzzgate.check.output_schema
    import fuzzgate.check.protocol
    import fuzzgate.check.secret_leak
    import fuzzgate.check.slow
    import fuzzgate.check.ssrf  # noqa: F401


def registered_checks() -> tuple[Check, ...]:
    """Every registered check (the built-in ones and any registered since), in the order they run."""
    load_builtin_checks()
    return tuple(sorted(_REGISTRY.values(), key=lambda c: (c.order, c.name)))
