"""fuzzgate's end of the coverage collector's side channel, and what it hands over.

`CoverageChannel` owns two pipes the server inherits (never its stdout, which is the MCP channel)
and puts the collector (`collector/_site/`) first on the server's `PYTHONPATH`, or for a Node
server (`plan.runtime == "node"`) the Node collector's preload (`collector/node/`) first in its
`NODE_OPTIONS`; both speak the same protocol. `hello` waits for
the collector to say it runs (`CollectorInfo`); `collect` asks for the arcs the server's measured
code ran since the previous `collect` (one call's, when calls go one at a time) and the constants
of the files first run since then (`CallCoverage`). `measure(False)` before a call fuzzgate will not
collect, and `measure(True)` before one it will: a collector that can (`CollectorInfo.pause`) stops
measuring in between, so those calls run without its cost; with one that cannot, what they ran is
collected and set aside before the next measured call. None of them raises: a channel that breaks
gives None, and the run goes on with behaviour feedback. `feedback_note` says in one line which of the
two a server's calls give, and why.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import anyio

from fuzzgate.config.model import FeedbackMode, TargetConfig
from fuzzgate.coverage import collector
from fuzzgate.coverage.collector import node as node_collector
from fuzzgate.coverage.plan import NODE, CollectorPlan
from fuzzgate.sandbox.owned_process import LaunchSpec

HELLO_TIMEOUT_S = 2.0
"""The collector says hello before the server's own code runs, so by the time the server answered
`initialize` the hello is in the pipe: this only bounds a wait that should take no time."""
COLLECT_TIMEOUT_S = 1.0
MAX_REPLY_BYTES = 64 * 1024 * 1024
NOT_LOADED = "the server did not load the collector"
NODE_NOT_LOADED = "the server did not load the collector (no Node process ran the entry point with NODE_OPTIONS kept)"
_SITE = Path(collector.__file__).parent / "_site"
_CORES = {"CTracer": "C tracer", "PyTracer": "Python tracer", "SysMonitor": "sys.monitoring"}


@dataclass(frozen=True, slots=True)
class Constant:
    """A constant the server's code compares against, and the variable, attribute or key it is
    compared with when there is one. `length`: compared with that value's length (`len(items) ==
    3`), not with the value itself."""

    value: str | int | float
    name: str | None = None
    length: bool = False


@dataclass(frozen=True, slots=True)
class CallCoverage:
    """What the measured code ran since the previous collect: every arc (`relpath:from:to`, as
    coverage.py numbers them: negative for entering or leaving a code object), not only new ones;
    and the constants of the files it ran for the first time."""

    arcs: frozenset[str]
    constants: tuple[Constant, ...] = ()
    lines: frozenset[str] = frozenset()
    """Every line run (`relpath:line`): the arcs' ends, and on Python 3.12+ (sys.monitoring, where
    `arcs` are the branches taken) each line event."""


@dataclass(frozen=True, slots=True)
class CollectorInfo:
    """What the collector said in its hello."""

    python: str
    coverage: str
    core: str
    """What measures: `sys.monitoring` (Python 3.12+, the collector's own `monitor.py`), or
    coverage.py's tracer: `CTracer`, `PyTracer` (slow: fuzzgate's compiled tracer does not load
    into the server's Python)."""
    per_call: bool
    """Each collect holds every arc the call ran (False: only arcs not handed over before)."""
    measured: str
    runtime: str = "python"
    """`python`, or `node` (then `python` holds Node's version and `coverage` V8's)."""
    pause: bool = False
    """Measuring can be switched off and on between calls (`CoverageChannel.measure`)."""

    def describe(self) -> str:
        if self.runtime == NODE:
            return f"Node {self.python}, V8 precise coverage (blocks), measuring {self.measured}"
        if self.core == "sys.monitoring":
            return f"Python {self.python}, sys.monitoring (lines and branches), measuring {self.measured}"
        core = _CORES.get(self.core, self.core)
        return f"Python {self.python}, coverage.py {self.coverage} {core}, measuring {self.measured}"


def feedback_note(target: TargetConfig, plan: CollectorPlan, info: CollectorInfo | None, failure: str | None) -> str:
    """The one line that says which signal a target's calls give and why."""
    if target.feedback is FeedbackMode.OFF:
        return "off: feedback = off"
    if info is not None:
        return f"coverage: {info.describe()}"
    return f"behaviour: {failure or plan.reason}"


class ChannelBroken(Exception):
    """The side channel failed; the message says why, in a short phrase."""


class CoverageChannel:
    """fuzzgate's end of the side channel to one server start's collector (module docstring).

    Made before the server starts: `apply` adds `env` and `pass_fds` to its launch spec. Closed
    with the connection (`close`, idempotent); a restarted server gets a new channel."""

    def __init__(self, plan: CollectorPlan, *, map_path: Callable[[str], str | None] | None = None) -> None:
        import coverage as coverage_py

        self.plan = plan
        self.info: CollectorInfo | None = None
        self.failure: str | None = None
        """Why the channel gives nothing (no hello, an error the collector sent, a broken pipe)."""
        self._request_read, self._request_write = os.pipe()
        self._reply_read, self._reply_write = os.pipe()
        for fd in (self._request_write, self._reply_read):
            os.set_blocking(fd, False)
        self._child_ends_open = True
        self._closed = False
        self._buffer = bytearray()
        self._sequence = 0
        self._lock: anyio.Lock | None = None
        self._measuring = True
        self._set_aside: tuple[Constant, ...] = ()
        """Constants of an answer collected only to be set aside (`measure`), for the next collect."""
        mapped = map_path or (lambda text: None)
        dirs = [mapped(str(directory)) or str(directory) for directory in plan.directories]
        self._settings: dict[str, Any] = {
            "request_fd": self._request_read,
            "reply_fd": self._reply_write,
            "dirs": dirs,
            "packages": list(plan.packages),
        }
        if plan.runtime == NODE:
            # A Node wrapper (npx) keeps the pipes from its children: the entry opens them through
            # /proc in the wrapper, and checks by inode that they are these pipes.
            self._settings["request_ino"] = str(os.fstat(self._request_read).st_ino)
            self._settings["reply_ino"] = str(os.fstat(self._reply_write).st_ino)
            entry = str(plan.entry) if plan.entry is not None else None
            self._settings["entry"] = (mapped(entry) or entry) if entry is not None else None
            self._settings["entry_in_argv"] = plan.entry_in_argv
        else:
            self._settings["coverage"] = str(Path(coverage_py.__file__).parent)
            self._settings["package"] = str(Path(collector.__file__).parent)

    @property
    def pass_fds(self) -> tuple[int, int]:
        """The server's ends of the two pipes, which it must inherit."""
        return (self._request_read, self._reply_write)

    def environment(self, pythonpath: str | None = None, *, node_options: str | None = None) -> dict[str, str]:
        """The variables added to the server's environment, around the user's `pythonpath` (for a
        Node server, its `node_options`)."""
        if self.plan.runtime == NODE:
            settings = {**self._settings, "node_options": node_options}
            preload = '"' + str(node_collector.PRELOAD).replace("\\", "\\\\").replace('"', '\\"') + '"'
            options = f"--require {preload} {node_options}" if node_options else f"--require {preload}"
            return {node_collector.ENV: json.dumps(settings), "NODE_OPTIONS": options}
        settings = {**self._settings, "pythonpath": pythonpath}
        path = os.pathsep.join([str(_SITE), pythonpath]) if pythonpath else str(_SITE)
        return {collector.ENV: json.dumps(settings), "PYTHONPATH": path}

    @property
    def env(self) -> dict[str, str]:
        return self.environment()

    def apply(self, spec: LaunchSpec) -> LaunchSpec:
        """`spec` with the collector's environment (the user's PYTHONPATH kept after it) and pipes."""
        environment = self.environment(
            spec.env.get("PYTHONPATH") or None, node_options=spec.env.get("NODE_OPTIONS") or None
        )
        env = {**spec.env, **environment}
        return replace(spec, env=env, pass_fds=(*spec.pass_fds, *self.pass_fds))

    async def hello(self, timeout_s: float = HELLO_TIMEOUT_S) -> CollectorInfo | None:
        """Wait for the collector's hello (the server has started by now). None, with `failure`
        set, when it does not come."""
        self._close_child_ends()
        try:
            with anyio.fail_after(timeout_s):
                message = await self._receive()
        except TimeoutError:
            self._give_up(NODE_NOT_LOADED if self.plan.runtime == NODE else NOT_LOADED)
            return None
        except ChannelBroken as exc:
            self._give_up(str(exc))
            return None
        hello = message.get("hello")
        if not isinstance(hello, dict):
            self._give_up(NOT_LOADED)
            return None
        node = hello.get("runtime") == NODE
        self.info = CollectorInfo(
            python=str(hello.get("node" if node else "python", "?")),
            coverage=str(hello.get("v8" if node else "coverage", "?")),
            core=str(hello.get("core", "?")),
            per_call=hello.get("per_call") is True,
            measured=self.plan.measured(),
            runtime=NODE if node else "python",
            pause=hello.get("pause") is True,
        )
        return self.info

    @property
    def measuring(self) -> bool:
        """Whether the next call is measured (`measure`)."""
        return self._measuring

    async def measure(self, on: bool, timeout_s: float = COLLECT_TIMEOUT_S) -> None:
        """Measure the calls from now on (`on`), or not. A collector that can stops or starts
        measuring, and says so before this returns (a call sent after it is measured from its
        start); with one that cannot, turning measuring on collects what ran meanwhile and sets it
        aside, so the next collect holds only what the next call ran."""
        if on == self._measuring or self.info is None or self._closed:
            return
        self._measuring = on
        if self.info.pause:
            await self._ask("resume" if on else "pause", timeout_s)
        elif on:
            skipped = await self.collect(timeout_s)
            if skipped is not None:
                self._set_aside = (*self._set_aside, *skipped.constants)

    async def collect(self, timeout_s: float = COLLECT_TIMEOUT_S) -> CallCoverage | None:
        """The arcs run since the previous collect, and new constants; None when the channel is
        broken or the collector did not answer in time (a late answer is skipped later)."""
        message = await self._ask(None, timeout_s)
        if message is None:
            return None
        coverage = _call_coverage(message)
        if self._set_aside:
            coverage = replace(coverage, constants=(*self._set_aside, *coverage.constants))
            self._set_aside = ()
        return coverage

    async def _ask(self, verb: str | None, timeout_s: float) -> dict[str, Any] | None:
        """Send one request (a collect, or `verb`) and wait for its answer; None when the channel
        is broken or the answer is late (skipped when it comes)."""
        if self.info is None or self._closed:
            return None
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            if self._closed:
                return None
            self._sequence += 1
            sequence = self._sequence
            request = f"{sequence} {verb}" if verb else str(sequence)
            try:
                self._write(f"{request}\n".encode("ascii"))
                with anyio.fail_after(timeout_s):
                    while True:
                        message = await self._receive()
                        if message.get("seq") == sequence:
                            return message
            except TimeoutError:
                return None
            except ChannelBroken as exc:
                self._give_up(str(exc))
                return None

    def close(self) -> None:
        """Close every pipe end fuzzgate holds; the collector sees its request pipe end."""
        if self._closed:
            return
        self._closed = True
        self._close_child_ends()
        for fd in (self._request_write, self._reply_read):
            with suppress(Exception):
                # Wakes a task waiting on the fd; outside an event loop there is none.
                anyio.notify_closing(fd)
            with suppress(OSError):
                os.close(fd)

    def _give_up(self, reason: str) -> None:
        if self.failure is None:
            self.failure = reason
        self.close()

    def _close_child_ends(self) -> None:
        if self._child_ends_open:
            self._child_ends_open = False
            for fd in self.pass_fds:
                with suppress(OSError):
                    os.close(fd)

    def _write(self, data: bytes) -> None:
        try:
            written = os.write(self._request_write, data)
        except BlockingIOError:
            raise ChannelBroken("the collector stopped reading its requests") from None
        except OSError as exc:
            raise ChannelBroken(f"the collector's channel closed ({exc.strerror})") from None
        if written != len(data):
            raise ChannelBroken("the collector stopped reading its requests")

    async def _receive(self) -> dict[str, Any]:
        """The collector's next message (an error it sends raises `ChannelBroken` with it)."""
        while (end := self._buffer.find(b"\n")) < 0:
            if len(self._buffer) > MAX_REPLY_BYTES:
                raise ChannelBroken("the collector sent an over-long answer")
            try:
                await anyio.wait_readable(self._reply_read)
                chunk = os.read(self._reply_read, 1 << 16)
            except BlockingIOError:
                continue
            except (OSError, anyio.ClosedResourceError):
                raise ChannelBroken("the collector's channel closed") from None
            if not chunk:
                raise ChannelBroken("the collector's channel closed (the server exited?)")
            self._buffer += chunk
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        try:
            message = json.loads(line)
        except ValueError:
            raise ChannelBroken("the collector sent something that is not JSON") from None
        if not isinstance(message, dict):
            raise ChannelBroken("the collector sent something that is not a message")
        if "error" in message:
            raise ChannelBroken(f"the collector failed: {str(message['error'])[:200]}")
        return message


def _call_coverage(message: Mapping[str, Any]) -> CallCoverage:
    """A collector's answer as `CallCoverage`; what does not have the expected shape is dropped."""
    arcs: set[str] = set()
    lines: set[str] = set()
    files = message.get("arcs")
    for name, pairs in files.items() if isinstance(files, dict) else ():
        for pair in pairs if isinstance(pairs, list) else ():
            if isinstance(pair, list) and len(pair) == 2 and all(type(n) is int for n in pair):
                arcs.add(f"{name}:{pair[0]}:{pair[1]}")
                lines.update(f"{name}:{n}" for n in pair if n > 0)
    files = message.get("lines")
    for name, numbers in files.items() if isinstance(files, dict) else ():
        if isinstance(numbers, list):
            lines.update(f"{name}:{n}" for n in numbers if type(n) is int and n > 0)
    return CallCoverage(frozenset(arcs), _constants(message.get("constants")), frozenset(lines))


def _constants(raw: Any) -> tuple[Constant, ...]:
    found: list[Constant] = []
    for item in raw if isinstance(raw, list) else ():
        if not isinstance(item, list) or len(item) != 3:
            continue
        value, name, length = item
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            continue
        found.append(Constant(value, name if isinstance(name, str) else None, length is True))
    return tuple(found)
