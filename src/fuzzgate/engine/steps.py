"""One call as fuzzing and replays send it: the arguments placed in this server's workspace, the
call itself with its follow-up ping, what it changed outside the server's scope, and what the
oracles make of all that. The engine and verification share it, so a replay sees a call exactly
as fuzzing saw it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fuzzgate.check import CallContext, Observation, Oracles, has_lone_surrogate
from fuzzgate.check.effects import Effect, effects_of
from fuzzgate.check.environment import waited_on_sandbox
from fuzzgate.check.protocol_probes import judge as judge_probe
from fuzzgate.config.model import TargetConfig
from fuzzgate.engine.protocol_round import probed_tool, send_probe
from fuzzgate.generate.probes import place, substitute
from fuzzgate.model.findings import Step, Surface
from fuzzgate.model.outcome import CallOutcome
from fuzzgate.sandbox.listener import Request, aimed, unreachable
from fuzzgate.sandbox.workspace import Layer
from fuzzgate.target.call import call_and_follow, prompt_argument
from fuzzgate.target.connection import Connection

LONE_SURROGATE_TIMEOUT_S = 1.0
"""Some SDKs drop a request they cannot decode: it is reported (`protocol_error`), but waiting the
full timeout for each such request would spend the budget on one bug."""


@dataclass(frozen=True, slots=True)
class StepResult:
    arguments: dict[str, Any]
    """The arguments as sent (workspace paths in place)."""
    outcome: CallOutcome
    effects: tuple[Effect, ...]
    requests: tuple[Request, ...] = ()
    """What the SSRF listener on the server's loopback got while the call was pending."""
    stderr_mark: int = 0
    """The server's stderr log as the outcome read it: what it writes after the reply comes after
    this mark (`call.follow_reply`)."""


def call_timeout(target: TargetConfig, arguments: Any) -> float:
    timeout_s = target.timeout_ms / 1000
    return min(timeout_s, LONE_SURROGATE_TIMEOUT_S) if has_lone_surrogate(arguments) else timeout_s


def placed(connection: Connection, arguments: dict[str, Any], written_for: str | None = None) -> dict[str, Any]:
    """`arguments` with the probes' placeholder, and the workspace they were written for, replaced
    by this server start's directory outside the scope. A server without the SSRF listener gets
    no canary URL: their host is one that resolves nowhere (`sandbox.listener.unreachable`); one
    with it gets every canary URL at its listener's port, whatever seed made the URL (`aimed`)."""
    listener = connection.listener
    arguments = unreachable(arguments) if listener is None else aimed(arguments, listener.port)
    layer = connection.layer
    if layer is None:
        return arguments
    outside = str(layer.outside)
    value = place(arguments, outside)
    if written_for and written_for != outside:
        value = substitute(value, written_for, outside)
    result: dict[str, Any] = value
    return result


def written_for(layer: Layer | None, arguments: dict[str, Any], prefix: Sequence[Step] = ()) -> str | None:
    """The directory outside the scope that `arguments` (or a `prefix` step's) name, for a repro's
    `workspace`; None when none does, as a replay then has nothing to put in its place."""
    if layer is None:
        return None
    outside = str(layer.outside)
    sent = json.dumps([arguments, *(step.arguments for step in prefix)], ensure_ascii=False, default=str)
    return outside if outside in sent else None


async def send_step(
    connection: Connection,
    target: TargetConfig,
    tool: str,
    arguments: dict[str, Any],
    written_for: str | None = None,
    surface: Surface = Surface.TOOL,
) -> StepResult:
    """Send one call (placed) and watch the directory outside the scope while it runs: a
    `tools/call` of `tool`, or the request of `surface` (`call.request_for`); for
    `Surface.SERVER`, `arguments` is a raw JSON-RPC message (a protocol probe's)."""
    sent = placed(connection, arguments, written_for)
    if surface is Surface.PROMPT:
        # What goes on the wire is what a repro records: prompts take strings.
        sent = {key: prompt_argument(value) for key, value in sent.items()}
    layer = connection.layer
    before = None
    if layer is not None:
        cached = connection.last_snapshot
        # Unchanged since the last call ended, unless another call began since (or ran alongside).
        reuse = cached is not None and cached[0] == connection.steps_started
        before = cached[1] if cached is not None and reuse else layer.snapshot()
    listener = connection.listener
    heard = listener.mark() if listener is not None else 0
    connection.steps_started += 1
    timeout_s = call_timeout(target, sent)
    if surface is Surface.SERVER:
        # `tool` names the protocol probe; its message goes as it is, and `observe` judges it.
        outcome = await send_probe(connection, target, tool, sent)
    else:
        outcome = await call_and_follow(connection, tool, sent, timeout_s, surface=surface)
    # Taken before anything else runs: a line the server writes once it has answered is after it.
    stderr_mark = connection.server.stderr.mark() if connection.server is not None else 0
    effects: tuple[Effect, ...] = ()
    if layer is not None and before is not None:
        after = layer.snapshot()
        connection.last_snapshot = (connection.steps_started, after)
        effects = effects_of(layer.changes(before, after), layer.outside)
    requests = listener.since(heard) if listener is not None else ()
    return StepResult(sent, outcome, effects, requests, stderr_mark)


def observe(
    oracles: Oracles,
    tool: str,
    schema_valid: bool,
    result: StepResult,
    outcome: CallOutcome | None = None,
    surface: Surface = Surface.TOOL,
) -> list[Observation]:
    if surface is Surface.SERVER:
        answer = outcome if outcome is not None else result.outcome
        if waited_on_sandbox(oracles.env.server, probed_tool(result.arguments) or tool, answer):
            return []
        return judge_probe(tool, answer, oracles.env.redact)
    ctx = CallContext(
        tool=tool,
        surface=surface,
        arguments=result.arguments,
        schema_valid=schema_valid,
        outcome=outcome if outcome is not None else result.outcome,
        effects=(*result.effects, *result.requests),
    )
    return oracles.observe_call(ctx)
