"""Inside a server on Python 3.12 or later: lines and branches of the measured code through
`sys.monitoring` (PEP 669), without coverage.py.

Why not coverage.py there: its tracers are a trace function (`sys.settrace`), which slows every
line of every module, the SDK's included, and fuzzgate's compiled C tracer loads only into the
Python fuzzgate runs on; on another Python coverage.py falls back to its Python tracer, which cut a
small server's call rate by three quarters in bench/collector_cost.py. Its sys.monitoring core
does not measure branches before 3.14, and it disables each event after its first hit, so a line
run again in a later call is not seen again unless `sys.monitoring.restart_events()` re-arms every
code object of the process.

Here only the measured code objects get events (`set_local_events` at their first `PY_START`;
every other code object's `PY_START` is disabled at once, so it costs nothing after its first
call): `LINE`, and `BRANCH` (3.12, 3.13) or `BRANCH_LEFT`/`BRANCH_RIGHT` (3.14 on), whose source
and destination offsets become a `from:to` pair of lines. Events are not disabled after their
first hit, so every answer holds each line and branch the call ran; past `EVENT_BUDGET` events in
one answer's window (a hot loop), events are disabled until the next answer re-arms them.

`pause` takes the local events off every measured code object and `resume` puts them back, so a call
fuzzgate does not measure runs the measured code with no event at all (and every other code object
has none anyway): about as fast as without the collector.
"""

from __future__ import annotations

import bisect
import sys
from collections.abc import Callable
from types import CodeType
from typing import Any

EVENT_BUDGET = 50_000
"""Events recorded between two answers before the rest are disabled until the next answer."""


class MonitorRecorder:
    """Records lines and branch arcs per code object; `take` hands them over by file name."""

    def __init__(self, measures: Callable[[str], bool]) -> None:
        monitoring: Any = getattr(sys, "monitoring")  # noqa: B009 (absent before 3.12)
        self._mon = monitoring
        events = monitoring.events
        self._tool = _free_tool(monitoring)
        self._measures = measures
        self._decided: dict[str, bool] = {}
        self._lines: dict[CodeType, set[int]] = {}
        self._branches: dict[CodeType, set[tuple[int, int]]] = {}
        self._count = 0
        self._disabled = False
        self._offsets: dict[CodeType, tuple[list[int], list[int]]] = {}
        self._armed: dict[CodeType, None] = {}
        """Every measured code object met so far, in the order met: the ones `resume` re-arms."""
        self._paused = False
        branch_events = [getattr(events, name) for name in ("BRANCH_LEFT", "BRANCH_RIGHT") if hasattr(events, name)]
        if not branch_events:
            branch_events = [events.BRANCH]
        self._local = events.LINE
        for event in branch_events:
            self._local |= event
        monitoring.use_tool_id(self._tool, "fuzzgate")
        monitoring.register_callback(self._tool, events.PY_START, self._py_start)
        monitoring.register_callback(self._tool, events.LINE, self._line)
        for event in branch_events:
            monitoring.register_callback(self._tool, event, self._branch)

    def start(self) -> None:
        self._mon.set_events(self._tool, self._mon.events.PY_START)

    def stop(self) -> None:
        self._mon.set_events(self._tool, 0)
        self._mon.free_tool_id(self._tool)

    def _py_start(self, code: CodeType, offset: int) -> Any:
        filename = code.co_filename
        measured = self._decided.get(filename)
        if measured is None:
            measured = self._decided[filename] = self._measures(filename)
        if measured:
            self._armed[code] = None
            if not self._paused:
                self._mon.set_local_events(self._tool, code, self._local)
        return self._mon.DISABLE

    def pause(self) -> None:
        """No more events from the measured code until `resume`; what was recorded is dropped."""
        self._paused = True
        for code in list(self._armed):
            self._mon.set_local_events(self._tool, code, 0)
        self.take()

    def resume(self) -> None:
        """Events again from every measured code object, starting with nothing recorded."""
        self._paused = False
        self.take()
        for code in list(self._armed):
            self._mon.set_local_events(self._tool, code, self._local)

    def _line(self, code: CodeType, line: int) -> Any:
        self._count += 1
        if self._count > EVENT_BUDGET:
            self._disabled = True
            return self._mon.DISABLE
        lines = self._lines.get(code)
        if lines is None:
            lines = self._lines[code] = set()
        lines.add(line)
        return None

    def _branch(self, code: CodeType, source: int, destination: int) -> Any:
        self._count += 1
        if self._count > EVENT_BUDGET:
            self._disabled = True
            return self._mon.DISABLE
        branches = self._branches.get(code)
        if branches is None:
            branches = self._branches[code] = set()
        branches.add((source, destination))
        return None

    def take(self) -> tuple[dict[str, set[int]], dict[str, set[tuple[int, int]]]]:
        """Lines and branch arcs (as line pairs) per file since the previous take."""
        lines, self._lines = self._lines, {}
        branches, self._branches = self._branches, {}
        self._count = 0
        if self._disabled:
            self._disabled = False
            self._mon.restart_events()
        by_file: dict[str, set[int]] = {}
        for code, numbers in list(lines.items()):
            by_file.setdefault(code.co_filename, set()).update(set(numbers))
        arcs: dict[str, set[tuple[int, int]]] = {}
        for code, pairs in list(branches.items()):
            found = arcs.setdefault(code.co_filename, set())
            for source, destination in set(pairs):
                first, second = self._line_of(code, source), self._line_of(code, destination)
                if first is not None and second is not None:
                    found.add((first, second))
        return by_file, arcs

    def _line_of(self, code: CodeType, offset: int) -> int | None:
        table = self._offsets.get(code)
        if table is None:
            starts: list[int] = []
            numbers: list[int] = []
            for start, _end, line in code.co_lines():
                if line is not None:
                    starts.append(start)
                    numbers.append(line)
            table = self._offsets[code] = (starts, numbers)
        starts, numbers = table
        index = bisect.bisect_right(starts, offset) - 1
        return numbers[index] if index >= 0 else None


def _free_tool(monitoring: Any) -> int:
    """coverage.py's tool id if free, else another one no debugger or profiler claims by default."""
    for tool in (monitoring.COVERAGE_ID, 3, 4):
        if monitoring.get_tool(tool) is None:
            return int(tool)
    raise RuntimeError("sys.monitoring has no free tool id")
