"""What a call waits for after the server answered or went away, so its outcome is whole: the rest
of a traceback on stderr, a dead server's last stderr words and exit status; and which exceptions
mean the connection itself was lost."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import httpx2

from fuzzgate.check.patterns import TRACE_START as _TRACE_START
from fuzzgate.sandbox.owned_process import OwnedProcess

_SETTLE_S = 1.0
"""The longest wait for a traceback on stderr after an error reply."""
_FIRST_LINE_S = 0.2
"""How long an answer that says an exception happened waits for the first line of its traceback."""
_QUIET_S = 0.03
"""How long stderr must stay silent for what the server logged to count as complete."""
DEATH_S = 2.0
"""The longest wait for a dead server's last stderr words and its exit status."""
_HTTP_EXIT_S = 0.5
"""How long a failed HTTP request waits to see whether the served process is exiting: over HTTP a
lost connection alone does not say the server died."""


async def let_stderr_catch_up(process: OwnedProcess, mark: int, exception_hinted: bool) -> None:
    """A server logs a traceback before it answers, but on another pipe, and a traceback read half
    way would give the same bug another fingerprint. So: a few turns of the event loop for what is
    already in the pipe; then, if the server has been writing (or its answer says an exception
    happened), wait until stderr has been quiet for a moment, within a bound."""
    for _ in range(3):
        await anyio.lowlevel.checkpoint()
    # Servers that log every request must not pay for the wait: only a traceback is waited for.
    if not exception_hinted and not any(_TRACE_START.search(line) for line in process.stderr.since(mark)):
        return
    with anyio.move_on_after(_SETTLE_S):
        first_line_by = anyio.current_time() + _FIRST_LINE_S
        while process.stderr.mark() == mark:
            if anyio.current_time() > first_line_by:
                return
            await anyio.sleep(0.005)
        seen = process.stderr.mark()
        quiet_since = anyio.current_time()
        while anyio.current_time() - quiet_since < _QUIET_S:
            await anyio.sleep(0.005)
            if process.stderr.mark() != seen:
                seen = process.stderr.mark()
                quiet_since = anyio.current_time()


async def await_death(server: OwnedProcess, *, http: bool) -> None:
    """The connection is gone: wait briefly for the server's last stderr words (complete when its
    pipes close) and its exit status. Over HTTP only if the process is exiting at all."""
    with anyio.move_on_after(DEATH_S):
        if http:
            with anyio.move_on_after(_HTTP_EXIT_S):
                while server.returncode is None:
                    await anyio.sleep(0.01)
            if server.returncode is None:
                return
        await server.stderr_closed.wait()
        while server.returncode is None:
            await anyio.sleep(0.01)


def is_connection_loss(exc: BaseException) -> bool:
    if isinstance(exc, anyio.ClosedResourceError | anyio.BrokenResourceError | anyio.EndOfStream):
        return True
    return isinstance(exc, httpx2.TransportError)
