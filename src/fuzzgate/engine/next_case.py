"""Which case a worker sends next: a corpus seed's or a queued sequence's next step, else the
scheduler's next case (generated off the event loop), with a dictionary value or a value the tool
accepted in some, or mutated from a corpus entry, never one the server in its state has already been
sent."""

from __future__ import annotations

import time
from collections.abc import Callable

import anyio
import anyio.lowlevel
import anyio.to_thread

from fuzzgate.generate.cases import Case
from fuzzgate.learn.feed import Feed
from fuzzgate.learn.live_corpus import LiveCorpus
from fuzzgate.plan.selection import Scheduler, ToolPlan


async def next_case(
    scheduler: Scheduler,
    feed: Feed,
    live: LiveCorpus | None,
    replay_end: float,
    replay_done: Callable[[], None],
) -> tuple[ToolPlan, Case] | None:
    """A corpus seed's or queued sequence's next step first (it needs the state the call before
    it left), else the scheduler's next case, with a dictionary value in some or mutated from
    a corpus entry; None once fuzzing is over. `replay_end` is when the corpus's replay share of the
    time is up; `replay_done` reports the replay once it is over."""
    while True:
        chained = await feed.next_chain_case() if scheduler.running() else None
        if chained is not None:
            return chained
        if live is not None and scheduler.running():
            stepped = live.next_step(time.monotonic() >= replay_end)
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
        if (item := scheduler.next()) is None:
            return None
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
            continue
        case = feed.around(plan, feed.override(plan, case))
        if live is not None and live.wants_mutant(plan, case):
            # The generated case goes out next time (`Scheduler.again`): the mutant is extra.
            scheduler.again(plan, index)
            mutant = live.mutant(plan, case)
            if mutant is None:
                # Queued as the last step of a sequence extending another tool's entry.
                continue
            if mutant is not case and (feed.fatal(plan, mutant) or feed.seen(plan, mutant.arguments)):
                # Its value crashed or hung the server before (the finding is recorded), or the tool
                # got this very request since the server's state last changed: not sent, and not
                # validated either (on a tool with few inputs most mutants are such repeats).
                live.unsent(plan, mutant)
                continue
            if mutant is not case and plan.generator is not None:
                mutant = live.validated(mutant, plan.generator.is_valid(mutant.arguments))
            case = mutant
        # The same request to a server in the same state would show nothing new.
        if not feed.seen(plan, case.arguments):
            return plan, case
