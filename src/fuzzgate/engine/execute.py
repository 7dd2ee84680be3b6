"""The engine: start the server, discover, fuzz every selected tool, verify, all inside the time box.

It yields events and returns an `EngineResult`; it never prints and never decides exit codes.
Servers are opened through a `Connector` (the real one starts or reaches the server; tests pass an
in-memory one), so the scheduler, the keeper, the oracles and verification run the same either way.
"""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from functools import partial
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types

from fuzzgate import __version__
from fuzzgate.check import Observation, Oracles
from fuzzgate.check.environment import environment_note
from fuzzgate.check.sdk import ServerFacts
from fuzzgate.check.secrets import SecretScanner, canary_environment, redactor_for
from fuzzgate.check.slow import time_defaults
from fuzzgate.config.views import ServerSettings
from fuzzgate.engine.calls import CallLoop
from fuzzgate.engine.collector import server_without_collector, without_collector
from fuzzgate.engine.deadline import Watched, fuzz_deadline, observe_s, side_by_side, verify_end, watch
from fuzzgate.engine.events import (
    CorpusReplayed,
    Discovered,
    EventSink,
    FeedbackReady,
    FindingTriaged,
    ServerReady,
    TriageStarted,
)
from fuzzgate.engine.feedback import seen_at_start, signal_of
from fuzzgate.engine.keeper import ServerKeeper
from fuzzgate.engine.next_case import Ahead, draw_ahead, next_case
from fuzzgate.engine.protocol_round import probe_server
from fuzzgate.engine.replay import connect
from fuzzgate.engine.result import (
    EngineResult,
    corpus_summary,
    feedback_summary,
    run_notes,
    surface_entries,
    target_summary,
)
from fuzzgate.engine.settings import EngineSettings
from fuzzgate.engine.spare import Spares, warm_spares
from fuzzgate.engine.verify import Connector, Verifier
from fuzzgate.generate._worker import DEFAULT_TIMEOUT_S, WORKER
from fuzzgate.generate.cases import Case
from fuzzgate.generate.probes import Probe, ProbeCase, probe_cases
from fuzzgate.learn.features import Feedback, Signal, SignalKind
from fuzzgate.learn.feed import Feed
from fuzzgate.learn.live_corpus import REPLAY_SHARE, LiveCorpus, Seeds
from fuzzgate.learn.sampling import CoverageSampling
from fuzzgate.model.commands import subject_label
from fuzzgate.model.errors import TargetError
from fuzzgate.model.findings import Finding, Repro
from fuzzgate.model.outcome import OutcomeStatus
from fuzzgate.plan.budget import TimeBox
from fuzzgate.plan.focus import focus, reached_files
from fuzzgate.plan.selection import Admission, Scheduler, ToolPlan, select
from fuzzgate.record.results import MemorySummary
from fuzzgate.sandbox import resident
from fuzzgate.sandbox.containment import UNCONTAINED_HTTP, Containment, contain, unheld_of, unobserved
from fuzzgate.target.connection import Connection, open_connection
from fuzzgate.target.discover import ToolInfo, discover
from fuzzgate.target.head_start import HeadStart
from fuzzgate.target.runtime import server_sdk
from fuzzgate.triage.finding_set import FindingSet

GENERATION_SHARE = 0.1
"""The longest one generation request may take, as a share of the budget (at least 1 s, at most
the worker's default): all tools share one generation worker, so a schema too costly to generate
for holds the others up until then."""
DEADLINE_REFRESH_S = 0.05
"""How stale fuzzing's deadline may be: it moves by seconds (a finding offered, a replay done)."""
UNANSWERED_START_STOP_S = 1.0
"""Kept back from the wait for a server's first `initialize` answer, beyond the run's own reserve:
stopping a server that never answered takes its input's half second, a SIGTERM and its jail."""


class Engine:
    def __init__(
        self,
        settings: EngineSettings,
        seed: int,
        emit: EventSink,
        *,
        timebox: TimeBox | None = None,
        connector: Connector = connect,
        settled: frozenset[str] = frozenset(),
        head_start: HeadStart | None = None,
    ) -> None:
        self.settings = settings
        self.head_start = head_start
        """The containment and first server start made before the engine was imported
        (`target.head_start`); taken over by the real connector."""
        self.settled = settled
        """Fingerprints whose evidence is settled elsewhere (a worker's store holds them confirmed):
        met again they are counted and returned as seen, never replayed."""
        self.seed = seed
        self.emit = emit
        self.timebox = timebox or TimeBox(settings.budget_s)
        self.canaries = canary_environment(seed) if settings.target.command is not None else {}
        self.redact = redactor_for(settings.server, self.canaries)
        self.containment: Containment | None = None
        """Set by `run` when fuzzgate starts the server itself (the real connector)."""
        self.connector = connector if connector is not connect else self._contained
        self.probes: dict[str, Probe] = {}
        """The probes built so far, by the file name only each could create."""
        self.server_facts = ServerFacts()
        """What the checks learn about the server once it is up (its SDK, whether it is jailed)."""
        self.oracles = self._oracles()
        self.findings = FindingSet(settings.severity, self.redact)
        self.loop = CallLoop(self)
        """Fuzzing's calls, and what they add up to (`engine.calls`)."""
        self.cut_off: tuple[str, ...] = ()
        self._watched: list[Watched] = []
        self._startup_s = 0.0
        """How long the first server took to start (its layer, jail, collector and handshake)."""
        self._discovered_in_time = False
        """Whether the server's listing was read before fuzzing's deadline: the budget went after it."""
        self.spares: Spares | None = None
        """The run's warm spares (`engine.spare`), for restarts and replays."""
        self._deadline = (-math.inf, 0.0)
        """When fuzzing's deadline was last worked out, and what it was."""
        self.verifier = self._verifier()
        self._base_containment: Containment | None = None
        self._base_lock = anyio.Lock()
        self.feedback = Feedback(Signal(SignalKind.OFF, "off: feedback = off"))
        self.live: LiveCorpus | None = None
        self.sampling: CoverageSampling | None = None
        """Under coverage feedback with `coverage_sampling` above 1: which calls are measured."""
        self._replay_end = 0.0
        self._replay_began: float | None = None
        self._replay_reported = False
        self._baseline: tuple[Finding, ...] = ()
        """The baseline's entries (`run`): those fuzzing has not met are replayed once it ends."""
        self.memory_peak = 0
        """The most resident memory one server of this run held, bytes (`_contained`)."""

    def offer(self, finding: Finding, ambiguous: bool) -> None:
        """Queue a finding's replays, unless its evidence is settled elsewhere."""
        if finding.fingerprint not in self.settled:
            self.verifier.offer(finding, ambiguous)

    def _seen_on_replay(self, observation: Observation, tool: str, repro: Repro) -> Finding:
        """What a replay showed of another call than the finding's, on a fresh server
        (`Verifier.on_seen`): a finding of its own, as if fuzzing had met it."""
        found = self.findings.add(observation, tool, repro)
        self.offer(found, observation.ambiguous)
        return found

    def _oracles(self) -> Oracles:
        canaries = self.containment.workspace.watched if self.containment is not None else ()
        return Oracles(
            slow_s=self.settings.slow_ms / 1000,
            scanner=SecretScanner(self.settings.server.secret_patterns, self.canaries),
            redact=self.redact,
            probes=self.probes,
            canaries=canaries,
            server=self.server_facts,
        )

    async def _learn_server(self, connection: Connection) -> None:
        """What the checks need to know of the server fuzzgate started: the SDK its process runs on,
        and whether the jail (loopback-only network, read-only outside the scope) holds it."""
        containment = self.containment
        self.server_facts.jailed = containment is not None and containment.jail
        process = connection.server
        if process is not None:
            self.server_facts.sdk = await anyio.to_thread.run_sync(server_sdk, process.pid)

    @asynccontextmanager
    async def _contained(self, server: ServerSettings, extra_env: Mapping[str, str]) -> AsyncIterator[Connection]:
        """The real connector, starting every server on a fresh layer of the run's containment (the
        first one, started ahead, taken over when it is the one asked for). As each server ends, the
        most memory it held goes into the run's peak (`memory_peak`)."""
        early = self.head_start.take(server, extra_env) if self.head_start is not None else None
        process = None
        try:
            async with open_connection(server, extra_env=extra_env, containment=self.containment, early=early) as found:
                process = found.server
                yield found
        finally:
            if process is not None:
                self.memory_peak = max(self.memory_peak, process.peak_memory)

    def _focus(self, plans: Sequence[ToolPlan], seeds: Seeds) -> str | None:
        """Weigh the tools the change reaches (`fuzzgate.plan.focus`); what was decided, for the notes."""
        changes = self.settings.changes
        if changes is None:
            return None
        reached = reached_files(((entry.surface.value, entry.tool), entry.files) for entry in seeds.entries)
        subjects = [((p.info.surface.value, p.info.name), subject_label(p.info.surface, p.info.name)) for p in plans]
        decided = focus(subjects, reached, changes)
        for plan in plans:
            plan.weight = decided.weights.get((plan.info.surface.value, plan.info.name), 1.0)
        return decided.note

    @property
    def _relayed(self) -> bool:
        """The server is an HTTP server fuzzgate starts in the sandbox, reached through the relay."""
        return self.containment is not None and self.containment.relay_port is not None

    def _verifier(self) -> Verifier:
        base = self.settings.base
        if base is not None:
            base = replace(base, server=server_without_collector(base.server))
        base_connector = self._base_contained if self.connector == self._contained else self.connector
        verifier = Verifier(
            without_collector(self.settings.verification),
            self.oracles,
            self.canaries,
            self.connector,
            base=base,
            base_connector=base_connector,
            relayed=self._relayed,
            unobserved=(
                unobserved(self.containment, self.settings.server.memory_limit)
                if self.connector == self._contained
                else None
            ),
        )
        verifier.on_seen = self._seen_on_replay
        return verifier

    @asynccontextmanager
    async def _base_contained(self, server: ServerSettings, extra_env: Mapping[str, str]) -> AsyncIterator[Connection]:
        """The base revision's servers, each on a fresh layer of a containment of their own (made at
        the first, with the head's scope names so that a repro's paths have their counterparts)."""
        async with self._base_lock:
            if self._base_containment is None:
                labels = self.settings.base.labels if self.settings.base is not None else ()
                self._base_containment = await anyio.to_thread.run_sync(
                    partial(contain, server.target, self.seed, labels=labels)
                )
        async with open_connection(server, extra_env=extra_env, containment=self._base_containment) as connection:
            yield connection

    def _probe_source(self, tool: ToolInfo, base: dict[str, Any]) -> list[ProbeCase]:
        containment = self.containment
        if containment is None:
            return []
        workspace = containment.workspace
        canaries = [c.relpath for c in workspace.canaries]
        cases = probe_cases(
            tool.name, tool.input_schema, base, workspace.token, canaries, workspace.boundary, containment.listener
        )
        for case in cases:
            if case.probe.marker is not None:
                self.probes[case.probe.marker] = case.probe
        return cases

    async def run(self, baseline: Sequence[Finding] = (), seeds: Seeds | None = None) -> EngineResult:
        """Fuzz, then verify new findings and the baseline entries fuzzing did not meet again.
        Raises `TargetError` when the server cannot be started or listed (or the sandbox is
        required and does not work here)."""
        if self.connector == self._contained:
            made = self.head_start.take_containment() if self.head_start is not None else None
            self.containment = made or await anyio.to_thread.run_sync(contain, self.settings.target, self.seed)
            # Guarded tools are fuzzed only where this containment's sandbox holds (the opt-in).
            selection = self.settings.selection.held_by(unheld_of(self.containment))
            self.settings = replace(self.settings, selection=selection)
            # The oracles read the canaries this containment planted.
            self.oracles = self._oracles()
            self.verifier = self._verifier()
        try:
            result = await self._run(baseline, seeds or Seeds())
        finally:
            # Not awaited: a cancelled run (SIGINT, SIGTERM) must still remove its workspaces.
            if self.head_start is not None:
                self.head_start.close()
            if self.containment is not None:
                self.containment.close()
            if self._base_containment is not None:
                self._base_containment.close()
        if self.containment is not None:
            summary: str | None = self.containment.summary
        else:
            # A server fuzzgate did not start (a URL alone) is contained by nothing: said, not left out.
            summary = UNCONTAINED_HTTP if self.connector == self._contained else None
        return replace(result, containment=summary, memory=self._memory())

    def _memory(self) -> MemorySummary | None:
        """The peak the memory watch read beside its limit; None when it watched no server: no limit,
        no `/proc`, or no server fuzzgate started (a URL alone)."""
        limit = self.settings.server.memory_limit
        started = self.connector == self._contained and self.settings.target.command is not None
        if limit is None or not resident.AVAILABLE or not started:
            return None
        return MemorySummary(limit=limit, peak=self.memory_peak)

    async def _run(self, baseline: Sequence[Finding], seeds: Seeds) -> EngineResult:
        # A stdio server is a process of its own, and so is an HTTP server fuzzgate starts in the
        # sandbox (on a loopback of its own): the next one can be started before it is needed.
        # Without the sandbox an HTTP server holds the URL's port: one at a time.
        together = side_by_side(self.settings.target, relayed=self._relayed)
        async with warm_spares(self.connector, enabled=together) as spares:
            self.spares = spares
            self.verifier.use_spares(spares)
            result = await self._fuzz_and_verify(baseline, seeds, spares)
        return result

    async def _fuzz_and_verify(self, baseline: Sequence[Finding], seeds: Seeds, spares: Spares) -> EngineResult:
        settings = self.settings
        box = self.timebox
        # The server may start within the margin too: a budget spent before it is up gives a run
        # with no calls (said in the notes), not a start-up failure, unless even the margin is spent.
        # Up to the latest the run may end, less stopping the server and writing the outputs: a
        # server that never answers `initialize` must not take the run past its promise (it took
        # 16 s of a 5 s budget). Such a server is stopped the slow way (its input closed, half a
        # second, then SIGTERM and its jail torn down): a second more is kept for that.
        latest = box.latest_end() - UNANSWERED_START_STOP_S - time.monotonic()
        startup_s = min(settings.server.startup_timeout_ms / 1000, max(0.1, latest))
        keeper = ServerKeeper(
            replace(settings.server, startup_timeout_ms=math.ceil(startup_s * 1000)),
            self.canaries,
            self.emit,
            self.connector,
            spares,
            # Two servers may run side by side where spares may (`deadline.side_by_side`).
            overlap=spares.enabled,
        )
        loop = self.loop
        loop.expect({entry.fingerprint for entry in baseline})
        self._baseline = tuple(baseline)
        verifier = self.verifier
        verifier.known = frozenset(loop.known)
        async with anyio.create_task_group() as verifying:
            verifying.start_soon(verifier.serve)
            # The generation worker's one-time start-up overlaps the server's.
            verifying.start_soon(partial(anyio.to_thread.run_sync, WORKER.warm_up, abandon_on_cancel=True))
            async with anyio.create_task_group() as tg:
                began = time.monotonic()
                first = await tg.start(keeper.run)
                self._startup_s = time.monotonic() - began
                box.mark("startup")
                await self._learn_server(first)
                info = first.server_info
                name, version = (info.name, info.version) if info else (None, None)
                self.emit(ServerReady(first.protocol_version, name, 0, version))
                summary = target_summary(settings.server, first)
                try:
                    with anyio.fail_after(max(0.1, box.remaining())):
                        inventory = await discover(first, settings.target.timeout_ms / 1000)
                except TimeoutError:
                    raise TargetError("listing the server's tools did not finish within the budget") from None
                box.mark("discovery")
                self._discovered_in_time = time.monotonic() < self._fuzz_deadline()
                # Once per server, before any tool call: the start-up banner and the protocol probes
                # (in share 1 only of a sharded run: the server as a whole is share 1's).
                if settings.selection.shard is None or settings.selection.shard.index == 1:
                    await probe_server(self, keeper, first, inventory.tools)
                loop.read_only = {tool.name for tool in inventory.tools if tool.read_only_hint}
                self.server_facts.time_defaults = {
                    tool.name: asked for tool in inventory.tools if (asked := time_defaults(tool.input_schema))
                }
                generation_s = min(DEFAULT_TIMEOUT_S, max(1.0, GENERATION_SHARE * settings.budget_s))
                selection = select(
                    inventory,
                    settings.selection,
                    self.seed,
                    generation_timeout_s=generation_s,
                    probe_source=self._probe_source if self.containment is not None else None,
                )
                verifier.admission = Admission.of(settings.selection, inventory)
                focus_note = self._focus(selection.plans, seeds)
                self.emit(
                    Discovered(selection.entries, inventory.resources, inventory.resource_templates, inventory.prompts)
                )
                scheduler = Scheduler(selection.plans, self._fuzz_deadline, settings.cases, settings.concurrency)
                feed = Feed(selection.plans, resources=inventory.resources)
                if first.layer is not None:
                    # The scope as the server sees it (its roots): a `repo_path` that must name the
                    # configured repository gets past the server's first check.
                    feed.dictionary.learn_uris("roots", first.layer.roots())
                # A protocol probe may have killed the first server: the keeper's is the live one.
                current = await keeper.get() or first
                await self._start_feedback(current, info, selection.plans, feed, seeds)
                async with anyio.create_task_group() as fuzzing:
                    fuzzing.start_soon(self._watch, scheduler, fuzzing.cancel_scope)
                    async with anyio.create_task_group() as workers:
                        for _ in range(max(1, settings.concurrency)):
                            workers.start_soon(loop.worker, scheduler, keeper, feed)
                    fuzzing.cancel_scope.cancel()
                if WORKER.busy():
                    # A generation request the deadline abandoned must not outlive the run.
                    WORKER.abort()
                keeper.stop_spares()
                tg.cancel_scope.cancel()
            box.mark("fuzzing")
            fuzz_elapsed = box.elapsed()
            self.cut_off = self._watched[-1].cut_off if self._watched else ()

            met = self.findings.items()
            candidates = [(finding, ambiguous) for finding, ambiguous in met if finding.fingerprint not in self.settled]
            settled = tuple(finding for finding, _ in met if finding.fingerprint in self.settled)
            seen = {finding.fingerprint for finding, _ in met}
            unseen = [entry for entry in baseline if entry.fingerprint not in seen]
            if candidates and settings.replays > 0:
                self.emit(TriageStarted(len(candidates), settings.replays))
            verification = await verifier.finish(candidates, unseen, verify_end(box, self._watched))
            spares.close()
            verifying.cancel_scope.cancel()
        for finding, dropped in verification.triaged:
            fingerprint = finding.fingerprint
            explained, moved = verification.explained.get(fingerprint), verification.moved.get(fingerprint)
            self.emit(FindingTriaged(finding, dropped, explained, moved))
        box.mark("verification")

        corpus = corpus_summary(self.feedback, self.live, seeds)
        unsendable = loop.not_sent.get(OutcomeStatus.UNSENDABLE, 0)
        client_failed = loop.not_sent.get(OutcomeStatus.CLIENT_FAILED, 0)
        notes = run_notes(
            verification.notes,
            corpus=corpus,
            cut_off=self.cut_off,
            observe=self._observe_s(),
            calls=loop.calls,
            unsendable=unsendable,
            client_failed=client_failed,
            client_failure=loop.client_failure,
            selection=selection,
            discovered_in_time=self._discovered_in_time,
        )
        environment = self.server_facts.environment
        notes = (*notes, *(environment_note(cause, environment[cause]) for cause in sorted(environment)))
        if focus_note is not None:
            notes = (*notes, focus_note)
        entries = surface_entries(inventory, selection.entries, selection.plans)
        return EngineResult(
            target=summary,
            entries=entries,
            inventory=inventory,
            findings=verification.findings + settled,
            calls=loop.calls,
            duration_s=fuzz_elapsed,
            unsendable=unsendable,
            client_failed=client_failed,
            baseline_failing=verification.baseline_failing,
            baseline_unverified=verification.baseline_unverified,
            pre_existing=verification.pre_existing,
            notes=notes,
            timing=dict(box.marks),
            feedback=feedback_summary(self.feedback, self.sampling),
            corpus=corpus,
            corpus_added=self.live.added() if self.live is not None else (),
            cut_off=self.cut_off,
            accepting=frozenset((p.info.surface, p.info.name) for p in selection.plans if p.accepted is not None),
        )

    async def _start_feedback(
        self, first: Connection, info: types.Implementation | None, plans: Sequence[ToolPlan], feed: Feed, seeds: Seeds
    ) -> None:
        signal = signal_of(self.settings.target, first)
        self.feedback = Feedback(signal)
        if signal.kind is SignalKind.OFF:
            self.emit(FeedbackReady(signal.kind.value, signal.note, 0, None))
            return
        await seen_at_start(self.feedback, first, feed)
        if signal.kind is SignalKind.COVERAGE and self.settings.coverage_sampling > 1:
            self.sampling = CoverageSampling(self.seed, self.settings.coverage_sampling)
        environment = {"fuzzgate": __version__, "signal": signal.kind.value}
        if info is not None:
            environment["server"] = f"{info.name} {info.version}".strip()
        self.live = LiveCorpus(
            plans, seeds.entries, seed=self.seed, signal=signal.kind.value, environment=environment,
            dictionary=feed.dictionary,
        )  # fmt: skip
        now = time.monotonic()
        self._replay_began = now if seeds.entries else None
        self._replay_end = now + REPLAY_SHARE * max(0.0, self._fuzz_deadline() - now)
        self.emit(FeedbackReady(signal.kind.value, signal.note, len(seeds.entries), seeds.cold, seeds.skipped))

    def _replay_done(self) -> None:
        live = self.live
        if live is None or self._replay_reported or self._replay_began is None or live.replaying:
            return
        self._replay_reported = True
        seconds = time.monotonic() - self._replay_began
        live.note_replay(seconds)
        stats = live.stats
        self.emit(CorpusReplayed(stats.replayed, stats.kept, stats.skipped, seconds))

    def _fuzz_deadline(self) -> float:
        """Fuzzing's deadline (`deadline.fuzz_deadline`), worked out again at most every
        `DEADLINE_REFRESH_S`: the scheduler asks before every case."""
        now = time.monotonic()
        if now - self._deadline[0] >= DEADLINE_REFRESH_S:
            self._deadline = (now, self._work_out_deadline())
        return self._deadline[1]

    def _work_out_deadline(self) -> float:
        verifier = self.verifier
        # Replays start servers without the collector: measured once one has started, else the
        # first server's start stands for theirs (it ran the collector: an overestimate).
        measured = self.spares.start_s(verifier.settings.server) if self.spares is not None else None
        backlog = verifier.backlog(
            measured if measured is not None else self._startup_s,
            self.loop.durations,
            default_s=max(self.loop.durations.values(), default=0.1),
            unseen=[entry for entry in self._baseline if entry.fingerprint in self.loop.known],
        )
        return fuzz_deadline(
            self.timebox, self.settings.target, backlog=backlog, observe=self._observe_s(), relayed=self._relayed
        )

    def _observe_s(self) -> float:
        return observe_s(self.settings.target, traced=self.feedback.signal.kind is SignalKind.COVERAGE)

    async def _watch(self, scheduler: Scheduler, scope: anyio.CancelScope) -> None:
        await watch(self._fuzz_deadline, self._observe_s, self.timebox, self.loop.open, scheduler, self._watched)
        scope.cancel()

    async def next_case(self, scheduler: Scheduler, feed: Feed, ahead: Ahead) -> tuple[ToolPlan, Case] | None:
        """The next case to send: the live corpus's replay first, then the case drawn `ahead`, then
        the scheduler's (`engine.next_case`)."""
        return await next_case(scheduler, feed, self.live, self._replay_end, self._replay_done, ahead)

    async def draw_ahead(self, scheduler: Scheduler, feed: Feed, ahead: Ahead) -> None:
        """Draw the scheduler's next case into `ahead` while a call is on its way (`engine.next_case`)."""
        await draw_ahead(scheduler, feed, self.live, ahead)
