"""The collector's end of the side channel: two inherited pipes, one request line in, one JSON line
out per answer (the protocol is `agent`'s docstring). Standard library only: it runs inside the
server's interpreter.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from typing import Any

_LINE_LIMIT = 4096


class Channel:
    """The collector's end of the side channel: reads requests, writes one JSON line per answer."""

    def __init__(self, request_fd: int, reply_fd: int) -> None:
        self.request_fd = request_fd
        self.reply_fd = reply_fd
        self._pending = b""
        self._closed = False
        self._identity = {fd: _identity(fd) for fd in (request_fd, reply_fd)}
        for fd in (request_fd, reply_fd):
            # The server's own child processes must not hold the pipes (nor answer on them).
            os.set_inheritable(fd, False)

    def _check(self, fd: int) -> None:
        """A server that closes every fd it does not know (a daemon does) may have reused the
        number for a file of its own: never read, write or close that."""
        if self._closed or _identity(fd) != self._identity[fd]:
            self._closed = True
            raise OSError(f"the collector's fd {fd} is no longer its pipe")

    def send(self, message: Mapping[str, Any]) -> None:
        data = (json.dumps(message, separators=(",", ":"), allow_nan=False) + "\n").encode("utf-8", "surrogatepass")
        view = memoryview(data)
        while view:
            self._check(self.reply_fd)
            written = os.write(self.reply_fd, view)
            view = view[written:]

    def receive(self) -> str | None:
        """The next request line, or None once fuzzgate closed its end."""
        while b"\n" not in self._pending:
            self._check(self.request_fd)
            chunk = os.read(self.request_fd, _LINE_LIMIT)
            if not chunk:
                return None
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line.decode("ascii", "replace").strip()

    def report(self, exc: BaseException) -> None:
        """Say what went wrong, if fuzzgate still listens (it then hangs up)."""
        if self._closed:
            return
        with contextlib.suppress(Exception):
            self.send({"error": f"{type(exc).__name__}: {exc}"[:500]})

    def fail(self, exc: BaseException) -> None:
        self.report(exc)
        self.close()

    def close(self) -> None:
        # Once only: a closed fd number may be the server's own file by the next call.
        if self._closed:
            return
        self._closed = True
        for fd in (self.request_fd, self.reply_fd):
            if _identity(fd) == self._identity[fd]:
                with contextlib.suppress(OSError):
                    os.close(fd)


def _identity(fd: int) -> tuple[int, int] | None:
    try:
        status = os.fstat(fd)
    except OSError:
        return None
    return (status.st_dev, status.st_ino)
