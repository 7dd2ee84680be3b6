"""Which calls the coverage collector measures: all of a tool's calls until its coverage stops
growing, then one in `every`.

Measuring is what the collector costs: on Python 3.11 the C tracer slows every line the server runs,
on 3.12+ `sys.monitoring` less, and every measured call adds a round trip on the side channel. A
tool whose last `plateau` calls reached nothing new (no arc, line or behaviour) is on a plateau:
from then on a call of it is measured when a hash of the run's seed, the tool and the call's number
among the tool's sampled calls says so, one in `every` on average, so the same seed samples the
same calls. A call it does not measure gets behaviour feedback only, and runs without the
collector's cost where the collector can switch off (`CoverageChannel.measure`). The first call of
the tool that reaches something new, measured or not, ends the plateau: every call is measured
again until the next one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from fuzzgate.model.findings import Surface
from fuzzgate.record.results import SamplingSummary

PLATEAU_CALLS = 100
"""Calls of a tool in a row that reached nothing new before its calls are sampled."""
DEFAULT_EVERY = 8
"""`[fuzzgate] coverage_sampling`'s default: one call in 8 measured on a plateau."""


@dataclass(slots=True)
class _Tool:
    quiet: int = 0
    """Calls in a row that reached nothing new."""
    draws: int = 0
    """Calls decided by the sample since the tool first reached a plateau."""


class CoverageSampling:
    """The sampling decision per call, from the run's seed (module docstring)."""

    def __init__(self, seed: int, every: int, plateau: int = PLATEAU_CALLS) -> None:
        self.seed = seed
        self.every = max(1, every)
        self.plateau = max(1, plateau)
        self._tools: dict[tuple[Surface, str], _Tool] = {}
        self._sampled: dict[str, None] = {}
        self.measured_calls = 0
        self.unmeasured_calls = 0

    def on_plateau(self, surface: Surface, tool: str) -> bool:
        state = self._tools.get((surface, tool))
        return self.every > 1 and state is not None and state.quiet >= self.plateau

    def measures(self, surface: Surface, tool: str, label: str) -> bool:
        """Whether the tool's next call is measured (each call asks once, in the order sent)."""
        if not self.on_plateau(surface, tool):
            return True
        state = self._tools[(surface, tool)]
        self._sampled.setdefault(label, None)
        draw = state.draws
        state.draws += 1
        return _draw(self.seed, surface, tool, draw) % self.every == 0

    def after(self, surface: Surface, tool: str, measured: bool, new: bool) -> None:
        """Record one call of the tool: whether it was measured, whether it reached something new."""
        state = self._tools.setdefault((surface, tool), _Tool())
        state.quiet = 0 if new else state.quiet + 1
        if measured:
            self.measured_calls += 1
        else:
            self.unmeasured_calls += 1

    def summary(self) -> SamplingSummary:
        return SamplingSummary(
            every=self.every,
            plateau=self.plateau,
            tools=tuple(self._sampled),
            measured=self.measured_calls,
            unmeasured=self.unmeasured_calls,
        )


def _draw(seed: int, surface: Surface, tool: str, index: int) -> int:
    text = f"{seed}\0{surface.value}\0{tool}\0{index}"
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big")
