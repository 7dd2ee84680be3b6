"""What counts as new: the features each call reaches, and which of them no call reached before.

A call's features are its behaviour (`learn.behaviour.behaviour_key`, per tool: the same reply shape from
two tools is two behaviours) and, where the server's Python runs fuzzgate's collector
(`coverage.channel`), every arc of the server's own code the call ran. A call that reaches a feature
no earlier call of the run reached is kept in the corpus (`live_corpus`). Features are plain strings,
so sets of them compare, merge and count the same whatever produced them: a Node collector (V8
precise coverage) would add its own `a:` features through the same `CallCoverage` and nothing here
would change.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from fuzzgate.coverage.channel import CallCoverage
from fuzzgate.learn.behaviour import behaviour_key
from fuzzgate.model.findings import Surface
from fuzzgate.model.outcome import CallOutcome

BEHAVIOUR_PREFIX = "b:"
ARC_PREFIX = "a:"
LINE_PREFIX = "l:"
MAX_FEATURES = 1_000_000
"""Features remembered per run: past this, nothing more counts as new (a bound on memory)."""


class SignalKind(StrEnum):
    COVERAGE = "coverage"
    """Coverage of the server's own code, and behaviour."""
    BEHAVIOUR = "behaviour"
    OFF = "off"


@dataclass(frozen=True, slots=True)
class Signal:
    kind: SignalKind
    note: str
    """One line: which signal the target got and why (the report, console and summary print it)."""


def behaviour_feature(surface: Surface, tool: str, outcome: CallOutcome, arguments: Any = None) -> str:
    key = behaviour_key(outcome, arguments)
    digest = hashlib.sha256(f"{surface.value}\0{tool}\0{key}".encode()).hexdigest()[:16]
    return f"{BEHAVIOUR_PREFIX}{digest}"


def call_features(
    surface: Surface, tool: str, outcome: CallOutcome, coverage: CallCoverage | None, arguments: Any = None
) -> frozenset[str]:
    """Everything one call reached: its behaviour, and the arcs its coverage shows."""
    features = {behaviour_feature(surface, tool, outcome, arguments)}
    if coverage is not None:
        features.update(ARC_PREFIX + arc for arc in coverage.arcs)
        # Lines count on their own where arcs are only the branches taken (sys.monitoring).
        features.update(LINE_PREFIX + line for line in coverage.lines)
    return frozenset(features)


def files_of(features: frozenset[str] | set[str]) -> tuple[str, ...]:
    """The files (as the collector names them) that line and arc features name, sorted."""
    files: set[str] = set()
    for feature in features:
        if feature.startswith(LINE_PREFIX):
            files.add(feature[len(LINE_PREFIX) :].rpartition(":")[0])
        elif feature.startswith(ARC_PREFIX):
            files.add(feature[len(ARC_PREFIX) :].rsplit(":", 2)[0])
    return tuple(sorted(f for f in files if f))


def lines_of(features: frozenset[str] | set[str]) -> set[str]:
    """The lines (`path:n`) that line features (`l:path:n`) name and arcs (`a:path:from:to`) touch;
    negative numbers are entries and exits."""
    lines: set[str] = set()
    for feature in features:
        if feature.startswith(LINE_PREFIX):
            lines.add(feature[len(LINE_PREFIX) :])
            continue
        if not feature.startswith(ARC_PREFIX):
            continue
        path, _, pair = feature[len(ARC_PREFIX) :].rpartition(":")
        path, _, start = path.rpartition(":")
        for number in (start, pair):
            if number.isdigit() and number != "0":
                lines.add(f"{path}:{number}")
    return lines


@dataclass(frozen=True, slots=True)
class Observed:
    features: frozenset[str]
    new: frozenset[str]
    """The features no call of this run had reached before."""


class Feedback:
    """The features a run has reached, and the counts the status line and the report show."""

    def __init__(self, signal: Signal) -> None:
        self.signal = signal
        self._seen: set[str] = set()
        self._lines: set[str] = set()
        self.behaviours = 0
        self.arcs = 0
        self.constants = 0

    @property
    def enabled(self) -> bool:
        return self.signal.kind is not SignalKind.OFF

    @property
    def lines(self) -> int:
        return len(self._lines)

    def observe(
        self, surface: Surface, tool: str, outcome: CallOutcome, coverage: CallCoverage | None, arguments: Any = None
    ) -> Observed:
        features = call_features(surface, tool, outcome, coverage, arguments)
        if len(self._seen) >= MAX_FEATURES:
            return Observed(features, frozenset())
        new = frozenset(features - self._seen)
        if new:
            self._count(new)
        return Observed(features, new)

    def _count(self, new: frozenset[str]) -> None:
        self._seen.update(new)
        self.arcs += sum(1 for f in new if f.startswith(ARC_PREFIX))
        self.behaviours += sum(1 for f in new if f.startswith(BEHAVIOUR_PREFIX))
        self._lines.update(lines_of(new))

    def seen(self, features: frozenset[str]) -> None:
        """Count `features` as reached without a call (start-up: nothing to attribute them to)."""
        self._count(frozenset(features - self._seen))
