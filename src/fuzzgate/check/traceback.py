"""Finding stack traces in what a server wrote (Python plain or rich-formatted, Node.js), and the
frames that identify the bug.

Hand-written because no maintained library parses tracebacks out of arbitrary log text in these
three shapes; the formats are stable and documented by their runtimes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from fuzzgate.check.normalize import own_frames
from fuzzgate.check.patterns import PY_TRACEBACK_HEADER as _PY_HEADER

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_PY_FRAME = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<func>[^\s│]+)')
_RICH_FRAME = re.compile(r"│\s*(?P<path>(?:/|[A-Za-z]:\\|\./|\.\./)?[^\s│:]+\.py):(?P<line>\d+) in (?P<func>[^\s│]+)")
_EXC_LINE = re.compile(
    r"^\s*(?P<type>(?:[A-Za-z_][\w.]*)?(?:Error|Exception|Exit|Interrupt|Warning|Fault|Failure)\w*)(?::\s*(?P<msg>.*))?$"
)
_NODE_FRAME = re.compile(
    r"^\s+at (?:(?P<func>[^\s(]+) \()?(?P<path>(?:file://|node:)?[^\s():]+):(?P<line>\d+):\d+\)?\s*$"
)
_ANY_EXC_LINE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)(?::\s?(?P<msg>.*))?$")
"""An exception line of any type name (`mypkg.NotFound: no such id`, a bare `StopIteration`): read
only where Python puts it, the first unindented line after a traceback's frames."""
_GROUP_PREFIX = re.compile(r"^\s*\|(?: {1,3}\|)*(?: |$)")
"""The bars an exception group's traceback draws before each line of its sub-exceptions' (3.11+)."""
_GROUP_RULE = re.compile(r"^\s*\+[-+]*(?: \d+ -+| \.\.\.)?")
_LOG_PREFIX = re.compile(r"^\s*(?:\[[^\]]*\]\s*)?(?:(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\s+)?")

ANONYMOUS_FRAMES = frozenset({"<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>", "<lambda>", "<anonymous>"})
LIBRARY_MARKERS = (
    "site-packages",
    "dist-packages",
    "/lib/python",
    "node_modules",
    "<frozen",
    "node:internal",
    "internal/",
)


@dataclass(frozen=True, slots=True)
class Frame:
    path: str
    line: int
    func: str

    @property
    def in_library(self) -> bool:
        return any(marker in self.path for marker in LIBRARY_MARKERS) or not (
            "/" in self.path or "\\" in self.path or self.path.endswith((".py", ".js", ".ts", ".mjs", ".cjs"))
        )

    def label(self, redact: Callable[[str], str] | None = None) -> str:
        """`file:function`, the file's name taken from the path `redact`ed whole first: a path a
        user passed in (a secret, for all fuzzgate knows) must not leave its last characters."""
        path = self.path if redact is None else redact(self.path)
        name = path.replace("\\", "/").rsplit("/", 1)[-1]
        return f"{name}:{self.func}"


@dataclass(frozen=True, slots=True)
class Trace:
    """One traceback: its frames, outermost first, and the exception it ended in."""

    exc_type: str
    message: str
    frames: tuple[Frame, ...]
    typed: bool = True
    """Whether the traceback ended in an exception line; without one (cut short, or a shape not
    read) `exc_type` is a placeholder ("Exception") and `message` is empty."""

    def user_frames(self) -> tuple[Frame, ...]:
        return tuple(f for f in self.frames if not f.in_library)

    def signature(self, redact: Callable[[str], str] | None = None) -> tuple[str, ...]:
        """What identifies the bug: the frame that raised, the innermost in the server's own code
        (`normalize.own_frames`: outside libraries, or in the server's installed package), else the
        innermost of all, as `file:function` (comprehension and lambda frames are looked through).

        Callers are left out: recursion depth and the path taken to the faulty function depend on
        the payload. Line numbers are left out: they move with unrelated edits. The exception type
        is left out too: which exception surfaces at one place depends on which value got there
        (a missing check raises `TypeError` for one wrong value and `ValueError` for another, and
        an input the schema forbids may be coerced into one it allows), and a gate that gave one
        bug two fingerprints would call it new again on the next seed.

        `redact` is applied to the raising frame's path before its file name is taken from it."""
        frames = own_frames(self.frames) or self.frames
        named = [f for f in frames if f.func not in ANONYMOUS_FRAMES] or list(frames)
        return (named[-1].label(redact),) if named else (self.exc_type.rsplit(".", 1)[-1],)


def _clean(text: str) -> list[str]:
    return [_ungrouped(_ANSI.sub("", line)) for line in text.splitlines()]


def _ungrouped(line: str) -> str:
    """A line of an exception group's traceback as the plain traceback it frames would print it:
    the bars before a sub-exception's lines taken off (`    |   File ...` reads `  File ...`), a
    rule between sub-exceptions (`+-+---- 1 ----`) left empty."""
    bars = _GROUP_PREFIX.match(line)
    if bars is not None:
        return line[bars.end() :]
    if _GROUP_RULE.fullmatch(line.rstrip()) and "+" in line:
        return ""
    return line


def parse_traces(text: str) -> list[Trace]:
    """Every traceback in `text`, in order. A chained Python exception gives one Trace per link."""
    lines = _clean(text)
    traces: list[Trace] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if _PY_HEADER.search(line):
            trace, i = _parse_python(lines, i + 1)
            if trace:
                traces.append(trace)
            continue
        if _EXC_LINE.match(_LOG_PREFIX.sub("", line)) and i + 1 < len(lines) and _NODE_FRAME.match(lines[i + 1]):
            trace, i = _parse_node(lines, i)
            traces.append(trace)
            continue
        i += 1
    return traces


def _parse_python(lines: list[str], i: int) -> tuple[Trace | None, int]:
    frames: list[Frame] = []
    boxed = False
    after_frames = False
    """Whether no unindented line came since the last frame: the next one is the exception line."""
    while i < len(lines):
        line = lines[i]
        match = _PY_FRAME.search(line) or _RICH_FRAME.search(line)
        boxed = boxed or line.lstrip().startswith("│")
        if match:
            frames.append(Frame(match["path"], int(match["line"]), match["func"]))
            after_frames = True
        elif _PY_HEADER.search(line):
            break
        elif frames and not line.lstrip().startswith(("│", "╰", "╭")):
            # Source lines inside a plain traceback are indented; its exception line is not.
            exc = _EXC_LINE.match(_LOG_PREFIX.sub("", line).strip())
            if exc and (boxed or not line.startswith("    ")):
                return Trace(exc["type"], (exc["msg"] or "").strip(), tuple(frames)), i + 1
            if after_frames and not boxed and line.strip() and not line[0].isspace():
                after_frames = False
                exc = _ANY_EXC_LINE.match(line.rstrip())
                if exc:
                    return Trace(exc["type"], (exc["msg"] or "").strip(), tuple(frames)), i + 1
        i += 1
    return (Trace("Exception", "", tuple(frames), typed=False), i) if frames else (None, i)


def _parse_node(lines: list[str], i: int) -> tuple[Trace, int]:
    head = _EXC_LINE.match(_LOG_PREFIX.sub("", lines[i]))
    assert head is not None
    frames: list[Frame] = []
    i += 1
    while i < len(lines) and (match := _NODE_FRAME.match(lines[i])):
        path = match["path"].removeprefix("file://")
        frames.append(Frame(path, int(match["line"]), match["func"] or "<anonymous>"))
        i += 1
    # Node prints the innermost frame first; Trace keeps Python's outermost-first order.
    return Trace(head["type"], (head["msg"] or "").strip(), tuple(reversed(frames))), i


_NODE_FATAL = re.compile(r"^Node\.js v\d+\.\d+\.\d+$")
"""The line Node.js (17 and later) ends its report of an uncaught exception with, just before the
process exits: a server that wrote it is dying, whatever it answered."""


def reports_fatal_error(text: str) -> bool:
    """Whether stderr `text` ends with a runtime's report of the error the process dies of."""
    if "Node.js v" not in text:
        # Asked of every call's stderr: mostly empty, never worth splitting into lines.
        return False
    lines = _clean(text)
    return bool(lines) and _NODE_FATAL.match(lines[-1].strip()) is not None


def root_cause(traces: list[Trace]) -> Trace | None:
    """The trace that says most about the bug: the first (root of a chain) that reaches user code."""
    for trace in traces:
        if trace.user_frames():
            return trace
    return traces[0] if traces else None
