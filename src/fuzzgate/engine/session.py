"""The engine's entry points besides a run (`engine.execute.Engine`): what a server offers and what a run
would do with it, and replays of recorded findings or of one call, each on a fresh server.

The CLI calls these and prints what they return: it never speaks MCP itself. They never print.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import anyio.to_thread

from fuzzgate.check import Observation, Oracles
from fuzzgate.check.secrets import SecretScanner, canary_environment, redactor_for
from fuzzgate.config.model import TargetConfig
from fuzzgate.config.views import ServerSettings
from fuzzgate.engine.replay import replay_once
from fuzzgate.engine.settings import EngineSettings
from fuzzgate.engine.spare import Connector
from fuzzgate.model.errors import TargetError
from fuzzgate.model.findings import Finding, Kind, Repro, Surface
from fuzzgate.model.outcome import CallOutcome
from fuzzgate.plan.selection import NotSelected, ToolPlan, select
from fuzzgate.record.results import Status, SurfaceEntry
from fuzzgate.sandbox.containment import Containment, contain, unheld_of, unobserved
from fuzzgate.target.connection import Connection, open_connection
from fuzzgate.target.discover import Inventory, discover


def run_canaries(target: TargetConfig, seed: int) -> dict[str, str]:
    """The canaries a run with `seed` plants in the server's environment: only in a server fuzzgate
    starts (stdio, or HTTP with a command), the one environment fuzzgate sets."""
    return canary_environment(seed) if target.launched else {}


def oracles_for(
    settings: EngineSettings, seed: int, containment: Containment | None = None
) -> tuple[Oracles, dict[str, str]]:
    """The oracles of a run with `seed` (reading the canaries `containment` planted), and the
    environment canaries they look for."""
    canaries = run_canaries(settings.target, seed)
    scanner = SecretScanner(settings.server.secret_patterns, canaries)
    planted = containment.workspace.watched if containment is not None else ()
    oracles = Oracles(
        slow_s=settings.slow_ms / 1000,
        scanner=scanner,
        redact=redactor_for(settings.server, canaries),
        canaries=planted,
    )
    return oracles, canaries


@dataclass(frozen=True, slots=True)
class Contained:
    """What a replay needs to see a server as a run does: fresh contained servers, and oracles that
    know the canaries planted around them."""

    connector: Connector
    oracles: Oracles
    canaries: dict[str, str]
    settings: EngineSettings
    """The settings given, their selection held by this containment (`SelectionSettings.held_by`):
    what decides which calls may be sent to these servers."""
    unobserved: Mapping[Kind, str] = field(default_factory=dict)
    """The kinds whose evidence these servers cannot show, with why (`containment.unobserved`)."""


@asynccontextmanager
async def contained(settings: EngineSettings, seed: int) -> AsyncIterator[Contained]:
    """Servers started as a run with `seed` starts them (`fuzzgate.sandbox.containment`): on a
    throwaway layer of their scope, watched, jailed where the sandbox works, so a replay of a scope
    escape or an injection shows it again and never touches the user's files. Removed on exit."""
    containment = await anyio.to_thread.run_sync(contain, settings.target, seed)

    def connector(server: ServerSettings, extra_env: Mapping[str, str]) -> AbstractAsyncContextManager[Connection]:
        return open_connection(server, extra_env=extra_env, containment=containment)

    held = replace(settings, selection=settings.selection.held_by(unheld_of(containment)))
    try:
        oracles, canaries = oracles_for(settings, seed, containment)
        yield Contained(connector, oracles, canaries, held, unobserved(containment, settings.server.memory_limit))
    finally:
        if containment is not None:
            # Not awaited: a cancelled replay (SIGINT, SIGTERM) must still remove its workspace.
            containment.close()


@dataclass(frozen=True, slots=True)
class Listing:
    """What the server offers, and what a run would do with each of its tools."""

    protocol_version: str
    inventory: Inventory
    decisions: tuple[SurfaceEntry, ...]
    """One per tool of the inventory, then per resource, resource template and prompt, in its order:
    fuzzed, blocked or skipped, and why."""


async def list_surface(settings: EngineSettings, seed: int) -> Listing:
    """Discover the server's tools, resources and prompts, and decide each tool's fate as a run with
    `seed` would, building every generator (that is what tells whether a schema can be fuzzed).
    Calls no tool."""
    async with (
        contained(settings, seed) as servers,
        servers.connector(settings.server, canary_environment(seed)) as connection,
    ):
        inventory = await discover(connection, settings.target.timeout_ms / 1000)
        protocol = connection.protocol_version
        selection_settings = servers.settings.selection
    selection = select(inventory, selection_settings, seed)
    for plan in selection.plans:
        await anyio.to_thread.run_sync(plan.case, 0, abandon_on_cancel=True)
    decided = {(e.surface, e.name): (e.status, e.reason) for e in selection.entries}
    decided |= {(p.info.surface, p.info.name): _plan_decision(p) for p in selection.plans}
    decisions = tuple(
        SurfaceEntry(item.surface, item.name, *decided.get((item.surface, item.name), (Status.FUZZED, None)))
        for item in (*inventory.tools, *inventory.others)
    )
    return Listing(protocol, inventory, decisions)


def _plan_decision(plan: ToolPlan) -> tuple[Status, str | None]:
    if plan.skip_reason is not None:
        return Status.SKIPPED, plan.skip_reason
    return Status.FUZZED, plan.note


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """What replaying a recorded finding showed."""

    finding: Finding
    still_fails: bool
    """The same bug (same fingerprint) showed again in one of the replays."""
    attempts: int
    """Replays sent: up to the first that failed again; 0 for a finding no tool call can replay, and
    for one whose redacted repro (`Repro.redacted`) did not fail again, which proves no fix."""
    observations: tuple[Observation, ...]
    """What the last replay showed."""
    refused: str | None = None
    """Why nothing was sent: a call of the repro is not selected (include, exclude, the destructive
    guard; `plan.selection.Admission`)."""
    outcomes: tuple[CallOutcome, ...] = ()
    """The failing call's outcome in each replay."""
    not_replayed: TargetError | None = None
    """Why no replay could be sent: a fresh server could not be started (its start error, the
    server's words in it redacted). Such a finding was not shown fixed."""
    unlisted: bool = False
    """The server's listing named no such tool or prompt in the last replay: renamed or removed, the
    call was sent all the same (an unlisted tool may still answer), and did not fail again."""
    unobserved: str | None = None
    """Why nothing was sent: a finding whose evidence the server cannot show here (an `ssrf` one
    without the SSRF listener, an `out_of_memory` one without the memory watch:
    `containment.unobserved`). Such a finding was not shown fixed."""


async def replay_finding(settings: EngineSettings, finding: Finding, attempts: int) -> ReplayResult:
    """Replay a recorded finding on fresh servers, up to `attempts` times (at least once), stopping
    at the first replay that shows the same bug again."""
    if not replayable(finding):
        return ReplayResult(finding, still_fails=False, attempts=0, observations=())
    observations: list[Observation] = []
    outcomes: list[CallOutcome] = []
    unlisted: list[bool] = []
    async with contained(settings, finding.repro.seed) as servers:
        if (why := servers.unobserved.get(finding.kind)) is not None:
            # Replayed here it could only show "no longer fails", while the bug is still there.
            return ReplayResult(finding, still_fails=False, attempts=0, observations=(), unobserved=why)
        for attempt in range(1, max(1, attempts) + 1):
            try:
                same, observations = await replay_once(
                    servers.settings.verification,
                    servers.oracles,
                    finding,
                    servers.canaries,
                    servers.connector,
                    outcomes=outcomes,
                    unlisted=unlisted,
                )
            except NotSelected as refused:
                return ReplayResult(finding, still_fails=False, attempts=0, observations=(), refused=refused.reason)
            except TargetError as exc:
                return ReplayResult(finding, still_fails=False, attempts=attempt - 1, observations=(), not_replayed=exc)
            if same:
                return ReplayResult(finding, True, attempt, tuple(observations), outcomes=tuple(outcomes))
    sent = 0 if finding.repro.redacted else max(1, attempts)
    gone = bool(unlisted) and unlisted[-1]
    return ReplayResult(finding, False, sent, tuple(observations), outcomes=tuple(outcomes), unlisted=gone)


def replayable(finding: Finding) -> bool:
    """Whether requests can replay `finding`: a tool's, a prompt's or a resource's, or the
    server's (through the request it recorded: a call, or a protocol probe's raw message)."""
    if finding.surface is Surface.SERVER:
        return finding.repro.tool is not None or finding.repro.surface is Surface.SERVER
    return True


async def replay_findings(settings: EngineSettings, findings: Iterable[Finding], attempts: int) -> list[ReplayResult]:
    """`replay_finding` for each finding, one after the other."""
    return [await replay_finding(settings, f, attempts) for f in findings]


async def replay_call(
    settings: EngineSettings, tool: str, arguments: dict[str, Any], seed: int
) -> tuple[tuple[Observation, ...], CallOutcome | None, Mapping[Kind, str]]:
    """Call `tool` once with `arguments` on a fresh server (with the canaries of `seed`): what the
    oracles see in the outcome, the outcome (None when the server did not take the call), and why
    kinds of finding the server could not show (`containment.unobserved`)."""
    probe = Finding(
        kind=next(iter(settings.severity)),
        severity=settings.fail_on,
        surface=Surface.TOOL,
        name=tool,
        message="",
        fingerprint="",
        repro=Repro(seed=seed, case_index=0, arguments=arguments, transport=settings.target.kind.value),
    )
    outcomes: list[CallOutcome] = []
    async with contained(settings, seed) as servers:
        _, observations = await replay_once(
            servers.settings.verification,
            servers.oracles,
            probe,
            servers.canaries,
            servers.connector,
            watch=True,
            listed_only=True,
            outcomes=outcomes,
        )
    return tuple(observations), (outcomes[0] if outcomes else None), servers.unobserved
