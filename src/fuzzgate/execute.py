"""The engine: start the server, discover, fuzz every selected tool within the budget, triage.

It yields events and returns an `EngineResult`; it never prints and never decides exit codes.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

import anyio
import anyio.to_thread
from anyio.abc import TaskStatus

from fuzzgate.check import Oracles, has_lone_surrogate
from fuzzgate.check.secrets import Redactor, SecretScanner, canary_environment
from fuzzgate.config.model import Config, TargetKind
from fuzzgate.discover import Inventory, discover
from fuzzgate.errors import TargetError
from fuzzgate.events import (
    CallFinished,
    Discovered,
    EventSink,
    FindingTriaged,
    FuzzingStopped,
    ServerReady,
    ServerRestarted,
    TriageStarted,
)
from fuzzgate.findings import Finding, Repro, Surface
from fuzzgate.outcome import OutcomeStatus
from fuzzgate.plan import Scheduler, ToolPlan, select
from fuzzgate.results import Status, SurfaceEntry, TargetSummary
from fuzzgate.target.connection import Connection, call_tool, open_connection
from fuzzgate.triage import FindingSet, confirm

MAX_RESTARTS_IN_A_ROW = 3
LONE_SURROGATE_TIMEOUT_S = 1.0
"""Some SDKs silently drop a request they cannot decode; waiting the full timeout for it only wastes budget."""


@dataclass(frozen=True, slots=True)
class EngineResult:
    target: TargetSummary
    entries: tuple[SurfaceEntry, ...]
    inventory: Inventory
    findings: tuple[Finding, ...]
    calls: int
    duration_s: float


def target_summary(config: Config, connection: Connection | None = None) -> TargetSummary:
    target = config.target
    info = connection.server_info if connection else None
    return TargetSummary(
        name=target.display_name,
        kind=target.kind.value,
        command=target.command if target.kind is TargetKind.STDIO else None,
        args=target.args if target.kind is TargetKind.STDIO else (),
        url=target.url if target.kind is TargetKind.HTTP else None,
        protocol_version=connection.protocol_version if connection else None,
        server_name=info.name if info else None,
        server_version=info.version if info else None,
    )


def redactor_for(config: Config, canaries: Mapping[str, str]) -> Redactor:
    """Env values, header values and canaries never reach a report."""
    target = config.target
    return Redactor([*target.env.values(), *target.headers.values(), *canaries.values()], config.secret_patterns)


class ServerKeeper:
    """Owns the current connection in one task, so sessions are opened and closed by the same task,
    and restarts it on request after a crash or a hang."""

    def __init__(self, config: Config, extra_env: Mapping[str, str], emit: EventSink) -> None:
        self._config = config
        self._extra_env = extra_env
        self._emit = emit
        self._connection: Connection | None = None
        self._ready = anyio.Event()
        self._restart = anyio.Event()
        self._reason = ""
        self.failure: TargetError | None = None
        self.culprit: ToolPlan | None = None

    async def run(self, *, task_status: TaskStatus[Connection]) -> None:
        generation = 0
        failures = 0
        while True:
            try:
                async with open_connection(self._config, extra_env=self._extra_env) as conn:
                    failures = 0
                    self._connection = conn
                    if generation == 0:
                        task_status.started(conn)
                    else:
                        self._emit(ServerRestarted(self._reason, generation))
                    self._ready.set()
                    await self._restart.wait()
                    self._restart = anyio.Event()
            except TargetError as exc:
                if generation == 0:
                    raise
                failures += 1
                if failures >= MAX_RESTARTS_IN_A_ROW:
                    self.failure = exc
                    self._connection = None
                    self._ready.set()
                    return
            generation += 1

    async def get(self) -> Connection | None:
        await self._ready.wait()
        return self._connection

    def restart(self, connection: Connection, reason: str) -> None:
        if self._connection is connection and not self._restart.is_set():
            self._reason = reason
            # No worker may pick up the old connection while the keeper is tearing it down.
            self._connection = None
            self._ready = anyio.Event()
            self._restart.set()


class Engine:
    def __init__(self, config: Config, seed: int, emit: EventSink) -> None:
        self.config = config
        self.seed = seed
        self.emit = emit
        self.canaries = canary_environment(seed) if config.target.kind is TargetKind.STDIO else {}
        self.redact = redactor_for(config, self.canaries)
        self.oracles = Oracles(
            slow_s=config.slow_ms / 1000, scanner=SecretScanner(config.secret_patterns, self.canaries)
        )
        self.findings = FindingSet(config.severity, self.redact)
        self.calls = 0
        self.started = 0.0

    async def run(self) -> EngineResult:
        config = self.config
        self.started = time.monotonic()
        keeper = ServerKeeper(config, self.canaries, self.emit)
        async with anyio.create_task_group() as tg:
            first = await tg.start(keeper.run)
            info = first.server_info
            self.emit(ServerReady(first.protocol_version, info.name if info else None, 0))
            summary = target_summary(config, first)
            inventory = await discover(first, config.target.timeout_ms / 1000)
            selection = select(inventory, config, self.seed)
            self.emit(
                Discovered(selection.entries, inventory.resources, inventory.resource_templates, inventory.prompts)
            )
            scheduler = Scheduler(selection.plans, time.monotonic() + config.budget_s, config.cases)
            async with anyio.create_task_group() as workers:
                for _ in range(max(1, config.concurrency)):
                    workers.start_soon(self._worker, scheduler, keeper)
            tg.cancel_scope.cancel()
        fuzz_elapsed = time.monotonic() - self.started

        candidates = self.findings.items()
        triaged: list[Finding] = [f for f, _ in candidates]
        if candidates and config.replays > 0:
            self.emit(TriageStarted(len(candidates), config.replays))
            triaged = await confirm(
                config,
                self.oracles,
                candidates,
                self.canaries,
                lambda f, dropped: self.emit(FindingTriaged(f, dropped)),
            )
        fuzzed = tuple(
            SurfaceEntry(Surface.TOOL, p.info.name, Status.FUZZED, None, p.next_case) for p in selection.plans
        )
        order = {t.name: i for i, t in enumerate(inventory.tools)}
        entries = tuple(sorted((*fuzzed, *selection.entries), key=lambda e: order.get(e.name, 0)))
        return EngineResult(
            target=summary,
            entries=entries,
            inventory=inventory,
            findings=tuple(triaged),
            calls=self.calls,
            duration_s=fuzz_elapsed,
        )

    async def _worker(self, scheduler: Scheduler, keeper: ServerKeeper) -> None:
        config = self.config
        timeout_s = config.target.timeout_ms / 1000
        while (item := scheduler.next()) is not None:
            plan, index = item
            # Generation may wait on the worker process: never block the event loop with it.
            case = await anyio.to_thread.run_sync(plan.generator.case, index)
            waited = time.monotonic()
            connection = await keeper.get()
            if keeper.culprit is not None:
                # A restart is the cost of the call that crashed or hung the server: charge its tool.
                scheduler.record(keeper.culprit, time.monotonic() - waited)
                keeper.culprit = None
            if connection is None:
                scheduler.stopped = True
                reason = keeper.failure.message if keeper.failure else "the server could not be restarted"
                self.emit(FuzzingStopped(reason))
                return
            surrogate = has_lone_surrogate(case.arguments)
            outcome = await call_tool(
                connection,
                plan.info.name,
                case.arguments,
                min(timeout_s, LONE_SURROGATE_TIMEOUT_S) if surrogate else timeout_s,
                in_flight=config.concurrency,
            )
            self.calls += 1
            scheduler.record(plan, outcome.duration_s)
            observations = self.oracles.observe(case.arguments, case.schema_valid, outcome)
            repro = Repro(
                seed=self.seed,
                case_index=index,
                arguments=case.arguments,
                transport=connection.transport,
                schema_valid=case.schema_valid,
            )
            for observation in observations:
                self.findings.add(observation, plan.info.name, repro)
            self.emit(
                CallFinished(
                    tool=plan.info.name,
                    case_index=index,
                    arguments=case.arguments,
                    schema_valid=case.schema_valid,
                    origin=case.origin,
                    outcome=outcome,
                    observations=len(observations),
                    calls=self.calls,
                    findings=len(self.findings),
                    elapsed_s=time.monotonic() - self.started,
                )
            )
            dropped_request = surrogate and outcome.status is OutcomeStatus.TIMEOUT
            if (
                outcome.status in (OutcomeStatus.CLOSED, OutcomeStatus.TIMEOUT) and not dropped_request
            ) or not connection.alive():
                keeper.restart(connection, f"{plan.info.name} case {index}: {outcome.status.value}")
                keeper.culprit = plan
