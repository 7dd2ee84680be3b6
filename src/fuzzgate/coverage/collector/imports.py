"""Inside a server on CPython 3.11: the modules that are not measured are imported with no trace
function, so the C tracer slows only the code it measures.

Why: a Python MCP server's start is mostly imports (the SDK, pydantic and what they pull in: half
a second of CPU), and on 3.11 a trace function makes every instruction of every module run
unspecialized (`switch.py`). Traced from the start, a server on the SDK took 1.3 s of CPU to start
against 0.8 s untraced, and fuzzgate pays a start for every restart, replay and shrinking step.

How: `UntracedImports` sits first on `sys.meta_path`. It finds each module's spec with the finders
after it (what the import system would have found) and, when the module's file is not measured,
gives the spec a loader that runs the module's code with the thread's trace function taken off
(`sys.settrace(None)`) and then puts the same C tracer back (`CTracer.start()`). The frames that
start and end in between are never seen, so the tracer's stack of frames is as it was when the
import began. A measured module imported from inside such an import (a framework importing the
server's tools) gets the tracer back for its own code. The module-level lines of measured modules
are measured as before; only other people's code runs untraced. The loader is the module's own
again before its code runs (`__loader__`, `__spec__.loader`), so nothing in the module sees ours.

Hand-written: importlib has no hook around a module's execution, and no library offers one.
Standard library only, like the rest of the collector.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any, cast

_TRACER = "CTracer"
"""coverage.py's compiled tracer's type name: the only trace function this takes off and puts back."""


class UntracedImports:
    """The meta-path finder that imports unmeasured modules untraced (module docstring)."""

    def __init__(self, measured: Callable[[str, str | None], bool], paused: Callable[[], bool]) -> None:
        self._measured = measured
        """Whether module `name` whose file is `origin` is measured."""
        self._paused = paused
        """Whether fuzzgate switched measuring off (`switch.py`): then no tracer is put back."""
        self._local = threading.local()

    def install(self) -> None:
        sys.meta_path.insert(0, self)

    def find_spec(self, name: str, path: Any, target: ModuleType | None = None) -> ModuleSpec | None:
        local = self._local
        if getattr(local, "finding", False):
            return None
        tracer = sys.gettrace()
        suspended = getattr(local, "suspended", None)
        if not _is_tracer(tracer) and suspended is None:
            # Nothing is traced in this thread now (switched off, or never on): nothing to do.
            return None
        local.finding = True
        try:
            spec = _find(self, name, path, target)
        finally:
            local.finding = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        measured = self._measured(name, spec.origin)
        if _is_tracer(tracer) and not measured:
            spec.loader = cast(Any, _Untraced(spec.loader, self))
        elif tracer is None and suspended is not None and measured:
            spec.loader = cast(Any, _Retraced(spec.loader, self))
        return spec

    def untraced(self, loader: Any, module: ModuleType) -> None:
        """Run `module`'s code with this thread's tracer off, then put it back."""
        tracer: Any = sys.gettrace()
        if not _is_tracer(tracer):
            loader.exec_module(module)
            return
        local = self._local
        outer = getattr(local, "suspended", None)
        local.suspended = tracer
        sys.settrace(None)
        try:
            loader.exec_module(module)
        finally:
            local.suspended = outer
            if not self._paused():
                tracer.start()

    def retraced(self, loader: Any, module: ModuleType) -> None:
        """Run a measured `module`'s code with the tracer an untraced import took off, then off again."""
        tracer = getattr(self._local, "suspended", None)
        if tracer is None or sys.gettrace() is not None or self._paused():
            loader.exec_module(module)
            return
        tracer.start()
        try:
            loader.exec_module(module)
        finally:
            sys.settrace(None)


def _is_tracer(trace: object) -> bool:
    return trace is not None and type(trace).__name__ == _TRACER


def _find(hook: UntracedImports, name: str, path: Any, target: ModuleType | None) -> ModuleSpec | None:
    """The spec the finders after `hook` on `sys.meta_path` give, as the import system asks them."""
    finders = list(sys.meta_path)
    try:
        after = finders[finders.index(hook) + 1 :]
    except ValueError:
        return None
    for finder in after:
        find = getattr(finder, "find_spec", None)
        if find is None:
            continue
        spec = find(name, path, target)
        if spec is not None:
            return spec  # type: ignore[no-any-return]
    return None


class _Loader:
    """The module's own loader, wrapped until its code runs; anything else is the loader's."""

    def __init__(self, loader: Any, hook: UntracedImports) -> None:
        self._loader = loader
        self._hook = hook

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        create = getattr(self._loader, "create_module", None)
        return create(spec) if create is not None else None

    def _restore(self, module: ModuleType) -> None:
        spec = getattr(module, "__spec__", None)
        if spec is not None and spec.loader is self:
            spec.loader = self._loader
        if getattr(module, "__loader__", None) is self:
            module.__loader__ = self._loader


class _Untraced(_Loader):
    def exec_module(self, module: ModuleType) -> None:
        self._restore(module)
        self._hook.untraced(self._loader, module)


class _Retraced(_Loader):
    def exec_module(self, module: ModuleType) -> None:
        self._restore(module)
        self._hook.retraced(self._loader, module)
