"""The base check: is a new finding the pull request's, or was it there before?

With `--base DIR` (the base revision, checked out and installed like the head), every confirmed
finding the baseline does not hold is replayed, its sequence included, on a server started from
`DIR`: the same target with each path that lies in the repository mapped to the same place under
`DIR` (`config.rebase.at_base`), contained like every start. A finding that fails the same way there
is *pre-existing*: reported, never failing the gate. One that does not is new. As ClusterFuzzLite
reproduces a crash on the base build before blaming the change.

What the check could not decide leaves the finding new, and says why in a note: a base server
that could not start (the note gives its error), or a budget that ran out before the finding's
base replay. A finding is never pre-existing without a replay that failed on the base.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from fuzzgate.config.views import ServerSettings
from fuzzgate.model.findings import Finding, Repro

BASE_ATTEMPTS = 2
"""Replays on the base per finding: the first that fails the same way makes it pre-existing; a
bug that needs an earlier call or shows only now and then gets a second chance."""


@dataclass(frozen=True, slots=True)
class BaseRevision:
    """Where the base revision lies and how its server starts."""

    server: ServerSettings
    """The target as started from the base (`config.rebase.at_base`)."""
    head_root: Path
    """The repository root of the head: paths below it are mapped to `base_root`."""
    base_root: Path
    labels: tuple[str, ...] = ()
    """The names the head's layers give its scope directories, in order: the base's layers use the
    same, so a path a repro holds inside the head's layer has its counterpart in the base's."""

    def rebased(self, finding: Finding) -> Finding:
        """`finding` with every path of the head repository its repro sends mapped to the base."""
        repro = finding.repro
        moved: Repro = replace(
            repro,
            arguments=self._moved(repro.arguments),
            prefix=tuple(replace(step, arguments=self._moved(step.arguments)) for step in repro.prefix),
        )
        return replace(finding, repro=moved)

    def _moved(self, value: Any) -> Any:
        head, base = str(self.head_root), str(self.base_root)
        if head == base:
            return value
        if isinstance(value, str):
            if value == head:
                return base
            return value.replace(head + "/", base + "/")
        if isinstance(value, dict):
            return {key: self._moved(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self._moved(item) for item in value]
        return value


@dataclass(slots=True, eq=False)
class BaseTally:
    """One finding's replays on the base."""

    finding: Finding
    attempts: int = 0
    failing: bool = False
    done: bool = False


def base_notes(tallies: list[BaseTally], start_error: str | None, checked_any: bool) -> list[str]:
    """What the base check leaves undecided, in words for the report (each such finding stays new)."""
    notes: list[str] = []
    left = [t for t in tallies if not t.done]
    if start_error is not None:
        notes.append(
            f"the base revision's server could not be started ({start_error}): "
            f"{_count(len(left))} not checked on the base {'stays' if len(left) == 1 else 'stay'} new"
        )
    elif left:
        notes.append(
            f"{_count(len(left))} could not be replayed on the base revision within the budget: "
            f"{'it stays' if len(left) == 1 else 'they stay'} new"
        )
    if checked_any:
        pre = sum(t.failing for t in tallies)
        notes.append(f"base revision: {pre} of {len(tallies)} new finding(s) fail there too (pre-existing)")
    return notes


def _count(n: int) -> str:
    return "1 finding" if n == 1 else f"{n} findings"
