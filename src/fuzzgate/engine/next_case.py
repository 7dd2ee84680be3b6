"""Which case a worker sends next: a corpus seed's or a queued sequence's next step, else the
scheduler's next case (generated off the event loop), with a dictionary value or a value the tool
accepted in some, or mutated from a corpus entry, never one the server in its state has already been
sent. The scheduler's next case is drawn while the call before it is on its way (`draw_ahead`) and
waits in the worker's `Ahead` until that call's reply has been read."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum, auto
from typing import Final

import anyio
import anyio.lowlevel
import anyio.to_thread

from fuzzgate.generate.cases import Case
from fuzzgate.learn.feed import Feed
from fuzzgate.learn.live_corpus import LiveCorpus
from fuzzgate.plan.selection import Scheduler, ToolPlan


class _Over(Enum):
    OVER = auto()


_OVER: Final = _Over.OVER
"""`scheduled_case`: the scheduler has no case left."""


@dataclass(slots=True, eq=False)
class Ahead:
    """A worker's next scheduled case, drawn while its call was on its way (`draw_ahead`): it goes
    out after any sequence step that the call's reply queues, unless that reply made it a repeat."""

    item: tuple[ToolPlan, Case] | None = None

    def take(self) -> tuple[ToolPlan, Case] | None:
        item, self.item = self.item, None
        return item

    def give_back(self, scheduler: Scheduler, live: LiveCorpus | None) -> None:
        """Put the case drawn back where it came from, unsent: a mutant is withdrawn (the generated
        case it went before was handed back when it was made), a generated case is handed out again
        when no later case of its tool went out meanwhile (`Scheduler.again`), else kept to be sent."""
        if self.item is None:
            return
        plan, case = self.item
        if live is not None and live.holds(case):
            live.withdraw(case)
        elif not scheduler.again(plan, case.index):
            return
        self.item = None


async def next_case(
    scheduler: Scheduler,
    feed: Feed,
    live: LiveCorpus | None,
    replay_end: float,
    replay_done: Callable[[], None],
    ahead: Ahead | None = None,
) -> tuple[ToolPlan, Case] | None:
    """A corpus seed's or queued sequence's next step first (it needs the state the call before
    it left), else the case drawn `ahead`, else the scheduler's next case, with a dictionary value
    in some or mutated from a corpus entry; None once fuzzing is over. `replay_end` is when the
    corpus's replay share of the time is up; `replay_done` reports the replay once it is over."""
    while True:
        chained = await feed.next_chain_case() if scheduler.running() else None
        if chained is not None:
            return chained
        if live is not None and scheduler.running():
            stepped = live.next_step(replay_end - time.monotonic())
            replay_done()
            if stepped is not None:
                owner, step = stepped
                generator = await anyio.to_thread.run_sync(owner.prepare, abandon_on_cancel=True)
                if generator is None:
                    # Its tool was skipped (a schema fuzzgate cannot generate for): not sent.
                    live.dropped(step)
                    continue
                if feed.seen(owner, step.arguments):
                    live.repeated(step)
                    continue
                return owner, live.validated(step, generator.is_valid(step.arguments))
        if ahead is not None and (drawn := ahead.take()) is not None:
            plan, case = drawn
            # Drawn while the call before it was on its way: its reply may have made it a repeat.
            if not scheduler.running():
                return None
            if not feed.seen(plan, case.arguments):
                return drawn
            if live is not None and live.holds(case):
                live.unsent(plan, case)
            continue
        item = await scheduled_case(scheduler, feed, live)
        if item is _OVER:
            return None
        if item is not None:
            return item


async def draw_ahead(scheduler: Scheduler, feed: Feed, live: LiveCorpus | None, ahead: Ahead) -> None:
    """Draw the scheduler's next case into `ahead` while a call is on its way, so that choosing it
    (and waiting on the generation worker for it) takes the server's time rather than its own. It
    reads only what the calls before the one on its way left, so a seed still sends the same cases."""
    while ahead.item is None and scheduler.running():
        item = await scheduled_case(scheduler, feed, live)
        if item is _OVER:
            return
        if item is not None:
            ahead.item = item


async def scheduled_case(
    scheduler: Scheduler, feed: Feed, live: LiveCorpus | None
) -> tuple[ToolPlan, Case] | _Over | None:
    """The scheduler's next case, with a dictionary value in some or mutated from a corpus entry;
    None when the one drawn is not to be sent (try again), `_OVER` when the scheduler has none."""
    if (item := scheduler.next()) is None:
        return _OVER
    plan, index = item
    # Generation may wait on the worker process: never block the event loop with it, and
    # never keep the run waiting for it past the deadline. A case already drawn is taken
    # here (a thread hop per call cost about as much as the call); a checkpoint still lets
    # the other tasks run when case after case is a repeat and skipped.
    began = time.monotonic()
    if plan.ready(index):
        await anyio.lowlevel.checkpoint()
        case = plan.case(index)
    else:
        case = await anyio.to_thread.run_sync(plan.case, index, abandon_on_cancel=True)
    # Building a tool's generator and drawing its cases is that tool's time too.
    scheduler.record(plan, time.monotonic() - began)
    if case is None:
        return None
    case = feed.around(plan, feed.override(plan, case))
    if live is not None and live.wants_mutant(plan, case):
        # The generated case goes out next time (`Scheduler.again`): the mutant is extra.
        scheduler.again(plan, index)
        mutant = live.mutant(plan, case)
        if mutant is None:
            # Queued as the last step of a sequence extending another tool's entry.
            return None
        if mutant is not case and (feed.fatal(plan, mutant) or feed.seen(plan, mutant.arguments)):
            # Its value crashed or hung the server before (the finding is recorded), or the tool
            # got this very request since the server's state last changed: not sent, and not
            # validated either (on a tool with few inputs most mutants are such repeats).
            live.unsent(plan, mutant)
            return None
        if mutant is not case and plan.generator is not None:
            mutant = live.validated(mutant, plan.generator.is_valid(mutant.arguments))
        case = mutant
    # The same request to a server in the same state would show nothing new.
    return None if feed.seen(plan, case.arguments) else (plan, case)
