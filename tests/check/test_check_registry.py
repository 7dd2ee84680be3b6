"""The check registry: what registers a check, the order checks run in, what a check sees."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fuzzgate.check import CallContext, CheckEnv, Observation, Oracles, check, registered_checks, registry
from fuzzgate.check.secrets import SecretScanner
from fuzzgate.model.findings import Details, Kind
from fuzzgate.model.outcome import CallOutcome, OutcomeStatus

SCANNER = SecretScanner([], {})


def test_the_reply_checks_run_in_their_documented_order() -> None:
    # A call's observations keep the order they always had: a report lists its findings in it.
    reply_checks = ["crash", "hang", "protocol_anomalies", "internal_error", "output_schema", "secret_leak", "slow"]
    assert [c.name for c in registered_checks() if c.name in reply_checks] == reply_checks
    assert [c.name for c in Oracles(slow_s=1.0, scanner=SCANNER).checks] == [c.name for c in registered_checks()]


def test_observe_is_observe_call_without_a_tool_name() -> None:
    oracles = Oracles(slow_s=1.0, scanner=SCANNER)
    outcome = CallOutcome(OutcomeStatus.RPC_ERROR, 2.0, text="boom at 0x1f", rpc_code=-32603)
    ctx = CallContext(tool="add", arguments={"a": 1}, schema_valid=True, outcome=outcome)
    observed = oracles.observe_call(ctx)
    assert [o.kind for o in observed] == [Kind.INTERNAL_ERROR, Kind.SLOW]
    assert oracles.observe({"a": 1}, True, outcome) == observed


def test_a_check_sees_the_call_and_the_run_and_runs_in_its_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    seen: list[tuple[str, tuple[object, ...], float]] = []

    @check(order=150)
    def effect_seen(ctx: CallContext, env: CheckEnv) -> Iterator[Observation]:
        seen.append((ctx.tool, ctx.effects, env.slow_s))
        if ctx.effects:
            yield Observation(Kind.SECRET_LEAK, "wrote outside", ("created",), Details())

    names = [c.name for c in registered_checks()]
    assert names.index("crash") < names.index("effect_seen") < names.index("hang")
    oracles = Oracles(slow_s=3.0, scanner=SCANNER)
    outcome = CallOutcome(OutcomeStatus.CLOSED, 0.1, exit_code=1)
    ctx = CallContext(tool="rm", arguments={}, schema_valid=True, outcome=outcome, effects=("/tmp/x",))
    assert [o.kind for o in oracles.observe_call(ctx)] == [Kind.CRASH, Kind.SECRET_LEAK]
    assert seen == [("rm", ("/tmp/x",), 3.0)]
    # Oracles built before a check registered keep the checks they were built with.
    assert "effect_seen" not in [c.name for c in Oracles(slow_s=1.0, scanner=SCANNER, checks=()).checks]


def test_a_name_registers_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    with pytest.raises(ValueError, match="slow"):
        check(order=1, name="slow")(lambda ctx, env: ())


def test_only_the_given_checks_run() -> None:
    slow_only = [c for c in registered_checks() if c.name == "slow"]
    oracles = Oracles(slow_s=1.0, scanner=SCANNER, checks=slow_only)
    assert [o.kind for o in oracles.observe({}, True, CallOutcome(OutcomeStatus.CLOSED, 5.0))] == []
    assert [o.kind for o in oracles.observe({}, True, CallOutcome(OutcomeStatus.OK, 5.0))] == [Kind.SLOW]
