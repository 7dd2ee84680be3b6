"""Fuzzing's calls: take the next case, send it on the keeper's live server, and record what it
showed (the features it reached, the findings it gave, the restart it needs), as many workers as
`concurrency` at once. What the calls add up to (requests the server received, those that never
reached it, the longest call per fingerprint) is read by the engine for its deadline and its result.

A call counts only if it reached the server: a request fuzzgate's own client could not send
(`NOT_SENT`) is counted apart and never enters what a repro says the server saw.

A call is judged (its features, what the feed and the corpus learn from it, the oracles' verdict,
its event) while the worker's next call is on its way, where nothing the next pick reads depends on
it (`_judged_now` says when it does); what decides the next call (its counts, the request's place in
what the tool was sent, the coverage it reached, the restart it needs) is recorded at once. So the
case a worker sends as its call k is picked from what calls before k - 1 showed, and from k - 1's
own record: the same for a seed every time, whatever the timing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

import anyio
import anyio.lowlevel

from fuzzgate.check import Oracles, has_lone_surrogate
from fuzzgate.check.traceback import reports_fatal_error
from fuzzgate.engine.collector import COLLECT_TIMEOUT_S
from fuzzgate.engine.events import CallFinished, EventSink, FuzzingStopped
from fuzzgate.engine.feedback import call_coverage, observe_features
from fuzzgate.engine.keeper import ServerKeeper
from fuzzgate.engine.next_case import Ahead
from fuzzgate.engine.settings import EngineSettings
from fuzzgate.engine.steps import send_step
from fuzzgate.engine.verdict import verdict
from fuzzgate.generate.cases import Case
from fuzzgate.generate.dictionary import Held, held_values, reply_held
from fuzzgate.learn.features import Feedback
from fuzzgate.learn.feed import Feed
from fuzzgate.learn.live_corpus import LiveCorpus
from fuzzgate.learn.sampling import CoverageSampling
from fuzzgate.model.commands import subject_label
from fuzzgate.model.findings import Finding, Step, Surface
from fuzzgate.model.outcome import NOT_SENT, AfterTimeout, CallOutcome, OutcomeStatus
from fuzzgate.plan.budget import TimeBox
from fuzzgate.plan.selection import FAIR_SLACK_S, Scheduler, ToolPlan
from fuzzgate.target.call import AFTER_REPLY_S, FOLLOW_UP_S, follow_reply, ping
from fuzzgate.target.connection import Connection
from fuzzgate.triage.finding_set import FindingSet
from fuzzgate.triage.sequence import HISTORY_STEPS

__all__ = ["CallLoop"]

_LIVE_CORPUS_ORIGINS = ("corpus:", "corpus-prefix:", "shrink:")
_WATCH_TICK_S = 0.25
"""How often a worker's watch looks at its call in flight (`CallLoop._watch`)."""
_IDLE_PING_S = 0.2
"""How soon a server must answer a ping, beside a slow call, for a helper to send calls beside it."""
_AHEAD_AFTER_TURNS = 8
"""How many turns of the event loop the next case's drawing lets pass before it starts
(`CallLoop._draw_ahead`): the request must be on the wire first, and on its way it passes the SDK's
tasks, the stdin pump or the HTTP client's. Measured on the fast example: written within 2 turns
over stdio and 4 over HTTP; 3 to 20 turns gave the same call rates, none fewer over HTTP."""


@dataclass(slots=True, eq=False)
class _InFlight:
    """One pending call, and the most calls that were in flight at once while it was pending."""

    peak: int = 1


@dataclass(slots=True, eq=False)
class _Pending:
    """A worker's call in flight: since when, and whether it ended."""

    since: float
    connection: Connection
    plan: ToolPlan
    ended: anyio.Event = field(default_factory=anyio.Event)


@dataclass(slots=True, eq=False)
class _Behind:
    """A worker's last call, waiting to be judged while its next call is on its way (`CallLoop._call`)."""

    judge: Callable[[], None] | None = None

    def settle(self) -> None:
        """Judge the call waiting, if one is (synchronous: a cancelled worker still judges it)."""
        judge, self.judge = self.judge, None
        if judge is not None:
            judge()


@dataclass(slots=True, eq=False)
class _Watched:
    """What a worker's watch reads (`CallLoop._watch`): its call in flight, and whether it is done."""

    pending: _Pending | None = None
    done: anyio.Event = field(default_factory=anyio.Event)


class _Run(Protocol):
    """What the calls read of the engine."""

    @property
    def settings(self) -> EngineSettings: ...
    @property
    def seed(self) -> int: ...
    @property
    def emit(self) -> EventSink: ...
    @property
    def timebox(self) -> TimeBox: ...
    @property
    def oracles(self) -> Oracles: ...
    @property
    def findings(self) -> FindingSet: ...
    @property
    def feedback(self) -> Feedback: ...
    @property
    def live(self) -> LiveCorpus | None: ...
    @property
    def sampling(self) -> CoverageSampling | None: ...
    def offer(self, finding: Finding, ambiguous: bool) -> None: ...
    async def next_case(self, scheduler: Scheduler, feed: Feed, ahead: Ahead) -> tuple[ToolPlan, Case] | None: ...
    async def draw_ahead(self, scheduler: Scheduler, feed: Feed, ahead: Ahead) -> None: ...


async def _answers(connection: Connection) -> bool:
    """Whether the server answers a ping within `_IDLE_PING_S` (`CallLoop._watch`)."""
    return not connection.broken and await ping(connection, _IDLE_PING_S) is AfterTimeout.ALIVE


class CallLoop:
    """The fuzzing workers' loop (`worker`), and what their calls add up to."""

    def __init__(self, run: _Run) -> None:
        self.run = run
        self.calls = 0
        """Requests the server received (`NOT_SENT` outcomes are counted apart)."""
        self.not_sent: dict[OutcomeStatus, int] = {}
        self.client_failure: str | None = None
        """The first failure of fuzzgate's own side of a connection, for the notes."""
        self.open: dict[object, str] = {}
        """Calls sent whose findings are not recorded yet (`tool case N`): the deadline's grace
        waits for them."""
        self.durations: dict[str, float] = {}
        """The longest call seen per fingerprint, for the verification estimate."""
        self.known: set[str] = set()
        """The baseline's fingerprints fuzzing has not met yet: each is a replay after fuzzing."""
        self.read_only: Collection[str] = frozenset()
        """Tools annotated read-only: a repro keeps their calls only among the most recent."""
        self._in_flight: set[_InFlight] = set()
        self._surrogates_sent: set[tuple[Surface, str, str]] = set()
        self._surrogates_dropped = False
        settings = run.settings
        self._overlap_s = settings.slow_ms / 1000 if settings.cases is None else None
        """How long a call is waited for alone (`_watch`); None: always (with `--cases` the order of
        the requests never reads the clock)."""
        self._helping = False

    def expect(self, known: Collection[str]) -> None:
        """The baseline's fingerprints: each one met is one fewer baseline replay after fuzzing."""
        self.known = set(known)

    async def worker(self, scheduler: Scheduler, keeper: ServerKeeper, feed: Feed) -> None:
        """Send cases until the scheduler has none left or the server cannot be restarted. In a
        time-boxed run, a call still pending past the slow threshold no longer holds the others up:
        a helper sends the next cases beside it until it ends (`_watch`)."""
        watched = _Watched()
        async with anyio.create_task_group() as helpers:
            if self._overlap_s is not None:
                helpers.start_soon(self._watch, watched, scheduler, keeper, feed)
            try:
                await self._work(scheduler, keeper, feed, watched, None)
            finally:
                watched.done.set()

    async def _work(
        self, scheduler: Scheduler, keeper: ServerKeeper, feed: Feed, watched: _Watched, beside: anyio.Event | None
    ) -> None:
        """The worker's loop; `beside`: a helper's, which leaves once the slow call it stands in
        for has ended."""
        ahead = Ahead()
        behind = _Behind()
        try:
            await self._loop(scheduler, keeper, feed, watched, beside, ahead, behind)
        finally:
            behind.settle()
            ahead.give_back(scheduler, self.run.live)

    async def _loop(
        self,
        scheduler: Scheduler,
        keeper: ServerKeeper,
        feed: Feed,
        watched: _Watched,
        beside: anyio.Event | None,
        ahead: Ahead,
        behind: _Behind,
    ) -> None:
        while beside is None or not beside.is_set():
            item = await self.run.next_case(scheduler, feed, ahead)
            if item is None:
                return
            plan, case = item
            waited = time.monotonic()
            connection = await keeper.get()
            if keeper.culprit is not None:
                # A restart is the cost of the call that crashed or hung the server: charge its tool.
                scheduler.record(keeper.culprit, time.monotonic() - waited)
                keeper.culprit = None
            if connection is None:
                scheduler.stopped = True
                reason = keeper.failure.message if keeper.failure else "the server could not be restarted"
                self.run.emit(FuzzingStopped(reason))
                return
            surrogate = has_lone_surrogate(case.arguments)
            key = (plan.info.surface, plan.info.name, case.origin)
            if surrogate and (self._surrogates_dropped or key in self._surrogates_sent):
                # Each lone-surrogate value goes once per field, and not at all once the server is
                # known to drop such requests: every one costs a timeout.
                continue
            if surrogate:
                self._surrogates_sent.add(key)
            measured = await self._measure(connection, plan, case)
            if not scheduler.running():
                # Fuzzing's deadline came while the server restarted or the collector switched: the
                # case is not sent. The deadline's grace (`deadline.observe_s`) is for calls on their
                # way, from their request on.
                return
            token = object()
            self.open[token] = f"{subject_label(plan.info.surface, plan.info.name)} case {case.index}"
            # Only the worker's own calls are watched (`_watch`), and only in a time-boxed run.
            pending = _Pending(time.monotonic(), connection, plan) if beside is None and self._overlap_s else None
            if pending is not None:
                watched.pending = pending
            try:
                await self._call(scheduler, keeper, feed, connection, plan, case, surrogate, measured, ahead, behind)
            finally:
                if pending is not None:
                    pending.ended.set()
                    watched.pending = None
                # Open until judged: the deadline's grace waits for its findings (`_Behind`).
                if behind.judge is None:
                    del self.open[token]
                else:
                    behind.judge = _closing(behind.judge, self.open, token)

    async def _watch(self, watched: _Watched, scheduler: Scheduler, keeper: ServerKeeper, feed: Feed) -> None:
        """A call pending past the slow threshold is a slow call or a hang: waiting for it alone
        would spend the timeout sending nothing (a 5 s hang is a quarter of a 20 s run). So from then
        on a helper sends the next cases beside it (other tools' while there are any:
        `Scheduler.waiting`), and the next server is started ahead, since a call this slow often
        ends in a restart. Only while the server answers a ping at once: one
        busy with the slow call (a blocked event loop, a traceback being printed) would only queue
        the helper's calls behind it, and make them look slow. Calls sent beside it are concurrent
        (their findings are confirmed alone, as with `--concurrency`); a restart lets them end
        first (`ServerKeeper.restart`). The worker's call is looked at every `_WATCH_TICK_S` rather
        than timed one by one, which would cost every call a task."""
        assert self._overlap_s is not None
        while not watched.done.is_set():
            with anyio.move_on_after(_WATCH_TICK_S):
                await watched.done.wait()
            pending = watched.pending
            if pending is None or self._helping or not scheduler.running():
                continue
            if time.monotonic() - pending.since < self._overlap_s or not await _answers(pending.connection):
                continue
            self._helping = True
            keeper.expect_restart()
            waiting = (pending.plan.info.surface, pending.plan.info.name)
            scheduler.waiting.add(waiting)
            try:
                await self._work(scheduler, keeper, feed, watched, pending.ended)
            finally:
                scheduler.waiting.discard(waiting)
                self._helping = False

    async def _draw_ahead(self, scheduler: Scheduler, feed: Feed, ahead: Ahead, behind: _Behind) -> None:
        """Judge the call before, then draw the next case (`next_case.draw_ahead`), while the call
        is on its way, once its request has had the loop turns it needs to reach the wire."""
        for _ in range(_AHEAD_AFTER_TURNS):
            await anyio.lowlevel.checkpoint()
        behind.settle()
        await self.run.draw_ahead(scheduler, feed, ahead)

    async def _measure(self, connection: Connection, plan: ToolPlan, case: Case) -> bool:
        """Whether the collector measures this call (`learn.sampling`); the live corpus's calls
        always are (it keeps and shrinks by what they reach). With no other call in flight, the
        collector is switched off for the calls it does not measure; with several in flight it runs
        on, and only their collects are skipped."""
        sampling = self.run.sampling
        if sampling is None or case.origin.startswith(_LIVE_CORPUS_ORIGINS):
            measured = True
        else:
            label = subject_label(plan.info.surface, plan.info.name)
            measured = sampling.measures(plan.info.surface, plan.info.name, label)
        channel = connection.coverage
        if channel is not None and self.run.settings.concurrency == 1 and not self._in_flight and connection.alive():
            await channel.measure(measured, COLLECT_TIMEOUT_S)
        return measured

    async def _call(
        self,
        scheduler: Scheduler,
        keeper: ServerKeeper,
        feed: Feed,
        connection: Connection,
        plan: ToolPlan,
        case: Case,
        surrogate: bool,
        measured: bool,
        ahead: Ahead,
        behind: _Behind,
    ) -> None:
        """Send one case and record what it showed: features, findings, the restart it needs.
        `measured`: whether the collector measures it (`_measure`). The call before it is judged
        while it is on its way (`behind`), and this one then waits in `behind` in its turn, unless
        what it showed decides the next call (`_judged_now`)."""
        target = self.run.settings.target
        index = case.index
        pending = _InFlight()
        self._in_flight.add(pending)
        for other in self._in_flight:
            other.peak = max(other.peak, len(self._in_flight))
        # The calls before this one (a C-speed copy: others may append while it runs); what a repro
        # keeps of them is picked only for a call that shows something (`verdict`).
        history = connection.history[-HISTORY_STEPS:]
        surface = plan.info.surface
        connection.in_flight += 1
        try:
            if ahead.item is None:
                # The next case is drawn while this one is on its way; the reply is read only once
                # it is drawn, so what it reads is what the calls before this one left, every time.
                async with anyio.create_task_group() as drawing:
                    drawing.start_soon(self._draw_ahead, scheduler, feed, ahead, behind)
                    step = await send_step(connection, target, plan.info.name, case.arguments, surface=surface)
            else:
                step = await send_step(connection, target, plan.info.name, case.arguments, surface=surface)
        finally:
            self._in_flight.discard(pending)
            connection.in_flight -= 1
        # Judged while this call was on its way if a case was drawn; else now, before this one.
        behind.settle()
        outcome = replace(step.outcome, concurrent=pending.peak)
        if not connection.alive():
            # Answered, and dead before the next request: the death is this call's, and nothing is
            # collected from the dead server.
            outcome = await follow_reply(connection, outcome, step.stderr_mark)
        elif reports_fatal_error(outcome.stderr):
            # Answered, and reporting the error it is about to die of (a promise rejected after
            # the reply): its death is this call's too, not the next one's.
            outcome = await follow_reply(connection, outcome, step.stderr_mark, wait_s=AFTER_REPLY_S)
        if self._overlap_s is not None and outcome.duration_s > FAIR_SLACK_S:
            # The case drawn ahead was chosen before this call's time was charged to its tool: one
            # this long may change which tool's turn it is (`Scheduler.next`), so it is chosen again.
            ahead.give_back(scheduler, self.run.live)
        # The reply is parsed and walked once, for the step's values and for the feed's dictionary.
        found = reply_held(plan.info.name, outcome.payload) if outcome.status is OutcomeStatus.OK else ()
        produced = held_values(plan.info.name, found) if found else ()
        sent = Step(plan.info.name, step.arguments, case.schema_valid, surface, produced)
        if outcome.status in NOT_SENT:
            # The server never received it: not a call, and not part of what the server saw.
            self.not_sent[outcome.status] = self.not_sent.get(outcome.status, 0) + 1
            if outcome.status is OutcomeStatus.CLIENT_FAILED:
                self.client_failure = self.client_failure or outcome.error
        else:
            connection.history.append(sent)
            if len(connection.history) > 2 * HISTORY_STEPS:
                del connection.history[:-HISTORY_STEPS]
            self.calls += 1
        if not case.origin.startswith(_LIVE_CORPUS_ORIGINS):
            # Seeds, their prefixes and shrink candidates are the corpus's calls, not the tool's
            # scheduled cases: `--cases` bounds those.
            plan.calls += 1
        elif outcome.status not in NOT_SENT:
            plan.corpus_calls += 1
        plan.answered(case, outcome.duration_s, outcome.status not in NOT_SENT, outcome.status is OutcomeStatus.OK)
        scheduler.record(plan, outcome.duration_s)
        # Read now, before the next call runs in the server: what the collector measured is this call's.
        coverage = await call_coverage(self.run.feedback, connection, feed, plan, outcome, measured)
        chain_prefix = feed.chain_prefix(case)
        # The next pick must not send this very request again to a server in the same state.
        feed.record_sent(plan, case, outcome)
        calls = self.calls

        def judge() -> None:
            observed = observe_features(self.run.feedback, plan, outcome, case.arguments, coverage)
            if self.run.sampling is not None:
                self.run.sampling.after(surface, plan.info.name, measured, bool(observed.new))
            new_behaviour = feed.after_call(plan, case, outcome, step.arguments, sent, found, recorded=True)
            scheduler.behaved(plan, new_behaviour or bool(observed.new))
            if self.run.live is not None:
                self.run.live.after_call(plan, case, outcome, observed, sent, chain_prefix)
            observations, repro = verdict(
                self.run.oracles, self.run.seed, connection, plan, case, step, outcome, history, self.read_only
            )
            for observation in observations:
                finding = self.run.findings.add(observation, plan.info.name, repro)
                self.run.offer(finding, observation.ambiguous)
                previous = self.durations.get(finding.fingerprint, 0.0)
                self.durations[finding.fingerprint] = max(previous, outcome.duration_s)
                if finding.fingerprint in self.known:
                    self.known.discard(finding.fingerprint)
            self.run.emit(
                CallFinished(
                    tool=plan.info.name,
                    case_index=index,
                    arguments=case.arguments,
                    schema_valid=case.schema_valid,
                    origin=case.origin,
                    outcome=outcome,
                    observations=len(observations),
                    calls=calls,
                    findings=len(self.run.findings),
                    elapsed_s=self.run.timebox.elapsed(),
                    surface=surface,
                    behaviours=self.run.feedback.behaviours,
                    lines=self.run.feedback.lines,
                    arcs=self.run.feedback.arcs,
                    corpus=self.run.live.size() if self.run.live is not None else 0,
                )
            )

        dropped = outcome.status is OutcomeStatus.TIMEOUT and outcome.after_timeout is AfterTimeout.ALIVE
        if surrogate and outcome.status is OutcomeStatus.TIMEOUT:
            self._surrogates_dropped = True
        # A server that dropped a lone-surrogate request and answers the rest keeps its state.
        # A session whose client side failed is reopened: nothing sent on it reaches the server.
        restart = (
            (outcome.status in (OutcomeStatus.CLOSED, OutcomeStatus.TIMEOUT) and not (dropped and surrogate))
            or not connection.alive()
            or connection.broken
        )
        if restart or _judged_now(case, outcome, found, chain_prefix):
            judge()
        else:
            behind.judge = judge
        if restart:
            # The calls sent beside one that hung alone (`_watch`) are let end before the restart,
            # within their timeout: their findings are as good as any.
            drain_s = target.timeout_ms / 1000 + FOLLOW_UP_S if outcome.after_timeout is AfterTimeout.ALIVE else 0.0
            how = "answered, then died" if outcome.died_after_reply else outcome.status.value
            keeper.restart(connection, f"{plan.info.name} case {index}: {how}", drain_s)
            keeper.culprit = plan
            feed.restarted()
            if self.run.live is not None:
                self.run.live.restarted()


def _judged_now(case: Case, outcome: CallOutcome, found: Sequence[Held], chain_prefix: Sequence[Step]) -> bool:
    """Whether a call is judged before the next call is picked: when what it showed may decide that
    call. A reply holding values may start a sequence whose first step goes next (`Feed.after_call`);
    a sequence's step is followed by its next step; the live corpus's calls (a seed's replay, a
    shrink try) by the one their result chooses. A call that needs a restart is judged before the
    restart too (`CallLoop._call`)."""
    return (
        bool(found and outcome.status is OutcomeStatus.OK)
        or bool(chain_prefix)
        or case.origin.startswith((*_LIVE_CORPUS_ORIGINS, "sequence:"))
    )


def _closing(judge: Callable[[], None], open_calls: dict[object, str], token: object) -> Callable[[], None]:
    """`judge`, then the call's entry in `open_calls` removed (`CallLoop.open`)."""

    def judged() -> None:
        try:
            judge()
        finally:
            open_calls.pop(token, None)

    return judged
