"""The generation worker: one child process that runs every Hypothesis draw for this process.

Why a separate process: Hypothesis mixes constants harvested from every *local* module loaded in
the process (any source file outside site-packages and the stdlib: an editable install, a console
script, a user's plugin) into its draws, and harvests again whenever `sys.modules` grows. In the
caller's process the same seed would then give different values depending on what else had been
imported, and when. The worker imports only this package, runs with a fixed PYTHONHASHSEED, no
Hypothesis plugins and a private storage directory, so a seed always means the same values; it also
keeps Hypothesis's output and warnings away from the caller's stdout and threads.

Protocol: one JSON object per line in each direction, a reply per request, in order. A caller
waits for the reply to each request but a posted one (`GenerationWorker.post`: "draw these chunks
ahead"), whose reply is read and dropped before the next; a worker replies before it draws ahead,
so a post never waits on the worker's draw.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import IO, Any, Final

from fuzzgate.generate._model import UnsupportedSchema, canonical_json

_SOURCE_CACHE: Final = 64
_PREFETCH_CACHE: Final = 16
_STOP_GRACE_S: Final = 0.5
DEFAULT_TIMEOUT_S: Final = 10.0
"""How long one request may take before the worker is killed and the request fails."""
_FIRST_START_ALLOWANCE_S: Final = 20.0
"""Extra time for the first request of this process's first worker: importing Hypothesis and, on a
machine that never ran it, computing its Unicode tables (cached on disk after that)."""
_RESTART_ALLOWANCE_S: Final = 2.0
"""Extra time for the first request of a restarted worker: importing Hypothesis again."""
_PASSED_ENV: Final = ("PATH", "LD_LIBRARY_PATH", "PYTHONHOME", "SYSTEMROOT", "TMPDIR")
"""What the interpreter itself may need; nothing else of the caller's environment reaches the worker."""


class GenerationError(RuntimeError):
    """The generation worker failed in a way that is a fuzzgate bug, not a schema problem."""


class GenerationAbandoned(GenerationError):
    """The caller stopped waiting for this request (the run reached its deadline): no verdict on
    the schema."""


class GenerationTimeout(UnsupportedSchema):
    """Generating values for a schema took longer than allowed (a catastrophic `pattern`, a huge
    `enum`, deep recursion): the schema is treated as one fuzzgate cannot handle."""

    title = "input schema too costly to generate"


# -- inside the worker -----------------------------------------------------------------------


class _Worker:
    def __init__(self) -> None:
        from fuzzgate.generate._source import CaseSource

        self._source_type = CaseSource
        self._sources: OrderedDict[str, CaseSource] = OrderedDict()
        self._prefetched: OrderedDict[str, Any] = OrderedDict()

    def _source(self, request: dict[str, Any]) -> Any:
        key = f"{request['max_string']}:{canonical_json(request['schema'])}"
        source = self._sources.get(key)
        if source is None:
            source = self._source_type(request["schema"], max_string=request["max_string"])
            self._sources[key] = source
            if len(self._sources) > _SOURCE_CACHE:
                self._sources.popitem(last=False)
        self._sources.move_to_end(key)
        return source

    def handle(self, request: dict[str, Any]) -> Any:
        source = self._source(request)
        if request["op"] == "fixed":
            return source.fixed()
        if request["op"] == "prefetch":
            return None
        key = self._draw_key(request, request["stream"], request["seed"])
        found = self._prefetched.pop(key, None)
        if found is None:
            found = self._draw(source, request, request)
        return found

    @staticmethod
    def _draw(source: Any, request: dict[str, Any], chunk: dict[str, Any]) -> Any:
        return source.draw(
            chunk["stream"], seed=chunk["seed"], count=request["count"], base_seed=chunk.get("base_seed")
        )

    def ready(self, request: dict[str, Any]) -> list[Any]:
        """Announced chunks that are already drawn, handed over early so that the caller need not
        come back for them at a moment when the worker is busy drawing something else."""
        ready = []
        for then in request.get("prefetch", ()):
            found = self._prefetched.pop(self._draw_key(request, then["stream"], then["seed"]), None)
            if found is not None:
                ready.append([then["stream"], then["seed"], found])
        return ready

    def prefetch(self, request: dict[str, Any]) -> None:
        """Draw the chunks the caller said it will want next, while it is busy elsewhere."""
        for then in request.get("prefetch", ()):
            key = self._draw_key(request, then["stream"], then["seed"])
            if key not in self._prefetched:
                source = self._source(request)
                self._prefetched[key] = self._draw(source, request, then)
                if len(self._prefetched) > _PREFETCH_CACHE:
                    self._prefetched.popitem(last=False)

    @staticmethod
    def _draw_key(request: dict[str, Any], stream: str, seed: int) -> str:
        return canonical_json([request["max_string"], request["schema"], stream, seed, request["count"]])


def main() -> None:
    """Serve requests on stdin until it closes."""
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="ascii")
    # Anything a library prints must not corrupt the reply stream.
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    worker = _Worker()
    for line in sys.stdin:
        request: dict[str, Any] = {}
        try:
            request = json.loads(line)
            # A posted request's reply is dropped unread: its ready chunks stay here for a later one.
            ready = [] if request.get("posted") else worker.ready(request)
            reply: dict[str, Any] = {"ok": worker.handle(request), "ready": ready}
        except UnsupportedSchema as exc:
            reply = {"unsupported": str(exc)}
        except Exception as exc:
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        replies.write(json.dumps(reply, ensure_ascii=True, allow_nan=False) + "\n")
        replies.flush()
        # A failed prefetch is recomputed (and reported) when the chunk is really asked for.
        with contextlib.suppress(Exception):
            worker.prefetch(request)


# -- in the caller ---------------------------------------------------------------------------


_WARM_SCHEMA: Final = {"type": "object", "properties": {"s": {"type": "string"}, "n": {"type": "number"}}}


class GenerationWorker:
    """The caller's handle on the worker process: started on first use, shared, thread-safe.

    Every request has a deadline. A schema whose generation is pathological (a server can send any
    schema) must not stall the run: past the deadline the worker is killed, and the request fails
    with `GenerationTimeout`. The worker draws the requesting generator's next chunks after it
    replies, so a request can also wait on an earlier requester's prefetch: then the worker is
    restarted and the request tried once more before it is blamed.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._buffer = b""
        self._fresh = True
        self._prefetching_for: str | None = None
        self._closed = False
        self._started_once = False
        self._epoch = 0
        self._unread = 0
        """Replies to posted requests not read yet: they come before the next request's own."""

    def request(
        self, payload: dict[str, Any], *, timeout_s: float = DEFAULT_TIMEOUT_S, owner: str = ""
    ) -> tuple[Any, list[Any]]:
        """Send one request; returns its result and the announced chunks that were ready.

        `owner` names the generator asking (whose prefetch work the worker may do next). Raises
        UnsupportedSchema (GenerationTimeout past `timeout_s`) or GenerationError.
        """
        line = (json.dumps(payload, ensure_ascii=True, allow_nan=False) + "\n").encode("ascii")
        epoch = self._epoch
        with self._lock:
            if self._closed:
                raise GenerationError("the generation worker was stopped")
            other_prefetch = self._prefetching_for not in (None, owner)
            try:
                answer = self._exchange(line, timeout_s) or self._restart_and_exchange(line, timeout_s, epoch)
            except GenerationTimeout:
                if not other_prefetch:
                    raise
                answer = self._restart_and_exchange(line, timeout_s, epoch)
            self._prefetching_for = owner if payload.get("prefetch") else None
        reply = json.loads(answer)
        if "unsupported" in reply:
            raise UnsupportedSchema(reply["unsupported"])
        if "error" in reply:
            raise GenerationError(f"the generation worker failed: {reply['error']}")
        return reply["ok"], reply.get("ready", [])

    def post(self, payload: dict[str, Any], *, owner: str = "") -> None:
        """Send a request without waiting for its reply (a prefetch: the worker draws ahead while
        the caller goes on, where a request would wait for the draw the worker is busy with). Sent
        only to a running worker; lost, and so never drawn ahead, if it dies. Never raises."""
        line = (json.dumps({**payload, "posted": True}, ensure_ascii=True, allow_nan=False) + "\n").encode("ascii")
        with self._lock:
            process = self._process
            if self._closed or process is None or process.poll() is not None:
                return
            stdin, _ = _pipes(process)
            try:
                stdin.write(line)
                stdin.flush()
            except OSError:
                return
            self._unread += 1
            self._prefetching_for = owner

    def _restart_and_exchange(self, line: bytes, timeout_s: float, epoch: int | None = None) -> bytes:
        if epoch is not None and epoch != self._epoch:
            raise GenerationAbandoned("the generation request was abandoned")
        self._stop()
        answer = self._exchange(line, timeout_s)
        if not answer:
            if epoch is not None and epoch != self._epoch:
                raise GenerationAbandoned("the generation request was abandoned")
            raise GenerationError("the generation worker process exited unexpectedly")
        return answer

    def _exchange(self, line: bytes, timeout_s: float) -> bytes:
        process = self._start()
        stdin, _ = _pipes(process)
        allowance = 0.0
        if self._fresh:
            allowance = _RESTART_ALLOWANCE_S if self._started_once else _FIRST_START_ALLOWANCE_S
        deadline = time.monotonic() + timeout_s + allowance
        try:
            stdin.write(line)
            stdin.flush()
            answer = self._read_line(process, deadline)
            while answer and self._unread:
                self._unread -= 1
                answer = self._read_line(process, deadline)
        except OSError:
            return b""
        if answer is None:
            self._stop(kill=True)
            raise GenerationTimeout(f"generating values took longer than {timeout_s:g}s at /")
        if answer:
            self._fresh = False
            self._started_once = True
        return answer

    def _read_line(self, process: subprocess.Popen[bytes], deadline: float) -> bytes | None:
        """The next reply line; b"" if the worker died, None past the deadline."""
        _, stdout = _pipes(process)
        fd = stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            readable, _, _ = select.select([fd], [], [], left)
            if not readable:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                # A reply cut short means the worker died while writing it.
                self._buffer = b""
                return b""
            self._buffer += chunk
        answer, _, self._buffer = self._buffer.partition(b"\n")
        return answer + b"\n"

    def _start(self) -> subprocess.Popen[bytes]:
        if self._process is not None and self._process.poll() is None:
            return self._process
        self._stop()
        if self._closed:
            raise GenerationError("the generation worker was stopped")
        home = _storage_directory()
        package_root = str(Path(__file__).resolve().parents[2])
        env = {name: os.environ[name] for name in _PASSED_ENV if name in os.environ}
        env |= {
            "PYTHONPATH": package_root,
            "PYTHONHASHSEED": "0",
            "PYTHONUTF8": "1",
            "HYPOTHESIS_NO_PLUGINS": "1",
            "HYPOTHESIS_STORAGE_DIRECTORY": home,
        }
        # Imported here, not at the top: the worker process imports this module, and must load
        # nothing outside this package (see the module docstring).
        from fuzzgate.sandbox.process_tree import CUSTODY

        # Registered as fuzzgate's own child, so that stopping a server never takes it for an orphan.
        with CUSTODY.starting():
            self._process = subprocess.Popen(
                [sys.executable, "-P", "-c", "from fuzzgate.generate._worker import main; main()"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd=home,
                env=env,
                start_new_session=True,
                bufsize=0,
            )
            CUSTODY.adopt(self._process.pid, server=False)
        self._buffer = b""
        self._unread = 0
        self._fresh = True
        self._prefetching_for = None
        return self._process

    def stop(self) -> None:
        """Stop the worker (it is restarted on the next request)."""
        with self._lock:
            self._stop()

    def warm_up(self) -> None:
        """Start the worker and let it do its one-time work (importing Hypothesis, building its
        character tables) under the first-start allowance, so that the schemas' own requests are
        held to their plain deadline. Meant to run while the server starts. Never raises."""
        probe = {"op": "draw", "schema": _WARM_SCHEMA, "max_string": 64, "count": 4, "stream": "conform", "seed": 0}
        with contextlib.suppress(UnsupportedSchema, GenerationError):
            self.request(probe, owner="")

    def busy(self) -> bool:
        """Whether a request is in flight (perhaps from a thread the caller stopped waiting for)."""
        return self._lock.locked()

    def abort(self) -> None:
        """Fail the request in flight now, if any: a run that stopped waiting for it at its deadline
        must not keep the process alive until the request's own deadline. The worker is killed;
        the next request starts a new one."""
        self._epoch += 1
        process = self._process
        if process is not None and self.busy():
            _kill_group(process)

    def close(self) -> None:
        """At exit: kill the worker without waiting for a request in flight (a thread the run
        abandoned at its deadline may still hold the lock), and refuse further requests."""
        self._closed = True
        process = self._process
        if process is not None:
            _kill_group(process)
        if self._lock.acquire(timeout=_STOP_GRACE_S + 1):
            try:
                self._stop(kill=True)
            finally:
                self._lock.release()

    def _stop(self, *, kill: bool = False) -> None:
        process, self._process = self._process, None
        self._buffer = b""
        self._unread = 0
        self._prefetching_for = None
        if process is not None:
            stdin, stdout = _pipes(process)
            try:
                if kill:
                    _kill_group(process)
                stdin.close()
                process.wait(timeout=_STOP_GRACE_S)
            except (OSError, subprocess.TimeoutExpired):
                _kill_group(process)
                process.wait()
            stdout.close()
            from fuzzgate.sandbox.process_tree import CUSTODY

            CUSTODY.release(process.pid)

    def _forget(self) -> None:
        """In a forked child: the worker belongs to the parent, so drop the handle without stopping it."""
        self._lock = threading.Lock()
        self._process = None
        self._buffer = b""


def _storage_directory() -> str:
    """Where Hypothesis keeps its caches: computing its Unicode tables takes seconds, so they persist
    in the user's cache directory, never in the current directory (a user's repository)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    home = os.path.join(base, "fuzzgate", "hypothesis")
    try:
        os.makedirs(home, exist_ok=True)
    except OSError:
        home = os.path.join(tempfile.gettempdir(), f"fuzzgate-hypothesis-{os.getuid()}")
        os.makedirs(home, exist_ok=True)
    return home


def _pipes(process: subprocess.Popen[bytes]) -> tuple[IO[bytes], IO[bytes]]:
    assert process.stdin is not None and process.stdout is not None
    return process.stdin, process.stdout


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


WORKER: Final = GenerationWorker()
atexit.register(WORKER.close)
os.register_at_fork(after_in_child=WORKER._forget)
