"""Verification: confirm each finding on fresh servers, and replay the baseline entries fuzzing did
not meet again, all within the run's time box.

Every replay is one job on a fresh server. For a stdio target fresh servers are processes of
their own, so confirmation starts while fuzzing goes on, on warm spares (`engine.spare`, set by
`use_spares`): while tries are still to start, a spare per replay that may run at once is started
ahead, so a replay is mostly its server's start, paid before it is needed. Sending one repro to a
fresh server is `engine.replay`. Beside fuzzing one replay runs at a
time (with spares or without), to leave the fuzzer its CPU: on two cores, replays and spares
starting side by side took most of a 20 s run's calls; several at once (`parallel_replays`) when
fuzzing ends. An HTTP server fuzzgate starts in the sandbox has a loopback, and a port, of its own,
and is replayed as a stdio server is; otherwise an HTTP target's server holds its port (fuzzgate's
own without the sandbox, or one server the user started), so its replays wait for fuzzing to end
and run one at a time. A finding's replays take turns with the other findings' (round by round),
so a deadline leaves every finding some replays rather than a few findings all of theirs; smaller
calls to try (below) wait while any replay does. Replays always send the finding's current repro:
when fuzzing later keeps a smaller one, its tally starts again. What is still to run, and what it
costs, is the fuzzing deadline's estimate (`Verifier.backlog`).

A repro with a prefix (the calls the server received before the failing one) is first sent alone,
then whole; the first that reproduces counts as the first replay, and a whole sequence that does is
shrunk (`fuzzgate.triage.sequence`). A finding that reproduces only with its prefix is confirmed, not
flaky; flaky is what does not reproduce even with it.

A finding that reproduced on every replay then has its failing call shrunk (`triage.minimize`):
one smaller call per job, each on a fresh server, taking turns with the other findings' smaller
calls once no replay waits, until no smaller call gives the same fingerprint, `minimize.MAX_TRIES`
are spent, or the deadline comes.
Every smaller call kept reproduced; the call fuzzing sent stays in `Repro.original_arguments`. A
call already short (`minimize.SMALL_CALL_CHARS`), a protocol probe's raw message, and a tool the
server no longer lists are left as they are.

What the deadline cuts short is said, never hidden:

- a finding replayed fewer times than asked is labelled on the replays that finished;
- a finding never replayed is `unconfirmed` (the budget ran out, or no fresh server could be
  reached: an HTTP target without a command), and an unconfirmed new finding at or above fail-on
  fails the gate (it was observed; it only could not be replayed); below fail-on, one whose every
  hit was ambiguous (seen only beside other calls, or slow under the collector) is not reported,
  and a note counts it: it gates nothing, and its evidence is what a replay would have weighed;
- at any severity, one whose every hit was ambiguous and whose evidence (kind and signature) a
  finding of another call seen alone or reproduced shows is that call's symptom
  (`labels.Explainer`): dropped
  unless a replay reproduced it, and a note counts it. Its replays wait until fuzzing is over and
  every other job has run, and the fuzzing deadline reserves no time for them;
- a baseline entry whose replays did not finish stays known (`unverified`), never "fixed"; so does
  one whose fresh server could not be started (not replayed: the note gives the start error);
- so does one whose repro was redacted (`Repro.redacted`) and did not fail again: a secret it sent
  was replayed as `[REDACTED]`, unless a reply brought it, so its passing proves no fix.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import anyio

from fuzzgate.check import Observation, Oracles
from fuzzgate.engine.base_check import BASE_ATTEMPTS, BaseRevision, BaseTally
from fuzzgate.engine.deadline import (
    Backlog,
    backlog_of,
    baseline_replay_s,
    parallel_replays,
    replay_wait_s,
    side_by_side,
    stop_allowance,
)
from fuzzgate.engine.feedback import lost
from fuzzgate.engine.labels import OWN_TIMING, BaseChecks, BaselineTally, Explainer, Tally, Verification, label
from fuzzgate.engine.replay import connect, replay_once, repro_calls
from fuzzgate.engine.settings import VerifySettings
from fuzzgate.engine.spare import Connector, Spares
from fuzzgate.generate.shrink import smaller_calls
from fuzzgate.model.errors import TargetError
from fuzzgate.model.findings import Finding, Kind, Repro, Surface
from fuzzgate.model.outcome import CallOutcome
from fuzzgate.plan.selection import Admission, NotSelected
from fuzzgate.triage import sequence
from fuzzgate.triage.finding_set import evidence, fingerprint, severity_of, subject
from fuzzgate.triage.minimize import CallShrinker, worth_shrinking

REPLAYS_WHILE_FUZZING = 1
"""Beside fuzzing, one at a time: replays without warm spares (each pays its server's start), and
smaller calls to try with them."""
SETTLE_ESTIMATE = 1
"""Tries a sequence repro takes beyond its replays before it is confirmed, at most: the failing call
alone, when it does not reproduce so (the try that reproduces counts as the first replay, alone or
the whole sequence). Shrinking the sequence then takes what time is left, as shrinking arguments
does; the deadline reserves none for either. (It was 3, shrinking counted: on a server answering
every call statelessly, where every finding carries the calls before it and reproduces alone, the
estimate was twice what verification took.)"""

MOVE_TRIES = 16
"""Fresh servers a crash's sequence may take to find the call the server died after
(`Verifier._died_after_earlier_call`): 2 when it is the call before the failing one (the usual
case), about twice the log2 of the prefix's length when it is far back (12 for 100 calls)."""

__all__ = ["Backlog", "Connector", "Verification", "Verifier", "parallel_replays"]


@dataclass(frozen=True, slots=True)
class _ShrinkTry:
    """One smaller call of a finding's to replay (`CallShrinker.next`)."""

    tally: Tally
    generation: int


_Job = tuple[Tally, int] | BaselineTally | BaseTally | _ShrinkTry


def _cost_rank(job: _Job) -> tuple[bool, bool]:
    """Which replays go first once fuzzing is over: a finding seen alone before one only seen beside
    other calls (its replay may hang or settle a long sequence, and may well not reproduce), and
    among each, one whose replay costs no timeout (not a hang or a slow call) first. Measured on the
    example server over HTTP, its replays one at a time after fuzzing: the two ambiguous crashes and
    the slow tool went first, 3 to 6 s a replay, and 18 s of verification confirmed 2 of 11 findings."""
    if not isinstance(job, tuple):
        return (False, False)
    tally = job[0]
    return (tally.ambiguous, tally.finding.kind in OWN_TIMING)


def _dear(job: _Job) -> bool:
    """A replay of a finding whose call takes its own time (a hang's timeout, a slow call): its
    replays, one after another, may be verification's longest chain (`_next_job`). Seen beside
    other calls or not: a hang always is (calls go out beside a call that takes this long,
    `CallLoop._watch`), and its time is its own (`labels.OWN_TIMING`)."""
    return isinstance(job, tuple) and job[0].finding.kind in OWN_TIMING


class Verifier:
    """Replays findings as they are offered, and the baseline at the end.

    Use: `async with anyio.create_task_group() as tg: tg.start_soon(verifier.serve)`, `offer()`
    each finding as fuzzing records it, then `await verifier.finish(unseen, deadline)`.
    """

    def __init__(
        self,
        settings: VerifySettings,
        oracles: Oracles,
        extra_env: Mapping[str, str],
        connector: Connector = connect,
        *,
        base: BaseRevision | None = None,
        base_connector: Connector | None = None,
        relayed: bool = False,
        unobserved: Mapping[Kind, str] | None = None,
    ) -> None:
        """`relayed`: fuzzgate starts the (HTTP) server in the sandbox, on a loopback of its own, so
        fresh servers can run beside the one fuzzing (`deadline.side_by_side`). `unobserved`: the
        kinds whose evidence its servers cannot show, with why (`containment.unobserved`): baseline
        entries of them are not replayed, and stay known."""
        self.settings = settings
        self.unobserved: Mapping[Kind, str] = unobserved or {}
        self.base = base
        self.base_connector = base_connector or connector
        self.known: frozenset[str] = frozenset()
        """The baseline's fingerprints: a finding it holds is never checked on the base."""
        self._base: dict[str, BaseTally] = {}
        self._base_error: str | None = None
        self.oracles = oracles
        self.extra_env = extra_env
        self.connector = connector
        self.admission: Admission | None = None
        """What the run selected (set once the server is listed): what replays may send."""
        self._parallel = parallel_replays(settings.target, relayed=relayed)
        # Otherwise an HTTP target's replays wait for fuzzing to end: the fuzzing server holds the
        # port (or, when fuzzgate does not start it, is the only server).
        background = REPLAYS_WHILE_FUZZING if side_by_side(settings.target, relayed=relayed) else 0
        self._limiter = anyio.CapacityLimiter(max(1, background))
        self._open = background > 0
        self._tallies: dict[str, Tally] = {}
        self._baseline: list[BaselineTally] = []
        self._jobs: deque[_Job] = deque()
        self._explained: deque[tuple[Tally, int]] = deque()
        """Replays of findings another call's evidence explains (`labels.Explainer`): set aside until
        fuzzing is over and nothing else waits, since a replay can only keep what is dropped without
        one (left out of the fuzzing deadline's backlog)."""
        self._shrink_jobs: deque[_Job] = deque()
        """Smaller calls to try: they wait while any finding has replays to run, and run one at a
        time while fuzzing goes on (`_shrink_slots`)."""
        self._shrinking = 0
        self._finishing = False
        self._arrived = anyio.Event()
        self._held: list[_Job] = []
        self._pending = 0
        self._following = 0
        """Running jobs that may queue another try on this server (`_may_follow`)."""
        self._dear_running = 0
        """Running replays of dear findings (`_dear`): once fuzzing is over, while none runs, the
        next replay to start is one of theirs (`_next_job`)."""
        self._idle = anyio.Event()
        self._idle.set()
        self._start_error: str | None = None
        """The first error a fresh server for a replay failed to start with (redacted at its source)."""
        self.spares: Spares | None = None
        """Warm spares to replay on (`use_spares`)."""
        self.on_seen: Callable[[Observation, str, Repro], Finding | None] | None = None
        """Where what a replay showed of another call goes (what a replay of an ambiguous finding
        showed instead, `_seen_alone`; a crash that was the call before's, `_died_after_earlier_call`):
        the engine records it as a finding of its own, offered back here, and returns it."""
        self._candidates: frozenset[str] = frozenset()
        """Fuzzing's final findings (`finish`): the others labelled were first met on a replay."""

    def use_spares(self, spares: Spares) -> None:
        """Replay on warm spares (`engine.spare`): while there are replays to run, one spare waits per
        replay that may run at once (one beside fuzzing, `parallel_replays` after it)."""
        self.spares = spares

    def _connector(self) -> Connector:
        return self.spares.connect if self.spares is not None else self.connector

    def _keep_warm(self) -> None:
        """One spare waits per try that may still start on a fresh server of this server, up to the
        replays that may run at once (one beside fuzzing, `parallel_replays` once it is over): asked
        again each time a spare is taken (`_wanted`)."""
        if self.spares is not None:
            self.spares.keep(self.settings.server, self.extra_env, self._wanted)

    def _wanted(self) -> int:
        """Queued replays, shrinking tries with a slot free, and the running jobs that may queue
        another try (`_may_follow`). Counting every running job started a spare for the last
        replay of each burst that was stopped unused (a server start per finding with one replay)."""
        if not self._open:
            return 0
        queued = sum(1 for job in self._jobs if not isinstance(job, BaseTally))
        queued += len(self._explained) if self._finishing else 0
        held = len(self._shrink_jobs)
        runnable = queued + self._following + min(held, max(0, self._shrink_slots() - self._shrinking))
        return min(runnable, self._parallel if self._finishing else REPLAYS_WHILE_FUZZING)

    def _shrink_slots(self) -> int:
        """Smaller calls tried at once: one beside fuzzing (shrinking is worth less than fuzzing's
        CPU, and a finding has up to `minimize.MAX_TRIES`), as many as replays once it is over."""
        return self._parallel if self._finishing else REPLAYS_WHILE_FUZZING

    def _next_job(self) -> _Job | None:
        explainer = Explainer(self._tallies)
        if any(explainer.by(tally) is None for tally, _ in self._explained):
            # Seen alone since, or what explained it went to a new repro not yet reproduced.
            self._jobs.extend(job for job in self._explained if explainer.by(job[0]) is None)
            self._explained = deque(job for job in self._explained if explainer.by(job[0]) is not None)
        while self._jobs:
            # Once fuzzing is over, the first of the cheapest (`_cost_rank`), so that what is left
            # of the budget confirms the most findings it can; but with replays at once, one of
            # them runs the dear ones (`_dear`) from the start: the fuzzing deadline left time for
            # the longest chain of replays beside the rest (`deadline.backlog_of`), not after it.
            # Beside fuzzing, in the order found: a dear replay put off until fuzzing ends would
            # make fuzzing end sooner for it.
            job = self._jobs[0]
            if self._finishing:
                dear = [queued for queued in self._jobs if _dear(queued)]
                lane = bool(dear) and self._parallel > 1 and not self._dear_running
                job = dear[0] if lane else min(self._jobs, key=_cost_rank)
            self._jobs.remove(job)
            if isinstance(job, tuple) and explainer.by(job[0]) is not None:
                self._explained.append(job)
                continue
            return job
        if self._shrink_jobs and self._shrinking < self._shrink_slots():
            self._shrinking += 1
            return self._shrink_jobs.popleft()
        if self._explained and self._finishing:
            return self._explained.popleft()
        return None

    def backlog(
        self, start_s: float, durations: Mapping[str, float], *, default_s: float, unseen: Sequence[Finding] = ()
    ) -> Backlog:
        """The replays still to run and what they cost, for the fuzzing deadline (`deadline.backlog_of`).
        `unseen`: baseline entries fuzzing has not met (yet), each replayed once it ends (as many
        times as a finding, to be shown fixed), but for those this run cannot show (`unobserved`)."""
        spares = self.spares
        server = self.settings.server
        warm = spares.waiting(server, self.extra_env) if spares is not None else 0
        stop_s = stop_allowance(
            self.settings.target,
            spares=spares is not None and spares.enabled,
            measured=spares.stop_s(server) if spares is not None else None,
        )
        timeout_s = self.settings.target.timeout_ms / 1000
        call_s = min(default_s, timeout_s)
        # Baseline entries are replayed once fuzzing is over, after fuzzing's server has stopped.
        measured = spares.stop_s(server) if spares is not None else None
        after_s = stop_allowance(self.settings.target, spares=False, measured=measured)
        return backlog_of(
            self._pending_by_fingerprint(),
            start_s,
            durations,
            default_s=default_s,
            timeout_s=timeout_s,
            stop_s=stop_s,
            warm=warm,
            waits={
                fingerprint: replay_wait_s(tally.finding.kind, min(durations.get(fingerprint, default_s), timeout_s))
                for fingerprint, tally in self._tallies.items()
            },
            # A fixed entry takes every replay (`_baseline_job`), one still failing only the first.
            unseen=[
                (max(1, self.settings.replays), baseline_replay_s(entry, call_s=call_s, timeout_s=timeout_s))
                for entry in unseen
                if entry.kind not in self.unobserved
            ],
            unseen_after_s=after_s,
        )

    def _pending_by_fingerprint(self) -> list[tuple[int, str]]:
        """The replays still to run, counted per fingerprint ("" for a baseline entry's)."""
        replays = self.settings.replays
        explainer = Explainer(self._tallies)
        tallies = {fp: t for fp, t in self._tallies.items() if explainer.by(t) is None and t.moved_to is None}
        left = [(0 if t.unreachable else replays - t.attempts, fp) for fp, t in tallies.items()]
        # A sequence not yet settled may take a few tries of its own (`fuzzgate.triage.sequence`),
        # a crash one more (`_died_after_earlier_call`).
        left += [
            (SETTLE_ESTIMATE + (t.finding.kind is Kind.CRASH), fp)
            for fp, t in tallies.items()
            if t.finding.repro.prefix and not t.settled
        ]
        left += [(1, "") for b in self._baseline if not b.done]
        if self.base is not None and self._base_error is None:
            # A base replay for each new finding not yet checked there, confirmed or still to be.
            for fingerprint, tally in tallies.items():
                job = self._base.get(fingerprint)
                if fingerprint not in self.known and not tally.unreachable and (job is None or not job.done):
                    left.append((1, fingerprint))
        return left

    def offer(self, finding: Finding, ambiguous: bool) -> None:
        """A finding as fuzzing now holds it (merged: its smallest repro, all hits so far)."""
        if self.settings.replays <= 0:
            return
        tally = self._tallies.get(finding.fingerprint)
        if tally is None:
            tally = self._tallies[finding.fingerprint] = Tally(finding, ambiguous)
            self._queue((tally, 0))
            return
        if tally.ambiguous and not ambiguous:
            # Seen alone now: replays set aside as another call's symptom take their turn again
            # (`_next_job`).
            self._arrived.set()
        tally.ambiguous = tally.ambiguous and ambiguous
        if tally.moved_to is not None:
            # The call before it killed the server: its hits count, but it is not replayed again.
            tally.finding = replace(finding, repro=tally.finding.repro)
            return
        # A more severe symptom of the same bug (`Finding.merged_with`) is confirmed with its own repro.
        worse = finding.severity.rank > tally.finding.severity.rank
        if finding.repro.size() < tally.finding.repro.size() or worse:
            tally.generation += 1
            tally.attempts = tally.reproduced = 0
            tally.settled = False
            tally.shrinker = None
            tally.finding = finding
            self._queue((tally, tally.generation))
        else:
            # The same bug hit again: its count and evidence, the repro verification holds (which
            # may be one it shrank itself).
            held = tally.finding
            if held.repro.original_arguments is not None:
                # Shrunk: the message and evidence are the smaller call's, as its repro is.
                finding = replace(finding, message=held.message, details=held.details)
            tally.finding = replace(finding, repro=held.repro)

    async def serve(self) -> None:
        """Run jobs as they come, as many at once as the limiter allows, replays before smaller calls
        to try; until cancelled."""
        async with anyio.create_task_group() as tg:
            while True:
                token = object()
                await self._limiter.acquire_on_behalf_of(token)
                while (job := self._next_job()) is None:
                    self._arrived = anyio.Event()
                    await self._arrived.wait()
                follows = self._may_follow(job)
                self._following += follows
                dear = _dear(job)
                self._dear_running += dear
                tg.start_soon(self._run, job, token, follows, dear)

    def _may_follow(self, job: _Job) -> bool:
        """Whether `job` may queue another try on a fresh server of this server once it is done: a
        replay with replays still to come or a shrinking to start, a shrinking try. A sequence still
        to settle is tried alone first, which mostly reproduces: its whole sequence, when needed, is
        not started ahead. A base replay runs on the base revision's server, never on these spares."""
        if isinstance(job, BaseTally):
            return False
        if isinstance(job, _ShrinkTry):
            return True
        if isinstance(job, BaselineTally):
            return job.attempts + 1 < max(1, self.settings.replays)
        tally, _ = job
        return tally.attempts + 1 < self.settings.replays or self.settings.shrink_tries > 0

    async def finish(
        self, candidates: Sequence[tuple[Finding, bool]], unseen: Sequence[Finding], deadline: float
    ) -> Verification:
        """Replay at full speed until every job is done or `deadline` passes, and label the results.
        `candidates` are fuzzing's final findings; `unseen`, the baseline entries it did not meet."""
        self._candidates = frozenset(finding.fingerprint for finding, _ in candidates)
        for finding, ambiguous in candidates:
            self.offer(finding, ambiguous)
        for entry in unseen:
            tally = BaselineTally(entry)
            self._baseline.append(tally)
            self._queue(tally)
        self._limiter.total_tokens = self._parallel
        self._open = self._finishing = True
        self._arrived.set()
        for job in self._held:
            self._line_up(job)
        self._held.clear()
        self._keep_warm()
        with anyio.move_on_at(deadline):
            await self._idle.wait()
        return self._verdict(candidates)

    def _queue(self, job: _Job) -> None:
        self._pending += 1
        self._idle = anyio.Event() if self._idle.is_set() else self._idle
        if self._open:
            self._line_up(job)
            self._keep_warm()
        else:
            self._held.append(job)

    def _line_up(self, job: _Job) -> None:
        (self._shrink_jobs if isinstance(job, _ShrinkTry) else self._jobs).append(job)
        self._arrived.set()

    def _done(self) -> None:
        self._pending -= 1
        if self._pending == 0:
            self._idle.set()
            self._keep_warm()

    async def _run(self, job: _Job, token: object, follows: bool = False, dear: bool = False) -> None:
        try:
            if isinstance(job, BaseTally):
                await self._base_job(job)
            elif isinstance(job, BaselineTally):
                await self._baseline_job(job)
            elif isinstance(job, _ShrinkTry):
                await self._shrink_job(job)
            else:
                await self._confirm_job(*job)
        finally:
            self._dear_running -= dear
            if isinstance(job, _ShrinkTry):
                self._shrinking -= 1
                self._arrived.set()
            self._following -= follows
            self._limiter.release_on_behalf_of(token)
            self._done()

    async def _attempt(
        self,
        finding: Finding,
        repro: Repro | None = None,
        observed: list[Observation] | None = None,
        outcomes: list[CallOutcome] | None = None,
    ) -> bool | None:
        """One replay on a fresh server: whether it failed the same way; None if no server could be
        reached. What the oracles saw is added to `observed`, the failing call's outcome (none when
        the server died before it) to `outcomes`."""
        try:
            same, observations = await replay_once(
                self.settings,
                self.oracles,
                finding,
                self.extra_env,
                self._connector(),
                repro,
                admission=self.admission,
                outcomes=outcomes,
            )
        except NotSelected:
            return None
        except TargetError as exc:
            self._start_error = self._start_error or str(exc)
            return None
        if observed is not None:
            observed.extend(observations)
        return same

    async def _confirm_job(self, tally: Tally, generation: int) -> None:
        if tally.unreachable or tally.moved_to is not None or generation != tally.generation:
            return
        if tally.finding.repro.prefix and not tally.settled:
            await self._settle(tally, generation)
            return
        observed: list[Observation] = []
        same = await self._attempt(tally.finding, observed=observed)
        if generation != tally.generation:
            return
        if same is None:
            tally.unreachable = True
            return
        if not same:
            self._seen_alone(tally, tally.finding.repro, observed)
        tally.attempts += 1
        tally.reproduced += same
        if same:
            self._check_on_base(tally)
        if tally.attempts < self.settings.replays:
            # To the back of the queue: the other findings' replays take their turn first.
            self._queue((tally, generation))
        else:
            self._start_shrinking(tally, generation)

    async def _settle(self, tally: Tally, generation: int) -> None:
        """A sequence repro: the failing call alone first, then the whole sequence, then shrunk.
        The try that reproduced counts as the first replay; the others are the search."""
        tally.settled = True
        finding = tally.finding
        candidates = [sequence.alone(finding.repro), finding.repro]
        for repro in candidates:
            observed: list[Observation] = []
            same = await self._attempt(finding, repro, observed)
            if generation != tally.generation:
                return
            if same is None:
                tally.unreachable = True
                return
            if not same:
                self._seen_alone(tally, repro, observed)
                if not repro.prefix and await self._died_after_earlier_call(tally, generation):
                    return
            if same:
                tally.finding = replace(finding, repro=repro.narrowed())
                tally.attempts, tally.reproduced = 1, 1
                self._check_on_base(tally)
                if repro.prefix:

                    async def reproduces(candidate: Repro) -> bool | None:
                        return await self._attempt(finding, candidate) if generation == tally.generation else None

                    def keep(smaller: Repro) -> None:
                        if generation == tally.generation:
                            tally.finding = replace(tally.finding, repro=smaller.narrowed())

                    await sequence.shrink(repro, reproduces, keep, self.settings.shrink_tries)
                break
        else:
            # Not even the whole sequence: flaky, unless the replays still to come say otherwise.
            tally.attempts, tally.reproduced = 1, 0
        if generation == tally.generation and tally.attempts < self.settings.replays:
            self._queue((tally, generation))
        elif generation == tally.generation:
            self._start_shrinking(tally, generation)

    async def _died_after_earlier_call(self, tally: Tally, generation: int) -> bool:
        """A crash its failing call does not reproduce alone: whether the server dies as well when
        the sequence stops before that call, right after answering the call before it (a tool
        that shuts the server down once its reply is out), and if so, the first earlier call the
        sequence can stop at and still see the server die (`sequence.first_death`: a fresh server
        per try, at most `MOVE_TRIES`). The crash is that call's, whichever calls fuzzing happened
        to send after it. When that is this finding's own call, the finding is settled again from
        the shorter sequence (shorter each time, so this ends); otherwise the crash is recorded as
        a finding of that call's (`on_seen`), confirmed as any other, and this one, moved to it
        (`Tally.moved_to`), is replayed no more. Returns whether the settling is done."""
        finding = tally.finding
        steps = len(finding.repro.prefix)
        if finding.kind is not Kind.CRASH or self.on_seen is None or steps == 0:
            return False
        crashes: dict[int, tuple[Observation, str, Repro]] = {}

        async def dies(cut: int) -> bool | None:
            tool, shorter = sequence.ending_at(finding.repro, cut)
            observed: list[Observation] = []
            outcomes: list[CallOutcome] = []
            # Sent as a crash of that call, so that the replay watches for a death after its reply.
            moved = replace(finding, name=tool, surface=shorter.surface, repro=shorter)
            if await self._attempt(moved, shorter, observed, outcomes) is None or generation != tally.generation:
                return None
            crash = next((o for o in observed if o.kind is Kind.CRASH and not o.ambiguous), None)
            if crash is not None:
                crashes[cut] = (crash, tool, shorter)
            # No outcome: the server died during the calls before the last one.
            return crash is not None or not outcomes or lost(outcomes[0])

        cut = await sequence.first_death(steps, dies, MOVE_TRIES)
        if generation != tally.generation:
            return True
        if cut is None or cut not in crashes:
            return False
        crash, tool, repro = crashes[cut]
        if fingerprint(Kind.CRASH, *subject(crash, tool, repro.surface), crash.signature) == finding.fingerprint:
            # This finding's own call, earlier in the sequence: settled again from that repro.
            tally.generation += 1
            tally.settled = False
            tally.finding = replace(finding, repro=repro)
            self._queue((tally, tally.generation))
            return True
        tally.moved_to = self.on_seen(crash, tool, repro)
        return tally.moved_to is not None

    def _seen_alone(self, tally: Tally, repro: Repro, observed: Sequence[Observation]) -> None:
        """A finding only ever seen beside other calls did not show again on a fresh server, alone;
        what that call showed there instead is its own (a hang whose server another call's crash
        took down while it waited was seen as a crash, which its replays drop): recorded as a
        finding of its own (`on_seen`), with this repro, and confirmed as any other."""
        if not tally.ambiguous or self.on_seen is None:
            return
        for observation in observed:
            if not observation.ambiguous:
                self.on_seen(observation, tally.finding.tool, repro)

    def _start_shrinking(self, tally: Tally, generation: int) -> None:
        """Once every replay of a finding reproduced, shrink its failing call (`triage.minimize`)."""
        repro = tally.finding.repro
        if tally.shrinker is not None or tally.reproduced < tally.attempts or tally.attempts == 0:
            return
        if repro.surface is Surface.SERVER or not worth_shrinking(repro) or self.admission is None:
            return
        if self.settings.shrink_tries == 0:
            return
        listed = self.admission.listed.get((repro.surface, tally.finding.tool))
        if listed is None:
            return
        schema = listed.input_schema

        def candidates(current: Repro) -> list[Repro]:
            return [
                replace(current, arguments=arguments, schema_valid=valid)
                for arguments, valid in smaller_calls(dict(current.arguments), schema)
            ]

        tally.shrinker = CallShrinker(repro, candidates, self.settings.shrink_tries)
        self._queue(_ShrinkTry(tally, generation))

    async def _shrink_job(self, job: _ShrinkTry) -> None:
        """Replay one smaller call; the finding keeps it when it gave the same fingerprint. One try
        per job: the other findings' replays take their turns in between."""
        tally, shrinker = job.tally, job.tally.shrinker
        if shrinker is None or job.generation != tally.generation:
            return
        candidate = shrinker.next()
        if candidate is None:
            return
        finding = tally.finding
        observed: list[Observation] = []
        if await self._attempt(finding, candidate, observed) is None or job.generation != tally.generation:
            return
        # The same bug, rated the same: an uncaught exception does not shrink into a caught one,
        # nor a hang that took the server down into one it survived.
        match = next((o for o in observed if self._same_finding(finding, candidate, o)), None)
        shrinker.tried(candidate, match is not None)
        if match is not None:
            # The finding says what the smaller call showed (its message quotes no long value).
            message, details = evidence(match, self.oracles.env.redact)
            tally.finding = replace(finding, repro=candidate.narrowed(), message=message, details=details)
        self._queue(job)

    def _same_finding(self, finding: Finding, repro: Repro, observation: Observation) -> bool:
        kind = observation.kind
        found = fingerprint(kind, *subject(observation, finding.tool, repro.surface), observation.signature)
        return found == finding.fingerprint and severity_of(observation, self.settings.severity) is finding.severity

    def _check_on_base(self, tally: Tally) -> None:
        """Queue the base replays of a finding that just reproduced, once, unless the baseline holds it."""
        fingerprint = tally.finding.fingerprint
        if self.base is None or fingerprint in self.known or fingerprint in self._base:
            return
        job = self._base[fingerprint] = BaseTally(tally.finding)
        self._queue(job)

    async def _base_job(self, tally: BaseTally) -> None:
        base = self.base
        if base is None or self._base_error is not None:
            # Left undone: the note counts it among those the base could not check.
            return
        settings = replace(self.settings, server=base.server)
        try:
            same, _ = await replay_once(
                settings,
                self.oracles,
                base.rebased(tally.finding),
                self.extra_env,
                self.base_connector,
                admission=self.admission,
            )
        except NotSelected:
            tally.done = True
            return
        except TargetError as exc:
            self._base_error = self._base_error or str(exc)
            return
        tally.attempts += 1
        if same:
            tally.failing = tally.done = True
        elif tally.attempts >= BASE_ATTEMPTS:
            tally.done = True
        else:
            self._queue(tally)

    async def _baseline_job(self, tally: BaselineTally) -> None:
        if (why := self.unobserved.get(tally.entry.kind)) is not None:
            # Replayed here (a canary URL leading nowhere, no memory watch) it would show fixed, and it is not.
            tally.unobserved, tally.done = why, True
            return
        if self.admission is not None:
            tally.refused = self.admission.refusal(repro_calls(tally.entry))
        if tally.refused is not None:
            tally.done = True
            return
        same = await self._attempt(tally.entry)
        if same is None:
            tally.unstarted = tally.done = True
            return
        tally.attempts += 1
        if same:
            # One failure is enough to keep a known bug known.
            tally.failing = tally.done = True
        elif tally.attempts >= max(1, self.settings.replays):
            tally.done = True
        else:
            self._queue(tally)

    def _verdict(self, candidates: Sequence[tuple[Finding, bool]]) -> Verification:
        base = BaseChecks(self._base, self.known, self._base_error) if self.base is not None else None
        # Findings first met on a replay once fuzzing was over (`_seen_alone`) are labelled too.
        tallies = sorted(self._tallies.items())
        met_on_replay = [(t.finding, t.ambiguous) for fp, t in tallies if fp not in self._candidates]
        return label(
            [*candidates, *met_on_replay],
            self._tallies,
            self._baseline,
            replays=self.settings.replays,
            target=self.settings.target,
            fail_on=self.settings.fail_on,
            start_error=self._start_error,
            base=base,
        )
