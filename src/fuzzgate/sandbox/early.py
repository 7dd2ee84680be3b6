"""A server process started before the event loop runs, and the `anyio.abc.Process` through which
`OwnedProcess` then speaks to it as to one it started itself.

The run's first server is started while fuzzgate is still importing what the run needs
(`target.head_start`): there is no event loop yet, so it is a plain `subprocess.Popen`, started
exactly as `OwnedProcess.start` starts one (its own session, the same pipes, environment, working
directory and inherited descriptors) and registered in `CUSTODY` at once. Once the loop runs,
`EarlyProcess` reads and writes its pipes without blocking (`anyio.wait_readable`/`wait_writable`)
and waits for its exit on a pidfd where Linux has them, else by polling; `subprocess` reaps it,
and only it (`process_tree` never waits for a pid in custody).
"""

from __future__ import annotations

import os
import signal
import subprocess
from contextlib import suppress
from typing import IO

import anyio
import anyio.abc
import anyio.lowlevel

from fuzzgate.sandbox.owned_process import LaunchSpec
from fuzzgate.sandbox.process_tree import CUSTODY

_POLL_S = 0.02
"""How often the exit is polled for where there is no pidfd."""


def spawn_early(spec: LaunchSpec, *, stdin: int = subprocess.PIPE) -> subprocess.Popen[bytes]:
    """Start `spec` as `OwnedProcess.start` would, without an event loop; raises `OSError` as it would."""
    with CUSTODY.starting():
        process = subprocess.Popen(
            [spec.command, *spec.args],
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=spec.env,
            cwd=spec.cwd,
            start_new_session=True,
            pass_fds=spec.pass_fds,
        )
        CUSTODY.adopt(process.pid, server=True)
    for pipe in (process.stdin, process.stdout, process.stderr):
        if pipe is not None:
            os.set_blocking(pipe.fileno(), False)
    return process


class Early:
    """An early process and who has it: the `OwnedProcess` that takes it over (`take`), or nobody,
    and then `discard` kills it. Only one of the two ever acts."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self._process: subprocess.Popen[bytes] | None = process
        self.pid = process.pid

    def take(self) -> subprocess.Popen[bytes]:
        process, self._process = self._process, None
        assert process is not None, "an early process is taken over once"
        return process

    def discard(self) -> None:
        """Kill the process unless it was taken over. Idempotent."""
        process, self._process = self._process, None
        if process is not None:
            _kill(process)


def _kill(process: subprocess.Popen[bytes]) -> None:
    """Kill an early process nobody took over (the run ended first, or started another), and reap it."""
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with suppress(subprocess.TimeoutExpired):
        process.wait(5)
    if process.returncode is not None:
        CUSTODY.release(process.pid)
    for pipe in (process.stdin, process.stdout, process.stderr):
        if pipe is not None:
            with suppress(OSError):
                pipe.close()


class _ReadEnd(anyio.abc.ByteReceiveStream):
    def __init__(self, pipe: IO[bytes]) -> None:
        self._pipe = pipe
        self._fd = pipe.fileno()
        self._closed = False

    async def receive(self, max_bytes: int = 65536) -> bytes:
        await anyio.lowlevel.checkpoint_if_cancelled()
        while True:
            if self._closed:
                raise anyio.ClosedResourceError
            try:
                data = os.read(self._fd, max_bytes)
            except BlockingIOError:
                await anyio.wait_readable(self._fd)
                continue
            except OSError as exc:
                raise anyio.BrokenResourceError from exc
            if not data:
                raise anyio.EndOfStream
            return data

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            anyio.notify_closing(self._fd)
            self._pipe.close()
        await anyio.lowlevel.checkpoint()


class _WriteEnd(anyio.abc.ByteSendStream):
    def __init__(self, pipe: IO[bytes]) -> None:
        self._pipe = pipe
        self._fd = pipe.fileno()
        self._closed = False

    async def send(self, item: bytes) -> None:
        await anyio.lowlevel.checkpoint_if_cancelled()
        view = memoryview(item)
        while view:
            if self._closed:
                raise anyio.ClosedResourceError
            try:
                written = os.write(self._fd, view)
            except BlockingIOError:
                await anyio.wait_writable(self._fd)
                continue
            except OSError as exc:
                # BrokenPipeError: the server closed its end, as asyncio's stream says it.
                raise anyio.BrokenResourceError from exc
            view = view[written:]

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            anyio.notify_closing(self._fd)
            with suppress(OSError):
                self._pipe.close()
        await anyio.lowlevel.checkpoint()


class EarlyProcess(anyio.abc.Process):
    """An early process (`spawn_early`) as the `anyio.abc.Process` that `anyio.open_process` gives.
    Made inside the event loop."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self._process = process
        self._stdin = _WriteEnd(process.stdin) if process.stdin is not None else None
        self._stdout = _ReadEnd(process.stdout) if process.stdout is not None else None
        self._stderr = _ReadEnd(process.stderr) if process.stderr is not None else None
        self._waiting = anyio.Lock()
        self._pidfd: int | None = None
        with suppress(AttributeError, OSError):
            self._pidfd = os.pidfd_open(process.pid)

    async def wait(self) -> int:
        # One task waits on the pidfd at a time (a descriptor has one reader); the others then find it reaped.
        async with self._waiting:
            while (code := self._process.poll()) is None:
                if self._pidfd is not None:
                    await anyio.wait_readable(self._pidfd)
                else:
                    await anyio.sleep(_POLL_S)
        return code

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            for stream in (self._stdin, self._stdout, self._stderr):
                if stream is not None:
                    await stream.aclose()
            await self.wait()
            if self._pidfd is not None:
                anyio.notify_closing(self._pidfd)
                os.close(self._pidfd)
                self._pidfd = None

    def terminate(self) -> None:
        self._process.terminate()

    def kill(self) -> None:
        self._process.kill()

    def send_signal(self, signal: int) -> None:
        self._process.send_signal(signal)

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        return self._process.poll()

    @property
    def stdin(self) -> anyio.abc.ByteSendStream | None:
        return self._stdin

    @property
    def stdout(self) -> anyio.abc.ByteReceiveStream | None:
        return self._stdout

    @property
    def stderr(self) -> anyio.abc.ByteReceiveStream | None:
        return self._stderr

    def __repr__(self) -> str:
        return f"EarlyProcess(pid={self._process.pid})"
