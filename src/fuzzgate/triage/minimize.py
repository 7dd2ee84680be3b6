"""Shrinking a finding's failing call: the arguments fuzzing happened to send (a 64 KiB directory
name, random 40-character strings, optional fields that play no part) made as small as the bug
allows, so a maintainer reads one short call.

`CallShrinker` is a greedy shrinker without I/O, driven by whoever replays (`engine.verify`): it
hands out one candidate at a time (`next`), each the current call made smaller in one place
(biggest reduction first, as `generate.shrink.smaller_calls` orders them), and is told whether it
still gave the same fingerprint on a fresh server (`tried`); the first candidate that does becomes
the current call, and the next candidates are drawn from it. It stops when no candidate of the
current call reproduces, or after `MAX_TRIES` replays: whatever it stopped at was reproduced.
Only the failing call's arguments change, never the calls before it (a sequence's prefix is
shrunk by `triage.sequence`) nor the tool it goes to. Deterministic: the same replies give the
same calls in the same order.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from fuzzgate.model.findings import Repro

MAX_TRIES = 24
"""Replays one finding's call shrinking may take: each is a fresh server."""
SMALL_CALL_CHARS = 32
"""A call whose arguments' canonical JSON is this short already reads at a glance: not shrunk."""

Candidates = Callable[[Repro], Sequence[Repro]]
"""The repro with its failing call made smaller in one place, biggest reduction first."""


def call_size(arguments: dict[str, Any]) -> int:
    """The length of `arguments`' canonical JSON text."""
    return len(_canonical(arguments))


def _canonical(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, sort_keys=True, ensure_ascii=True, separators=(",", ":"), default=str)


def worth_shrinking(repro: Repro) -> bool:
    """Whether the failing call is long enough for shrinking to be worth fresh servers."""
    return call_size(repro.arguments) > SMALL_CALL_CHARS


class CallShrinker:
    """The greedy shrinking of one repro's failing call, one replay at a time.

    Use: `candidate = shrinker.next()` until it is None, replaying each and calling
    `shrinker.tried(candidate, same)`; `shrinker.current` is the smallest call found so far (with
    `original_arguments` set once it differs from the one fuzzing sent)."""

    def __init__(self, repro: Repro, candidates: Candidates, tries: int = MAX_TRIES) -> None:
        self.current = repro
        self.tries_left = tries
        self._candidates = candidates
        self._original = repro.original_arguments if repro.original_arguments is not None else repro.arguments
        self._tried = {_canonical(repro.arguments)}
        self._queue = self._smaller()

    @property
    def shrunk(self) -> bool:
        """Whether a smaller call than the one it started from reproduced."""
        return self.current.original_arguments is not None

    def _smaller(self) -> list[Repro]:
        limit = call_size(self.current.arguments)
        return [c for c in self._candidates(self.current) if call_size(c.arguments) < limit]

    def next(self) -> Repro | None:
        """The next candidate to replay; None when shrinking is over."""
        while self._queue and self.tries_left > 0:
            candidate = self._queue.pop(0)
            key = _canonical(candidate.arguments)
            if key in self._tried:
                continue
            self._tried.add(key)
            self.tries_left -= 1
            return replace(candidate, original_arguments=self._original)
        self._queue = []
        return None

    def tried(self, candidate: Repro, same: bool) -> None:
        """What replaying `candidate` (from `next`) showed: `same` when it gave the same fingerprint."""
        if same:
            self.current = candidate
            self._queue = self._smaller()
