"""Sequence repros: replaying the calls a server received before the failing one, and shrinking them.

A bug can need earlier calls (a double delete, a use after close, a request the server never
answered that kills it on the next one). Fuzzing records every call a server received since it
started; a finding's repro carries them as its `prefix`. Confirmation first sends the failing call
alone (most bugs need nothing more), then the whole sequence; a sequence that reproduces is shrunk:
first (for a long one) to the calls sharing a value with the failing one, then to its shortest
reproducing suffix (1, 2, 4, ... calls), then as delta debugging does
(Zeller's ddmin: drop chunks of steps, halving the chunk size when none can go), then its
arguments (drop one key of one step at a time), keeping whatever still gives the same fingerprint.
Every try is one fresh server, so shrinking takes a bounded number of tries and keeps each smaller
repro as soon as it is found: a deadline leaves the smallest one found so far.
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

from fuzzgate.model.findings import Repro, Step

RECENT_STEPS = 100
"""A repro keeps every one of the last this many calls before the failing one ..."""
HISTORY_STEPS = 1000
"""... and, of the calls before them (at most this many in all), those to tools that may change
state (not annotated read-only): a use after delete needs the create that came 500 calls earlier."""
MAX_SHRINK_TRIES = 24

Reproduces = Callable[[Repro], Awaitable[bool | None]]
"""Whether a repro still gives the same fingerprint on a fresh server (None: no server reached)."""


def alone(repro: Repro) -> Repro:
    return replace(repro, prefix=())


def ending_at(repro: Repro, cut: int) -> tuple[str, Repro]:
    """The repro of a sequence cut short: its first `cut` earlier calls, the last of them as the
    failing one (whose tool is returned), the failing call left out. `1 <= cut <= len(repro.prefix)`."""
    last = repro.prefix[cut - 1]
    moved = Repro(
        seed=repro.seed,
        case_index=0,
        arguments=last.arguments,
        transport=repro.transport,
        schema_valid=last.schema_valid,
        prefix=repro.prefix[: cut - 1],
        workspace=repro.workspace,
        surface=last.surface,
        redacted=repro.redacted,
    )
    return last.tool, moved.narrowed()


def prefix_of(history: Sequence[Step], read_only: Collection[str] = ()) -> tuple[Step, ...]:
    """The calls a repro keeps of `history` (oldest first): the last `RECENT_STEPS`, and before them
    those to tools not in `read_only`, at most `HISTORY_STEPS` in all."""
    recent = list(history[-RECENT_STEPS:])
    earlier = [step for step in history[-HISTORY_STEPS:-RECENT_STEPS] if step.tool not in read_only]
    return (*earlier, *recent)


async def shrink(
    repro: Repro, reproduces: Reproduces, keep: Callable[[Repro], None], tries: int = MAX_SHRINK_TRIES
) -> Repro:
    """The smallest repro found within `tries` that still reproduces; each one found is handed to
    `keep` at once. `repro` must reproduce."""
    left = tries
    steps = list(repro.prefix)
    related = [step for step in steps if _shares_a_value(step.arguments, repro.arguments)]
    if 0 < len(related) < len(steps) // 4 and left > 0:
        # A long sequence whose cause lies far back (`git_init("a")` 500 calls before `git_diff` in
        # repository "a"): first the calls that share a value with the failing one.
        left -= 1
        candidate = replace(repro, prefix=tuple(related))
        if await reproduces(candidate):
            repro = candidate
            steps = list(repro.prefix)
            keep(repro)
    tried: set[int] = set()
    """The prefix lengths already tried as suffixes: each try is a server start, none is repeated."""
    # The calls that matter are usually the last few: the shortest suffix that still reproduces
    # (lengths 1, 2, 4, ...) is found in a handful of tries, before ddmin works on what is left.
    length = 1
    while length < len(steps) and left > 0:
        left -= 1
        tried.add(length)
        candidate = replace(repro, prefix=tuple(steps[-length:]))
        if await reproduces(candidate):
            repro = candidate
            steps = list(repro.prefix)
            keep(repro)
            break
        length *= 2
    chunks = 2
    while steps and left > 0:
        size = math.ceil(len(steps) / chunks)
        smaller = None
        for start in range(0, len(steps), size):
            if left <= 0:
                break
            if start == 0 and len(steps) - size in tried and len(steps) == len(repro.prefix):
                # Dropping the first chunk leaves a suffix the first pass already tried.
                continue
            left -= 1
            candidate = replace(repro, prefix=tuple(steps[:start] + steps[start + size :]))
            if await reproduces(candidate):
                smaller = candidate
                break
        if smaller is not None:
            repro = smaller
            steps = list(repro.prefix)
            tried.clear()
            keep(repro)
            chunks = max(chunks - 1, 2)
        elif size <= 1:
            break
        else:
            chunks = min(len(steps), chunks * 2)
    return await _shrink_arguments(repro, reproduces, keep, left)


Dies = Callable[[int], Awaitable[bool | None]]
"""Whether the server dies when a sequence stops after its `cut`-th earlier call (that call the
failing one, watched after its reply); None to stop searching (no server reached)."""


async def first_death(steps: int, dies: Dies, tries: int) -> int | None:
    """The first cut (1 to `steps`) at which a sequence of `steps` earlier calls still kills the
    server, when the whole of them does: the call it dies right after. None when the whole does
    not, a try gave None, or `tries` did not narrow it down. Searched back from the end, 1, 2, 4 ...
    calls (the call is mostly among the last few: 2 tries when it is the last), then by halving
    what is left; a server that died at a cut dies at every later one, so `high` always dies and
    no cut below `low` does."""
    left = tries - 1
    if left < 0 or not await dies(steps):
        return None
    low, high, back = 1, steps, 1
    while low < high and left > 0:
        left -= 1
        cut = max(low, high - back) if back else (low + high) // 2
        answer = await dies(cut)
        if answer is None:
            return None
        if answer:
            high, back = cut, back * 2 if back else 0
        else:
            low, back = cut + 1, 0
    return high if low == high else None


def _scalars(value: object) -> set[str]:
    """The strings and numbers in a JSON value, as JSON text (so 1 and "1" differ)."""
    if isinstance(value, dict):
        return {text for item in value.values() for text in _scalars(item)}
    if isinstance(value, list):
        return {text for item in value for text in _scalars(item)}
    if isinstance(value, bool) or value is None:
        return set()
    return {json.dumps(value)} if isinstance(value, str | int | float) else set()


def _shares_a_value(arguments: dict[str, object], failing: dict[str, object]) -> bool:
    return bool(_scalars(arguments) & _scalars(failing))


async def _shrink_arguments(repro: Repro, reproduces: Reproduces, keep: Callable[[Repro], None], left: int) -> Repro:
    if not repro.prefix:
        # A single call keeps the arguments fuzzing sent: `case_index` still regenerates them.
        return repro
    for position in range(len(repro.prefix) + 1):
        arguments = repro.arguments if position == len(repro.prefix) else repro.prefix[position].arguments
        for key in sorted(arguments):
            if left <= 0:
                return repro
            left -= 1
            fewer = {k: v for k, v in arguments.items() if k != key}
            # Without a key the arguments may no longer fit the schema: they are not claimed valid
            # (and a bug that needs valid input, such as an internal error, then does not shrink so).
            if position == len(repro.prefix):
                candidate = replace(repro, arguments=fewer, schema_valid=False)
            else:
                steps = list(repro.prefix)
                steps[position] = replace(steps[position], arguments=fewer, schema_valid=False)
                candidate = replace(repro, prefix=tuple(steps))
            if await reproduces(candidate):
                repro = candidate
                keep(repro)
                arguments = fewer
    return repro


def rebind(value: Any, bound: Mapping[Any, Any]) -> Any:
    """`value` (a step's arguments) with every string or number equal to a key of `bound` replaced
    by its value, and every string holding a bound string (an id inside a path or URI) too: what a
    replay sends in place of the ids the recorded run's server handed out."""
    if not bound:
        return value
    if isinstance(value, dict):
        return {key: rebind(item, bound) for key, item in value.items()}
    if isinstance(value, list):
        return [rebind(item, bound) for item in value]
    if isinstance(value, bool) or value is None:
        return value
    if value in bound:
        return bound[value]
    if isinstance(value, str):
        for old, new in bound.items():
            if isinstance(old, str) and isinstance(new, str) and len(old) >= REBIND_MIN_CHARS and old in value:
                value = value.replace(old, new)
    return value


def bindings(recorded: Sequence[Step], sent: Sequence[Step]) -> dict[Any, Any]:
    """What to rebind: each value a recorded step's reply brought, to the value the same step's
    reply brought when sent again (by position), where they differ."""
    bound: dict[Any, Any] = {}
    for before, now in zip(recorded, sent, strict=False):
        for old, new in zip(before.produced, now.produced, strict=False):
            if old != new and isinstance(old, str | int) and not isinstance(old, bool):
                bound[old] = new
    return bound


REBIND_MIN_CHARS = 6
"""A bound string shorter than this is replaced only where it is the whole value: a short id
("7") inside other text is more likely a coincidence than a reference."""
