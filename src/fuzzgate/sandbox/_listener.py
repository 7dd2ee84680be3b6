"""The listener in the jail: a tiny HTTP server on the jail's own loopback that writes down every
request it gets, so that a server fetching a URL its caller gave it shows (server-side request
forgery). The host side (its port, the canary URLs, reading what it wrote down) is `listener.py`.

`_jail_init.py` binds its sockets in the jail's network namespace (127.0.0.1 and ::1, the same
port) after bringing up `lo`, and runs `serve` in a child of its own inside the jail's PID
namespace: it is reachable only from inside the jail, and dies with it. It reports on a pipe
fuzzgate passed down (the server never holds it), one line per request: its path, bytes outside
printable ASCII written as `%XX`, cut at `PATH_LIMIT`; a line the full pipe cannot take is dropped
rather than stalling the listener. A path ending in `REDIRECT` is answered with a redirect to the same path
with `FOLLOWED` appended; every other with `200` and a page whose content names the probe marker
in its path (`URL_MARKER` + hex becomes `PAGE_MARKER` + the same hex), so that a reply quoting the
page says which probe's URL the server fetched, while a reply that merely echoes the URL does not.

Like the other modules the init imports, it imports only the standard library, and little of it.
"""

from __future__ import annotations

import _socket
import os
import select
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

URL_MARKER = "fzgurl-"
"""Starts the marker a canary URL's path holds: `/fzgurl-<16 hex>`."""
PAGE_MARKER = "fzgurlpage-"
"""Starts the canary content of the listener's pages."""
MARKER_HEX = 16
REDIRECT = "/redirect"
FOLLOWED = "/followed"
PATH_LIMIT = 1024
_HEAD_LIMIT = 8192
_READ_TIMEOUT_S = 5.0


def bind(port: int) -> list[_socket.socket]:
    """Listening sockets on 127.0.0.1 and ::1 (where the kernel has IPv6) at `port`."""
    sockets = []
    for family, address in ((_socket.AF_INET, "127.0.0.1"), (_socket.AF_INET6, "::1")):
        try:
            sock = _socket.socket(family, _socket.SOCK_STREAM)
        except OSError:
            continue
        try:
            sock.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
            if family == _socket.AF_INET6:
                sock.setsockopt(_socket.IPPROTO_IPV6, _socket.IPV6_V6ONLY, 1)
            sock.bind((address, port))
            sock.listen(64)
        except OSError:
            sock.close()
            continue
        sockets.append(sock)
    return sockets


def logged_path(head: bytes) -> str | None:
    """The path of an HTTP request head (its first line's second word), as the log writes it."""
    line = head.split(b"\n", 1)[0].strip()
    parts = line.split(b" ")
    if len(parts) < 2 or not parts[1]:
        return None
    raw = parts[1][:PATH_LIMIT]
    return "".join(chr(b) if 0x21 <= b <= 0x7E and b != 0x25 else f"%{b:02X}" for b in raw)


def page(path: str) -> bytes:
    """The canary page for `path`: its content names the marker the path holds."""
    at = path.find(URL_MARKER)
    digits = path[at + len(URL_MARKER) : at + len(URL_MARKER) + MARKER_HEX] if at >= 0 else ""
    if len(digits) != MARKER_HEX or not all(c in "0123456789abcdef" for c in digits):
        digits = "0" * MARKER_HEX
    return f"fuzzgate url canary: {PAGE_MARKER}{digits}\n".encode("ascii")


def answer(path: str, port: int) -> bytes:
    if path.endswith(REDIRECT):
        location = f"http://127.0.0.1:{port}{path}{FOLLOWED}"
        return (f"HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").encode(
            "ascii", "replace"
        )
    body = page(path)
    head = f"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    return head.encode("ascii") + body


def _report(log_fd: int, path: str) -> bool:
    """Report `path` on the pipe; False when the full pipe cannot take it (dropped)."""
    try:
        os.write(log_fd, (path + "\n").encode("ascii"))
    except BlockingIOError:
        return False
    return True


def _finish(conn: _socket.socket, head: bytes, log_fd: int, port: int) -> None:
    path = logged_path(head)
    try:
        if path is not None:
            # Written before answering: a server that waits for the answer returns after the line.
            _report(log_fd, path)
            conn.setblocking(True)
            conn.settimeout(1.0)
            conn.sendall(answer(path, port))
    except OSError:
        pass
    finally:
        conn.close()


def serve(listeners: list[_socket.socket], log_fd: int, port: int) -> NoReturn:
    """Accept and answer requests until the jail goes."""
    os.set_blocking(log_fd, False)
    for sock in listeners:
        sock.setblocking(False)
    pending: dict[_socket.socket, tuple[bytes, float]] = {}
    while True:
        now = time.monotonic()
        wait = min((deadline for _, deadline in pending.values()), default=now + 60.0) - now
        readable, _, _ = select.select([*listeners, *pending], [], [], max(0.0, wait))
        now = time.monotonic()
        for sock in readable:
            if sock in listeners:
                try:
                    fd, _address = sock._accept()  # type: ignore[attr-defined]
                except OSError:
                    continue
                conn = _socket.socket(fileno=fd)
                conn.setblocking(False)
                pending[conn] = (b"", now + _READ_TIMEOUT_S)
                continue
            head, deadline = pending.pop(sock)
            try:
                chunk = sock.recv(4096)
            except BlockingIOError:
                pending[sock] = (head, deadline)
                continue
            except OSError:
                chunk = b""
            head += chunk
            if chunk and b"\n\n" not in head.replace(b"\r\n", b"\n") and len(head) < _HEAD_LIMIT:
                pending[sock] = (head, deadline)
                continue
            _finish(sock, head, log_fd, port)
        for conn, (head, deadline) in list(pending.items()):
            if deadline <= now:
                del pending[conn]
                _finish(conn, head, log_fd, port)
