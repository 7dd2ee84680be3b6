"""Inside the server: what measures the server's own code, and the side channel to fuzzgate.

The channel is two inherited pipes. fuzzgate writes one line per request (a sequence number) on
the request pipe; a daemon thread here answers each with one JSON line on the reply pipe. The first
line, written at start-up, is the hello (Python version, what measures, what is measured, and
`"pause": true` when measuring can be switched off and on). Each answer holds the lines and arcs
the measured code ran since the previous answer, per file (path relative to its measured root, so a
server started in another throwaway layer gives the same names), and the constants of the files
first seen since then. A request `<seq> pause` stops measuring (the calls fuzzgate does not measure
then run without the probe's cost) and `<seq> resume` starts it again, each dropping what was
recorded since the previous answer and answered with `{"seq": <seq>, "measuring": bool}` once
done; fuzzgate sends them only to a collector whose hello offered it. Any error here is sent as
`{"error": ...}` if the pipe still takes it, measuring stops, and the server goes on unharmed.

What measures (a probe): on Python 3.12 and later, sys.monitoring on the measured code objects
only (`monitor.py`, which says why not coverage.py there); on 3.11 and earlier, which have no
sys.monitoring, coverage.py's C tracer (`CoverageProbe`), a trace function that slows all Python
code while it runs (bench/collector_cost.py measures by how much).

Why coverage.py's C tracer (`core = "ctrace"`) and not its default: on 3.14 the default is its
sys.monitoring core, which disables each event after its first hit, so a line run again in a later
call would never be seen again, unless `sys.monitoring.restart_events()` at every answer re-armed
every code object of the process (`monitor.py` runs there instead anyway). When fuzzgate's
compiled tracer does not load into the server's Python, coverage.py falls back to its Python
tracer, which is slower (the hello says which tracer runs).

Why the C tracer's own data dict, a private attribute of coverage.py: fuzzgate wants the arcs of
one call, every call. The public `Coverage.get_data()` only accumulates (and costs ~0.4 ms a call
on a small server); `erase()` after it would reset the data, but the running tracer keeps writing
into the dict it was given at start, so nothing is seen after the first erase. The collector's
dict (`Coverage._collector.data`, file name -> set of arcs, packed into ints by the C tracer) is
what the tracer writes into, and coverage.py itself empties its sets in place on every flush:
taking a copy of each set and removing that copy from it hands over the arcs of one call in ~0.02
ms, and an arc recorded meanwhile stays for the next answer. pyproject.toml keeps coverage.py below
8 (this was checked with 7.17); when the attribute is missing, `get_data()` is used instead, and
answers then hold only the arcs not seen before (`per_call` false in the hello).
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import importlib.util
import os
import platform
import sys
import threading
import tokenize
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

from .constants import mine
from .imports import UntracedImports
from .monitor import MonitorRecorder
from .pipe import Channel
from .switch import TracerSwitch

MAX_CONSTANTS = 2000
"""Constants sent over the server's life, first seen first."""
QUIET = (
    "already-imported",
    "couldnt-parse",
    "dynamic-conflict",
    "fork",
    "include-ignored",
    "module-not-imported",
    "module-not-measured",
    "module-not-python",
    "no-ctracer",
    "no-data-collected",
    "no-source",
    "no-sysmon",
    "no-sysmon-context",
    "pth",
    "trace-changed",
)
"""coverage.py's warning slugs: a warning goes to the server's stderr, which fuzzgate's oracles
read as the server's own words."""


class Roots:
    """What is measured, and the name each measured file goes by: its path relative to the
    directory it was measured under (a package's files under the package's parent: `pkg/mod.py`)."""

    def __init__(self, dirs: Sequence[str], packages: Sequence[str]) -> None:
        self.sources: list[str] = []
        self.unresolved: list[str] = []
        self.labels: list[str] = []
        self._roots: list[tuple[str, str]] = []
        self._names: dict[str, str] = {}
        self._files: set[str] = set()
        """Measured single-module packages (`pkg.py`)."""
        for directory in dirs:
            self.sources.append(directory)
            self.labels.append(directory)
            self._add_root(directory)
        for package in packages:
            self.labels.append(package)
            locations = _locate(package)
            if not locations:
                # Not importable yet (it may be put on sys.path by the server): matched by module
                # name once it is imported, its root taken from the imported module.
                self.unresolved.append(package)
                continue
            for location in locations:
                if os.path.isdir(location):
                    self.sources.append(location)
                    self._add_root(os.path.dirname(location))
                else:
                    self.unresolved.append(package)
                    self._files.add(os.path.abspath(location))
                    self._add_root(os.path.dirname(location))
        spellings = {os.path.abspath(s) for s in self.sources} | {os.path.realpath(s) for s in self.sources}
        self._spellings = sorted(spellings, key=len, reverse=True)

    def measures(self, filename: str) -> bool:
        """Whether `filename` is measured: under a measured directory (not in an installed-packages
        directory inside it, such as a project's `.venv`), or a measured package's module. What
        coverage.py decides with `source` and `source_pkgs`, for the sys.monitoring probe."""
        if not os.path.isabs(filename):
            return False
        if filename in self._files:
            return True
        for source in self._spellings:
            prefix = source.rstrip(os.sep) + os.sep
            if filename.startswith(prefix):
                inner = filename[len(prefix) :].split(os.sep)[:-1]
                return not any(part in _INSTALLED for part in inner)
        for package in self.unresolved:
            module = sys.modules.get(package)
            where = getattr(module, "__file__", None)
            if not where:
                continue
            if filename == where or (_is_package(module) and filename.startswith(os.path.dirname(where) + os.sep)):
                return True
        return False

    def imports(self, name: str, origin: str | None) -> bool:
        """Whether importing module `name`, found at `origin`, runs measured code: its file is
        measured, or it is (in) a measured package not yet imported."""
        if any(name == package or name.startswith(package + ".") for package in self.unresolved):
            return True
        return origin is not None and self.measures(origin)

    def _add_root(self, directory: str) -> None:
        for spelling in {os.path.abspath(directory), os.path.realpath(directory)}:
            if (spelling, "") not in self._roots:
                self._roots.append((spelling, ""))
        self._roots.sort(key=lambda root: -len(root[0]))

    def name(self, filename: str) -> str:
        known = self._names.get(filename)
        if known is not None:
            return known
        name = self._relative(filename)
        if name is None and self.unresolved:
            for package in self.unresolved:
                module = sys.modules.get(package)
                where = getattr(module, "__file__", None)
                if where:
                    home = os.path.dirname(where)
                    self._add_root(os.path.dirname(home) if _is_package(module) else home)
            name = self._relative(filename)
        if name is None:
            name = filename
        self._names[filename] = name
        return name

    def _relative(self, filename: str) -> str | None:
        for root, _ in self._roots:
            if filename.startswith(root.rstrip(os.sep) + os.sep):
                return filename[len(root.rstrip(os.sep)) + 1 :].replace(os.sep, "/")
        return None


_INSTALLED = frozenset({"site-packages", "dist-packages", ".venv", "venv", ".tox", "__pypackages__", "node_modules"})


def _is_package(module: ModuleType | None) -> bool:
    return module is not None and hasattr(module, "__path__")


def _locate(package: str) -> list[str]:
    """Where `package` (a top-level name) would be imported from, without importing it: its
    package directories, or its module file. Searched as the interpreter will search: the script's
    directory (or the working directory for `-m`) first, then sys.path."""
    first = os.getcwd() if sys.argv and sys.argv[0] in ("-m", "-c", "") else None
    if first is None and sys.argv and os.path.isfile(sys.argv[0]):
        first = os.path.dirname(os.path.abspath(sys.argv[0]))
    path = [first, *sys.path] if first else list(sys.path)
    try:
        spec = importlib.machinery.PathFinder.find_spec(package, path)
    except (ImportError, ValueError, OSError):
        return []
    if spec is None:
        return []
    if spec.submodule_search_locations:
        return [str(location) for location in spec.submodule_search_locations]
    return [spec.origin] if spec.origin and spec.origin not in ("built-in", "frozen") else []


def load_coverage(directory: str) -> ModuleType:
    """coverage.py from fuzzgate's installation, without putting fuzzgate's site-packages on the
    server's path (the server has its own `mcp`, its own everything): the package is loaded from
    its directory, and its own imports (`coverage.xxx`) find the rest through the package."""
    loaded = sys.modules.get("coverage")
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location(
        "coverage", os.path.join(directory, "__init__.py"), submodule_search_locations=[directory]
    )
    if spec is None or spec.loader is None:
        raise ImportError(f"no coverage.py at {directory}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["coverage"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        for name in [name for name in sys.modules if name == "coverage" or name.startswith("coverage.")]:
            del sys.modules[name]
        raise
    return module


class CoverageProbe:
    """coverage.py's tracer (Python 3.11 and earlier): the arcs since the last take."""

    def __init__(self, cov: Any, version: str) -> None:
        self.cov = cov
        self.version = version
        self._seen: dict[str, set[tuple[int, int]]] = {}
        """With the public API only: the arcs already handed over, per file."""
        self._switch: TracerSwitch | None = None

    def started(self) -> None:
        """After `cov.start()`: whether the tracer can be switched off and on (`switch.py`)."""
        if self._tracer_data() is not None:
            self._switch = TracerSwitch.make(self.cov)

    @property
    def can_pause(self) -> bool:
        return self._switch is not None

    def paused(self) -> bool:
        """Whether fuzzgate switched measuring off."""
        return self._switch is not None and not self._switch.measuring

    def pause(self) -> None:
        if self._switch is not None:
            self._switch.off()
        self.take()

    def resume(self) -> None:
        if self._switch is not None:
            self._switch.on()
        self.take()

    def _tracer_data(self) -> tuple[dict[str, set[Any]], bool] | None:
        collector = getattr(self.cov, "_collector", None)
        data = getattr(collector, "data", None)
        packed = getattr(getattr(collector, "core", None), "packed_arcs", None)
        if isinstance(data, dict) and isinstance(packed, bool):
            return data, packed
        return None

    def describe(self) -> dict[str, Any]:
        try:
            core = str(dict(self.cov.sys_info()).get("core", "?"))
        except Exception:
            core = "?"
        per_call = self._tracer_data() is not None
        return {"coverage": self.version, "core": core, "per_call": per_call, "pause": self.can_pause}

    def take(self) -> tuple[dict[str, set[int]], dict[str, set[tuple[int, int]]]]:
        traced = self._tracer_data()
        arcs = self._take_private(*traced) if traced is not None else self._take_public()
        lines = {name: {n for pair in pairs for n in pair if n > 0} for name, pairs in arcs.items()}
        return lines, arcs

    def stop(self) -> None:
        with contextlib.suppress(BaseException):
            self.cov.stop()

    def _take_private(self, data: dict[str, set[Any]], packed: bool) -> dict[str, set[tuple[int, int]]]:
        taken: dict[str, set[tuple[int, int]]] = {}
        for filename, recorded in list(data.items()):
            if not recorded:
                continue
            # Two calls, each atomic under the GIL: what the tracer adds between them stays.
            snapshot = recorded.copy()
            recorded.difference_update(snapshot)
            taken[filename] = {_unpack(arc) for arc in snapshot} if packed else set(snapshot)
        return taken

    def _take_public(self) -> dict[str, set[tuple[int, int]]]:
        data = self.cov.get_data()
        taken: dict[str, set[tuple[int, int]]] = {}
        for filename in data.measured_files():
            arcs = set(data.arcs(filename) or ())
            seen = self._seen.setdefault(filename, set())
            taken[filename] = arcs - seen
            seen |= arcs
        return taken


class MonitorProbe:
    """sys.monitoring (Python 3.12 and later, `monitor.py`): lines and branch arcs since the last take."""

    def __init__(self, recorder: MonitorRecorder) -> None:
        self.recorder = recorder

    can_pause = True

    def describe(self) -> dict[str, Any]:
        return {"coverage": None, "core": "sys.monitoring", "per_call": True, "pause": True}

    def take(self) -> tuple[dict[str, set[int]], dict[str, set[tuple[int, int]]]]:
        return self.recorder.take()

    def pause(self) -> None:
        self.recorder.pause()

    def resume(self) -> None:
        self.recorder.resume()

    def stop(self) -> None:
        with contextlib.suppress(BaseException):
            self.recorder.stop()


class Recorder:
    """The running measurement: hands over what ran since the last answer, and new constants."""

    def __init__(self, probe: CoverageProbe | MonitorProbe, roots: Roots) -> None:
        self.probe = probe
        self.roots = roots
        self._files: set[str] = set()
        self._constants = 0

    def hello(self) -> dict[str, Any]:
        return {
            "python": platform.python_version(),
            "implementation": sys.implementation.name,
            **self.probe.describe(),
            "measured": self.roots.labels,
        }

    def take(self) -> dict[str, Any]:
        lines, arcs = self.probe.take()
        named_lines: dict[str, list[int]] = {}
        named_arcs: dict[str, list[list[int]]] = {}
        constants: list[list[Any]] = []
        for filename in sorted({*lines, *arcs}):
            numbers, pairs = lines.get(filename, set()), arcs.get(filename, set())
            if not numbers and not pairs:
                continue
            name = self.roots.name(filename)
            if numbers:
                named_lines.setdefault(name, []).extend(sorted(numbers))
            if pairs:
                named_arcs.setdefault(name, []).extend([a, b] for a, b in sorted(pairs))
            if filename not in self._files:
                self._files.add(filename)
                constants.extend(self._mine(filename))
        return {"lines": named_lines, "arcs": named_arcs, "constants": constants}

    def stop(self) -> None:
        self.probe.stop()

    def switch(self, measuring: bool) -> dict[str, Any]:
        """Stop or start measuring (a probe that cannot goes on measuring); what was recorded
        since the last answer is dropped, its files' constants kept for the answer that next
        holds them."""
        if self.probe.can_pause:
            if measuring:
                self.probe.resume()
            else:
                self.probe.pause()
        return {"measuring": measuring or not self.probe.can_pause}

    def _mine(self, filename: str) -> list[list[Any]]:
        room = MAX_CONSTANTS - self._constants
        if room <= 0:
            return []
        try:
            with tokenize.open(filename) as source:
                text = source.read()
        except (OSError, SyntaxError, UnicodeDecodeError):
            return []
        found = [[value, name, length] for value, name, length in mine(text)][:room]
        self._constants += len(found)
        return found


def _unpack(packed: int) -> tuple[int, int]:
    """One arc as the C tracer packs it (coverage/ctracer/tracer.c, CTracer_record_pair)."""
    first = packed & 0xFFFFFFF
    second = (packed >> 28) & 0xFFFFFFF
    if packed & (1 << 56):
        first = -first
    if packed & (1 << 57):
        second = -second
    return first, second


def serve(channel: Channel, recorder: Recorder) -> None:
    """Answer fuzzgate's requests until it hangs up; on any error, say so and stop measuring."""
    try:
        while True:
            line = channel.receive()
            if line is None:
                channel.close()
                return
            sequence, _, verb = line.partition(" ")
            answer = recorder.switch(verb == "resume") if verb in ("pause", "resume") else recorder.take()
            answer["seq"] = int(sequence)
            channel.send(answer)
    except BaseException as exc:
        recorder.stop()
        channel.fail(exc)


def _coverage_probe(settings: Mapping[str, Any], roots: Roots) -> CoverageProbe:
    if sys.version_info < (3, 11):  # noqa: UP036 (the server's Python, not fuzzgate's)
        raise RuntimeError(f"Python {platform.python_version()}: the collector needs 3.11 or later")
    coverage = load_coverage(str(settings["coverage"]))
    cov = coverage.Coverage(
        data_file=None,
        branch=True,
        config_file=False,
        source=roots.sources or None,
        source_pkgs=roots.unresolved or None,
        messages=False,
    )
    cov.set_option("run:disable_warnings", list(QUIET))
    cov.set_option("run:core", "ctrace")
    return CoverageProbe(cov, str(getattr(coverage, "__version__", "?")))


def start(settings: Mapping[str, Any]) -> None:
    """Start measuring and serving. Never raises: the server must start whatever happens here."""
    try:
        channel = Channel(int(settings["request_fd"]), int(settings["reply_fd"]))
    except Exception:
        return
    recorder: Recorder | None = None
    thread: threading.Thread | None = None
    try:
        roots = Roots([str(d) for d in settings.get("dirs", ())], [str(p) for p in settings.get("packages", ())])
        monitor: MonitorRecorder | None = None
        if hasattr(sys, "monitoring"):
            monitor = MonitorRecorder(roots.measures)
            recorder = Recorder(MonitorProbe(monitor), roots)
        else:
            probe = _coverage_probe(settings, roots)
            recorder = Recorder(probe, roots)
        # Started before measuring starts, so the thread itself is never traced.
        thread = threading.Thread(target=serve, args=(channel, recorder), name="fuzzgate-collector", daemon=True)
        thread.start()
        if monitor is not None:
            monitor.start()
        else:
            probe.cov.start()
            probe.started()
            UntracedImports(roots.imports, probe.paused).install()
        channel.send({"hello": recorder.hello()})
    except BaseException as exc:
        if recorder is not None:
            recorder.stop()
        if thread is None or not thread.is_alive():
            channel.fail(exc)
        else:
            # The thread may be blocked reading the request pipe: closing it under the thread
            # could let it read whatever file gets that number next. fuzzgate hangs up on the
            # error, and the thread closes the pipes when it sees that.
            channel.report(exc)
