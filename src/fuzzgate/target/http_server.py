"""The process serving an HTTP target, when `[target]` names its command next to its URL: fuzzgate
starts it, waits until the URL's port accepts connections (on the sandbox's own loopback, through
the relay, when it runs in the sandbox), and stops it, with everything it started, when the
connection closes. So an HTTP server is restarted after a crash and replayed on
fresh processes like a stdio one.

The protocol runs over HTTP, so the process's stdout is only more of its logs: stdout and stderr
are both drained into its `LineLog` (which the oracles read as a call's stderr, as over stdio) and
never parsed as MCP. Draining them also keeps a chatty server from blocking on a full pipe.
"""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TypeVar

import anyio

from fuzzgate.check.secrets import Redactor
from fuzzgate.sandbox.owned_process import LaunchSpec, OwnedProcess
from fuzzgate.sandbox.relay import RelayDir

READY_POLL_S = 0.05
"""How often the port is tried while the server starts."""
_CONNECT_S = 0.5
"""How long one try may take (a filtered port drops the attempt rather than refusing it)."""
_EXIT_S = 1.0
"""How long a server whose connection broke may take to exit by itself before it is stopped: killed
on its way out, its exit status would be fuzzgate's signal rather than its own."""
_CLOSE_GRACE_S = 1.0
"""How long closing the session may take before the server is stopped under it: the SDK's client
asks the server to end the session, and a server whose event loop is stuck would keep that
request waiting for the HTTP client's timeout."""

T = TypeVar("T")


class ServerNotReady(Exception):
    """The served process exited, or something else holds its port, before it could be reached.
    The message is for the start-up error."""


def where(address: tuple[str, int]) -> str:
    host, port = address
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


async def accepts(address: tuple[str, int]) -> bool:
    """Whether something accepts a TCP connection at `address` now."""
    try:
        with anyio.fail_after(_CONNECT_S):
            stream = await anyio.connect_tcp(*address)
    except (OSError, TimeoutError):
        return False
    await stream.aclose()
    return True


async def relay_accepts(relay: RelayDir) -> bool:
    """Whether the server in the sandbox accepts a TCP connection on its own loopback now, as the
    relay (`sandbox._relay`) answers; False while the jail has not bound the relay's sockets yet."""
    try:
        with anyio.fail_after(_CONNECT_S):
            stream = await anyio.connect_unix(relay.ready)
            try:
                answer = await stream.receive(1)
            finally:
                await stream.aclose()
    except (OSError, TimeoutError, anyio.EndOfStream, anyio.BrokenResourceError):
        return False
    return answer == b"1"


class ServedProcess(OwnedProcess):
    """The running process that serves the HTTP target at `address`; its logs in `stderr`."""

    stdin = subprocess.DEVNULL

    def __init__(
        self,
        spec: LaunchSpec,
        address: tuple[str, int],
        redact: Redactor | None = None,
        relay: RelayDir | None = None,
    ) -> None:
        super().__init__(spec, redact)
        self.address = address
        self.relay = relay
        """Set when the server runs in the sandbox on its own loopback: reached through the relay."""
        self.ready = False
        """Its port accepted a connection (the start-up error says which step failed)."""

    async def pump_output(self) -> None:
        """Read stdout and stderr into the log until both end."""
        process = self._process
        assert process and process.stdout and process.stderr
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self.read_lines, process.stdout)
                tg.start_soon(self.read_lines, process.stderr)
        finally:
            self.stderr_closed.set()

    async def wait_ready(self) -> None:
        """Return once the port accepts a connection; raise `ServerNotReady` if the process exits
        first. Not bounded here: the caller's start-up timeout is."""
        while not await (relay_accepts(self.relay) if self.relay is not None else accepts(self.address)):
            if self.returncode is not None:
                # The start-up error adds the exit status.
                raise ServerNotReady(f"it never accepted connections on {where(self.address)}")
            await anyio.sleep(READY_POLL_S)
        self.ready = True


@asynccontextmanager
async def served_transport(server: ServedProcess, transport: AbstractAsyncContextManager[T]) -> AsyncIterator[T]:
    """Start `server`, wait until it accepts connections, then enter `transport` (the HTTP client
    reaching it) and yield what it yields; on exit close the transport and stop the server.

    A port something else already holds is refused before anything starts: a readiness check
    passed by another process would have fuzzgate fuzz, and crash, a server it does not own. (A
    server in the sandbox has a loopback of its own, where nothing else listens; a server started
    ahead, `head_start`, was checked so before it started, and may hold the port by now.)
    """
    if server.relay is None and server.early is None and await accepts(server.address):
        raise ServerNotReady(
            f"something is already listening on {where(server.address)}; the command's server could not own it"
        )
    await server.start()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.pump_output)
            tg.start_soon(server.outlive)
            tg.start_soon(server.watch_memory)
            deliberate = True
            try:
                await server.wait_ready()
                async with transport as streams:
                    try:
                        yield streams
                    finally:
                        tg.start_soon(_stop_after, server, _CLOSE_GRACE_S)
            except Exception:
                # The HTTP client failed under the session: the server went away or broke the
                # connection, most likely by itself (a crash). Stopping it now is tidying up.
                deliberate = False
                await _exit_within(server, _EXIT_S)
                raise
            finally:
                await server.stop(deliberate=deliberate)
                tg.cancel_scope.cancel()
    finally:
        await server.stop()


async def _exit_within(server: ServedProcess, delay_s: float) -> None:
    with anyio.CancelScope(shield=True), anyio.move_on_after(delay_s):
        while server.returncode is None:
            await anyio.sleep(0.01)


async def _stop_after(server: ServedProcess, delay_s: float) -> None:
    await anyio.sleep(delay_s)
    await server.stop()
