"""The SSRF listener, fuzzgate's side: where it listens in each jail, the canary URLs that lead to
it, and what it wrote down while a call was pending.

A jailed server whose network is its own loopback gets a listener there (`_listener.py`, started by
the jail's init): one port, derived from the run's token (the same seed gives the same URLs; one
made under another seed is sent at this port, `aimed`), on 127.0.0.1 and ::1. A canary URL names it in
one of the spellings of loopback (`HOSTS`) and carries the probe's marker in its path; the listener
reports every request's path on a pipe fuzzgate reads (`ListenerLog`), and a call's requests are
those reported while it was pending (`ListenerLog.mark`, `since`).

A server that is not jailed (or an HTTP server fuzzgate did not start) has no listener: canary URLs are then
never sent to it (`unreachable` turns the host of any it would get into a reserved name that
resolves nowhere), since 127.0.0.1 there is the machine's own, where real services listen.

The file canary (`FILE_CANARY`) is the `file://` probes' target: a file in the watched directory
whose content (`FILE_MARKER`...) no other canary holds.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fuzzgate.sandbox._jail_spec import Listen
from fuzzgate.sandbox._listener import FOLLOWED, MARKER_HEX, PAGE_MARKER, PATH_LIMIT, REDIRECT, URL_MARKER

__all__ = [
    "FILE_CANARY",
    "FILE_MARKER",
    "FOLLOWED",
    "HOSTS",
    "MARKER_HEX",
    "PAGE_MARKER",
    "REDIRECT",
    "URL_MARKER",
    "Listener",
    "ListenerLog",
    "Request",
    "aimed",
    "unreachable",
]

MAX_REQUESTS = 10_000
FILE_CANARY = "fuzzgate-url-canary.txt"
"""In the watched directory (`outside`) of every layer of a run with a listener."""
FILE_MARKER = "fzgurlfile-"
"""Starts the file canary's content."""
HOSTS: tuple[tuple[str, str], ...] = (
    ("loopback", "127.0.0.1"),
    ("decimal loopback", "2130706433"),
    ("IPv6 loopback", "[::1]"),
    ("localhost", "localhost"),
)
"""(label, host) of each spelling of loopback a canary URL is written in."""
UNREACHABLE_HOST = "fuzzgate-listener.invalid"
_PORT_BASE = 20000
_PORT_SPAN = 20000
_CANARY_URL = re.compile(
    rf"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/\s\"'<>]*(?=/{re.escape(URL_MARKER)}[0-9a-f]{{{MARKER_HEX}}})"
)
_CANARY_PORT = re.compile(
    rf"(?P<authority>[A-Za-z][A-Za-z0-9+.-]*://[^/\s\"'<>]*):[0-9]+(?=/{re.escape(URL_MARKER)}[0-9a-f]{{{MARKER_HEX}}})"
)
"""A canary URL's scheme and host (`authority`, with any user part) before its port."""


@dataclass(frozen=True, slots=True)
class Listener:
    """The run's listener: its port in every jail, the same for a token."""

    port: int
    token: str

    @classmethod
    def for_token(cls, token: str) -> Listener:
        digest = hashlib.sha256(f"fuzzgate-listener\x1f{token}".encode("ascii")).digest()
        return cls(_PORT_BASE + int.from_bytes(digest[:4], "big") % _PORT_SPAN, token)

    @property
    def file_content(self) -> str:
        digest = hashlib.sha256(f"fuzzgate-url-file\x1f{self.token}".encode("ascii")).hexdigest()
        return f"fuzzgate url canary: {FILE_MARKER}{digest[:MARKER_HEX]}\n"

    def url(self, host: str, marker: str, *, redirect: bool = False) -> str:
        """The canary URL for `marker` (`URL_MARKER` + hex) written with `host`."""
        return f"http://{host}:{self.port}/{marker}{REDIRECT if redirect else ''}"

    def jail_spec(self, log: ListenerLog) -> Listen:
        """What the jail's init is asked to start, reporting on `log`'s pipe."""
        return Listen(self.port, log.child_fd)

    def plant(self, outside: Path) -> None:
        """Write the file canary into a layer's watched directory."""
        (outside / FILE_CANARY).write_text(self.file_content, encoding="utf-8")

    def summary(self) -> str:
        return f"SSRF listener on its loopback (port {self.port})"


@dataclass(frozen=True, slots=True)
class Request:
    """One request the listener got: its path as the listener wrote it."""

    path: str

    @property
    def followed(self) -> bool:
        """Whether it came after the listener's redirect."""
        return self.path.endswith(REDIRECT + FOLLOWED)

    def markers(self) -> list[str]:
        return re.findall(rf"{re.escape(URL_MARKER)}[0-9a-f]{{{MARKER_HEX}}}", self.path)


class ListenerLog:
    """The requests one server start's listener reported, read from its pipe as calls begin and
    end (the listener writes a request's line before it answers, so a call that waited for the
    answer finds it). Fuzzgate's end of the pipe; `child_fd` is the jail's, closed here once the
    server started (`started`)."""

    def __init__(self, port: int) -> None:
        self.port = port
        """The listener's port in this jail: where canary URLs sent to this server must lead (`aimed`)."""
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        self._lines: list[Request] = []
        self._count = 0
        self._partial = b""

    @property
    def child_fd(self) -> int:
        return self._write

    def started(self) -> None:
        """The server holds its end now: fuzzgate's copy of it goes."""
        if self._write >= 0:
            os.close(self._write)
            self._write = -1

    def mark(self) -> int:
        """Where the requests reported so far end."""
        self._drain()
        return self._count

    def since(self, mark: int) -> tuple[Request, ...]:
        """The requests reported after `mark`."""
        self._drain()
        return tuple(self._lines[mark:])

    def _drain(self) -> None:
        while self._read >= 0:
            try:
                data = os.read(self._read, 1 << 16)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                return
            *lines, self._partial = (self._partial + data).split(b"\n")
            for line in lines:
                self._count += 1
                # What a server could make it report without end is kept up to a bound (a server
                # that made this many requests has shown it long before).
                if len(self._lines) < MAX_REQUESTS:
                    self._lines.append(Request(line[:PATH_LIMIT].decode("ascii", "replace")))

    def close(self) -> None:
        self.started()
        if self._read >= 0:
            os.close(self._read)
            self._read = -1


def unreachable(value: Any) -> Any:
    """`value` (JSON) with the host of every canary URL in it replaced by one that resolves nowhere:
    what a server without a listener gets instead (module docstring)."""
    return _rewritten(value, _CANARY_URL, lambda m: f"{m['scheme']}{UNREACHABLE_HOST}")


def aimed(value: Any, port: int) -> Any:
    """`value` (JSON) with the port of every canary URL in it set to `port`, this server start's
    listener's. The port comes from the seed of the run that made the URL: a baseline entry's, a
    corpus entry's or a repro pasted from another run's report was made under another seed, and
    replayed as it was it reaches no listener ("fetch failed", and a bug replayed as fixed). Its
    host (the spelling of loopback) and its marker, which the oracle matches, are kept."""
    return _rewritten(value, _CANARY_PORT, lambda m: f"{m['authority']}:{port}")


def _rewritten(value: Any, pattern: re.Pattern[str], replacement: Callable[[re.Match[str]], str]) -> Any:
    if isinstance(value, str):
        # Only a string holding the marker can hold a canary URL; the pattern's scheme backtracks
        # over every letter of a long one (64 KiB of `A`: seconds per argument).
        if URL_MARKER not in value:
            return value
        return pattern.sub(replacement, value)
    if isinstance(value, dict):
        return {_rewritten(k, pattern, replacement): _rewritten(v, pattern, replacement) for k, v in value.items()}
    if isinstance(value, list):
        return [_rewritten(v, pattern, replacement) for v in value]
    return value
