"""The protocol round: every protocol probe (`check.protocol_probes`) sent once per server, right
after discovery, and the start-up banner check; what they find is the server's (`Surface.SERVER`).

A probe's repro is the raw message it sent (`Repro.arguments`, `surface=Surface.SERVER`, `tool` the
probe's name); `send_probe` sends one on any connection and judges it, so fuzzing and a replay on a
fresh server decide alike.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from fuzzgate.check import Observation
from fuzzgate.check.environment import waited_on_sandbox
from fuzzgate.check.protocol_probes import (
    BANNER,
    PROBES,
    Expect,
    ProtocolProbe,
    banner_observation,
    banner_request,
    build_probes,
    judge,
    probe_of,
)
from fuzzgate.check.sdk import ServerFacts
from fuzzgate.check.secrets import Redactor
from fuzzgate.config.model import TargetConfig
from fuzzgate.engine.settings import EngineSettings
from fuzzgate.model.findings import Finding, Repro, Step, Surface
from fuzzgate.model.outcome import NOT_SENT, AfterTimeout, CallOutcome, OutcomeStatus
from fuzzgate.plan.budget import TimeBox
from fuzzgate.plan.selection import SelectionSettings, select
from fuzzgate.target.connection import Connection
from fuzzgate.target.discover import Inventory, ToolInfo
from fuzzgate.target.raw import NO_REPLY_WAIT_S, carries_raw, send_raw, stamped

if TYPE_CHECKING:
    # Types only: `steps` (which `verify` imports) may import this module for replays.
    from fuzzgate.triage.finding_set import FindingSet

__all__ = [
    "PROBE_TIMEOUT_S",
    "RoundResult",
    "probe_server",
    "protocol_round",
    "round_probes",
    "send_probe",
    "startup_banner",
]

OMITTED = "arguments-omitted"
PROBE_TIMEOUT_S = 1.0
"""The longest a probe waits for its answer (less when the target's timeout is shorter): a healthy
server answers at once, and a probe it drops costs this, then a ping."""
ROUND_LIMIT_S = 10.0
ROUND_SHARE = 0.15
"""The round takes at most this share of the budget (at least 2 s, at most `ROUND_LIMIT_S`)."""
MAX_RESTARTS = 3
"""Probes that kill the server: the round goes on with the rest on a fresh one, this many times."""


@dataclass(frozen=True, slots=True)
class RoundResult:
    found: tuple[tuple[Observation, dict[str, Any], tuple[Step, ...]], ...]
    """Each observation, with the raw message that showed it (its repro) and the calls the server
    had received before it (its repro's prefix: the control call of `arguments-omitted`)."""
    sent: tuple[str, ...]
    """The probes sent, by name, in order."""
    restart: str | None = None
    """Why the server must be restarted (a probe killed it or it stopped answering); None if fine."""
    cut_short: bool = False
    """The round's time ran out before every probe was sent."""


class _Run(Protocol):
    """What `probe_server` reads of the engine."""

    @property
    def settings(self) -> EngineSettings: ...
    @property
    def seed(self) -> int: ...
    @property
    def redact(self) -> Redactor: ...
    @property
    def findings(self) -> FindingSet: ...
    @property
    def timebox(self) -> TimeBox: ...
    @property
    def server_facts(self) -> ServerFacts: ...
    def offer(self, finding: Finding, ambiguous: bool) -> None: ...


class _Keeper(Protocol):
    def restart(self, connection: Connection, reason: str) -> None: ...
    async def get(self) -> Connection | None: ...


def probe_timeout(target: TargetConfig, name: str) -> float:
    """How long probe `name` waits: a request it must answer, up to `PROBE_TIMEOUT_S`; one it may
    leave unanswered, or a notification, briefly."""
    timeout_s = min(PROBE_TIMEOUT_S, target.timeout_ms / 1000)
    kind = PROBES.get(name)
    if kind is not None and kind.expect in (Expect.TOLERATE, Expect.SILENCE):
        return min(timeout_s, NO_REPLY_WAIT_S)
    return timeout_s


def round_probes(selection: SelectionSettings, tools: Sequence[ToolInfo]) -> tuple[ProtocolProbe, ...]:
    """The probes for a server offering `tools`. The `tools/call` probes go to tools fuzzing would
    call (the include and exclude patterns, the destructive guard, `max_tools`), the first in the
    inventory's order: never to a tool the guard blocks."""
    # Share 1 of a sharded run sends what an unsharded run would: the probes' tools are any share's.
    chosen = select(Inventory(tuple(tools), (), (), ()), replace(selection, shard=None), 0)
    fuzzed = [plan.info for plan in chosen.plans if plan.info.surface is Surface.TOOL]
    first = fuzzed[0].name if fuzzed else None
    nothing = next((t.name for t in fuzzed if not _required(t)), None)
    some = next((t.name for t in fuzzed if _required(t)), None)
    return build_probes(first, nothing, some, [t.name for t in tools])


def _required(tool: ToolInfo) -> bool:
    required = tool.input_schema.get("required")
    return isinstance(required, list) and bool(required)


def startup_banner(connection: Connection, redact: Redactor) -> Observation | None:
    """The non-JSON lines a stdio server wrote to stdout before its first reply, as one observation."""
    process = connection.process
    if process is None or process.first_reply_mark is None:
        return None
    return banner_observation(process.wire.since(0)[: process.first_reply_mark], redact)


async def send_probe(connection: Connection, target: TargetConfig, name: str, message: dict[str, Any]) -> CallOutcome:
    """Send probe `name`'s raw `message` as it is (`check.protocol_probes.judge` says what the
    outcome shows). For the start-up banner the message is a harmless request, and the outcome's
    anomalies are what the server wrote before its first reply."""
    kind = PROBES.get(name)
    # What may go unanswered stops waiting once the server answers the next request.
    settle = kind is not None and kind.expect in (Expect.TOLERATE, Expect.SILENCE)
    outcome = await send_raw(connection, message, probe_timeout(target, name), settle=settle)
    if name == BANNER:
        process = connection.process
        start = process.wire.since(0)[: process.first_reply_mark or 0] if process is not None else ()
        outcome = replace(outcome, anomalies=start)
    return outcome


def _restart_reason(connection: Connection, name: str, outcome: CallOutcome) -> str | None:
    if outcome.status in (OutcomeStatus.CLOSED, OutcomeStatus.ABORTED) or not connection.alive():
        return f"protocol probe {name}: the server died"
    if outcome.after_timeout in (AfterTimeout.DIED, AfterTimeout.STUCK):
        return f"protocol probe {name}: {outcome.after_timeout.value}"
    return None


async def _control(
    connection: Connection, target: TargetConfig, probe: ProtocolProbe, redact: Redactor
) -> CallOutcome | None:
    """The `arguments-omitted` probe's tool called with `arguments: {}`: its outcome when that shows
    something wrong too (then an omitted `arguments` says nothing of the protocol), else None."""
    params = {**probe.message["params"], "arguments": {}}
    message, _ = stamped(connection, {**probe.message, "id": f"{probe.message['id']}-control", "params": params})
    outcome = await send_raw(connection, message, probe_timeout(target, probe.name))
    if outcome.status not in NOT_SENT:
        # A tool call the server got: part of what the probes after it follow (a tool that takes
        # the server down once it has answered is found so, `Verifier._died_after_earlier_call`).
        connection.history.append(Step(str(params["name"]), {}))
    return outcome if judge(probe.name, outcome, redact) else None


async def protocol_round(
    connection: Connection,
    settings: EngineSettings,
    tools: Sequence[ToolInfo],
    redact: Redactor,
    *,
    skip: Collection[str] = (),
    limit_s: float = ROUND_LIMIT_S,
    facts: ServerFacts | None = None,
) -> RoundResult:
    """Send every probe once (but those in `skip`), in order, each in the session's envelope
    (`raw.stamped`), until one kills the server or stops it answering, or `limit_s` is spent. A
    connection raw messages cannot reach (the in-memory one) gets none. With `facts`, a probe left
    unanswered while the jailed server waited on a connection the jail refuses is the sandbox's
    (`check.environment.waited_on_sandbox`), not a finding."""
    found: list[tuple[Observation, dict[str, Any], tuple[Step, ...]]] = []
    sent: list[str] = []
    if not carries_raw(connection):
        return RoundResult((), ())
    deadline = time.monotonic() + limit_s
    for probe in round_probes(settings.selection, tools):
        if probe.name in skip:
            continue
        if time.monotonic() >= deadline:
            return RoundResult(tuple(found), tuple(sent), cut_short=True)
        if probe.name == OMITTED:
            control = await _control(connection, settings.target, probe, redact)
            if control is not None:
                # The tool fails with `arguments: {}` as well: its own bug, which fuzzing reports;
                # the probe would only say it again. Not sent.
                sent.append(probe.name)
                if (reason := _restart_reason(connection, probe.name, control)) is not None:
                    return RoundResult(tuple(found), tuple(sent), restart=reason)
                continue
        message, _ = stamped(connection, probe.message)
        before = tuple(connection.history)
        outcome = await send_probe(connection, settings.target, probe.name, message)
        observations = judge(probe.name, outcome, redact)
        if facts is not None and waited_on_sandbox(facts, probed_tool(message) or probe.name, outcome):
            observations = []
        sent.append(probe.name)
        found.extend((observation, message, before) for observation in observations)
        reason = _restart_reason(connection, probe.name, outcome)
        if reason is not None:
            return RoundResult(tuple(found), tuple(sent), restart=reason)
    return RoundResult(tuple(found), tuple(sent))


async def probe_server(run: _Run, keeper: _Keeper, connection: Connection, tools: Sequence[ToolInfo]) -> None:
    """The engine's protocol phase, on the first server right after discovery: the start-up banner,
    then the protocol round, each finding recorded and offered for verification as fuzzing's are.
    A probe that kills the server (or hangs it) has it restarted, and the round goes on with the
    probes not yet sent on the fresh one."""
    settings = run.settings
    limit_s = min(ROUND_LIMIT_S, max(2.0, ROUND_SHARE * settings.budget_s), run.timebox.remaining())
    deadline = time.monotonic() + limit_s

    def record(observation: Observation, name: str, message: dict[str, Any], prefix: tuple[Step, ...] = ()) -> None:
        repro = Repro(run.seed, -1, message, connection.transport, surface=Surface.SERVER, prefix=prefix)
        finding = run.findings.add(observation, name, repro)
        run.offer(finding, observation.ambiguous)

    banner = startup_banner(connection, run.redact)
    if banner is not None:
        record(banner, BANNER, stamped(connection, banner_request())[0])
    done: set[str] = set()
    for attempt in range(MAX_RESTARTS + 1):
        result = await protocol_round(
            connection,
            settings,
            tools,
            run.redact,
            skip=done,
            limit_s=max(0.0, deadline - time.monotonic()),
            facts=run.server_facts,
        )
        for observation, message, prefix in result.found:
            record(observation, probe_of(observation) or BANNER, message, prefix)
        done.update(result.sent)
        if result.restart is None:
            return
        keeper.restart(connection, result.restart)
        if result.cut_short or attempt == MAX_RESTARTS or time.monotonic() >= deadline:
            return
        fresh = await keeper.get()
        if fresh is None:
            return
        connection = fresh


def probed_tool(message: dict[str, Any]) -> str | None:
    """The tool a protocol probe's raw message calls, if it calls one."""
    params = message.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    return name if isinstance(name, str) else None
