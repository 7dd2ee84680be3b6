"""Inside a server on CPython 3.11: switching coverage.py's C tracer off and on in every thread, from
the collector's own thread, between two calls.

Why: on 3.11 a trace function slows every line of every module (the interpreter runs each
instruction unspecialized while one is set), so the only way a call fuzzgate does not measure runs
at full speed is with no trace function at all in any of the server's threads. Switching off is
coverage.py's own: each C tracer stopped (`CTracer.stop`) removes itself at the next event in its
thread. Switching on cannot be done that way: `sys.settrace` sets the calling thread's trace
function only, and the calls run in the server's main thread (async tools) or in its worker threads
(sync tools), never in the collector's. So `on` sets a small trace function (`_arm`) in every
thread state of the interpreter through CPython's `_PyEval_SetTrace(tstate, ...)`, which 3.12's
`threading.settrace_all_threads` is built on; at its first event in a thread, `_arm` starts that
thread's C tracer there (coverage.py's `Collector._start_tracer`, as its own `threading.settrace`
hook does for a new thread), which replaces it.

Only where every piece is there (CPython 3.11, ctypes, the symbols, the C tracer): otherwise
`TracerSwitch.make` gives None and fuzzgate is told it cannot switch (it then skips the answers of
the calls it does not measure, and the tracer runs on).
"""

from __future__ import annotations

import ctypes
import sys
import threading
from typing import Any

_CALL = 0
"""PyTrace_CALL."""


class TracerSwitch:
    """Turns the C tracers of coverage.py's collector off and on in every thread (module docstring)."""

    def __init__(self, collector: Any, api: Any, trace_func: Any) -> None:
        self._collector = collector
        self._api = api
        self._trace_func = trace_func
        self._arm_func = trace_func(self._arm)
        """Kept referenced for as long as a thread may call it."""
        self._tracers: dict[int, Any] = {}
        """The tracer this switch started in each thread, started again at the next `on`."""
        self._own: int | None = None
        """The thread that switches (the collector's), which is never traced."""
        self.measuring = True
        """Whether the tracers are on (the last switch was `on`, or none was made)."""

    @classmethod
    def make(cls, cov: Any) -> TracerSwitch | None:
        if sys.implementation.name != "cpython" or sys.version_info[:2] != (3, 11):
            return None
        collector = getattr(cov, "_collector", None)
        if collector is None or not hasattr(collector, "_start_tracer") or not hasattr(collector, "tracers"):
            return None
        if not all(type(tracer).__name__ == "CTracer" for tracer in collector.tracers):
            return None
        try:
            api = ctypes.pythonapi
            trace_func = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p)
            api._PyEval_SetTrace.argtypes = [ctypes.c_void_p, trace_func, ctypes.c_void_p]
            api._PyEval_SetTrace.restype = ctypes.c_int
            api.PyInterpreterState_Get.restype = ctypes.c_void_p
            api.PyInterpreterState_ThreadHead.argtypes = [ctypes.c_void_p]
            api.PyInterpreterState_ThreadHead.restype = ctypes.c_void_p
            api.PyThreadState_Next.argtypes = [ctypes.c_void_p]
            api.PyThreadState_Next.restype = ctypes.c_void_p
            api.PyThreadState_Get.restype = ctypes.c_void_p
        except (AttributeError, OSError):
            return None
        return cls(collector, api, trace_func)

    def off(self) -> None:
        """Each thread's tracer removes itself at its next event (`CTracer.stop`)."""
        self.measuring = False
        for tracer in list(self._collector.tracers):
            tracer.stop()

    def on(self) -> None:
        """`_arm` as the trace function of every thread (the collector's own removes it at once)."""
        self.measuring = True
        self._own = threading.get_ident()
        # One tight loop with the GIL held: a thread state is freed only by a thread holding the GIL.
        switch = sys.getswitchinterval()
        sys.setswitchinterval(1000.0)
        try:
            api = self._api
            state = api.PyInterpreterState_ThreadHead(api.PyInterpreterState_Get())
            while state:
                api._PyEval_SetTrace(state, self._arm_func, None)
                state = api.PyThreadState_Next(state)
        finally:
            sys.setswitchinterval(switch)
        self._api._PyEval_SetTrace(self._api.PyThreadState_Get(), self._trace_func(), None)

    def _arm(self, _obj: int | None, frame: int | None, what: int, _arg: int | None) -> int:
        """The first event in a thread after `on`: start the thread's tracer, which replaces this,
        and hand it a call event (the frame starting now is the first it measures)."""
        try:
            ident = threading.get_ident()
            if ident == self._own:
                self._api._PyEval_SetTrace(self._api.PyThreadState_Get(), self._trace_func(), None)
                return 0
            tracer = self._tracers.get(ident)
            if tracer is None:
                tracer = self._tracers[ident] = self._collector._start_tracer()
            else:
                tracer.start()
            if what == _CALL and frame and tracer is not None:
                tracer(ctypes.cast(frame, ctypes.py_object).value, "call", None)
        except Exception:
            # The server's thread goes on, untraced, whatever happened here.
            self._api._PyEval_SetTrace(self._api.PyThreadState_Get(), self._trace_func(), None)
        return 0
