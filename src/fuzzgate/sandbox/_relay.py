"""The relay in the jail: how fuzzgate reaches an HTTP server it started in the sandbox, whose
network is the jail's own loopback only. The host side (the socket paths, the readiness check) is
`relay.py`.

`_jail_init.py` binds two Unix sockets in a directory of the host's before it builds the server's
view (so they are the host's files, reachable from the host at their paths), and runs `serve` in a
child of its own inside the jail's PID namespace, without the powers that could undo the sandbox:

- `RELAY`: each connection accepted is joined to a new TCP connection to the server's port on the
  jail's loopback (127.0.0.1, else ::1), bytes passed both ways until either side closes; a
  connection the port refuses is closed at once;
- `READY`: each connection accepted gets one byte, `b"1"` when the server's port accepts a TCP
  connection now, `b"0"` when not, then is closed: the host's check that the server is up, the
  same as trying the port on its own loopback.

The relay connects only to the server's port on the jail's own loopback, so a server cannot use it
to reach anything else. Written by hand on `_socket` and threads, as the other modules the init
imports use only the standard library, and little of it: it starts with every server.
"""

from __future__ import annotations

import _socket
import _thread
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NoReturn

RELAY = "relay"
"""The Unix socket whose connections are passed on to the server's port."""
READY = "ready"
"""The Unix socket that answers whether the server's port accepts connections."""
_CHUNK = 65536
_CONNECT_S = 0.5


def bind(directory: str) -> list[_socket.socket]:
    """The listening `RELAY` and `READY` sockets in `directory`, bound by name from inside it (a
    Unix socket's path is limited to about 100 bytes; a directory's path is not)."""
    here = os.getcwd()
    os.chdir(directory)
    sockets = []
    try:
        for name in (RELAY, READY):
            sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
            sockets.append(sock)
            sock.bind(name)
            sock.listen(64)
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    finally:
        os.chdir(here)
    return sockets


def _connect(port: int) -> _socket.socket | None:
    for family, address in ((_socket.AF_INET, "127.0.0.1"), (_socket.AF_INET6, "::1")):
        try:
            sock = _socket.socket(family, _socket.SOCK_STREAM)
        except OSError:
            continue
        sock.settimeout(_CONNECT_S)
        try:
            sock.connect((address, port))
        except OSError:
            sock.close()
            continue
        sock.settimeout(None)
        # As an HTTP client's own connection would: a request's head and body, written apart, must
        # not wait for the server's delayed acknowledgement (40 ms a call).
        sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
        return sock
    return None


def _pump(source: _socket.socket, sink: _socket.socket) -> None:
    """Pass bytes from `source` to `sink` until `source` ends; then end `sink`'s sending side."""
    try:
        while data := source.recv(_CHUNK):
            sink.sendall(data)
    except OSError:
        pass
    _shut(sink)


def _shut(sock: _socket.socket) -> None:
    try:
        sock.shutdown(_socket.SHUT_WR)
    except OSError:
        return


def _join(client: _socket.socket, port: int) -> None:
    server = _connect(port)
    if server is None:
        client.close()
        return
    done = _thread.allocate_lock()
    done.acquire()

    def back() -> None:
        _pump(server, client)
        done.release()

    _thread.start_new_thread(back, ())
    _pump(client, server)
    done.acquire()
    client.close()
    server.close()


def _answer_ready(client: _socket.socket, port: int) -> None:
    server = _connect(port)
    if server is not None:
        server.close()
    try:
        client.sendall(b"1" if server is not None else b"0")
    except OSError:
        client.close()
        return
    client.close()


def _accept(listening: _socket.socket, port: int, handle: Callable[[_socket.socket, int], None]) -> None:
    while True:
        fd, _address = listening._accept()  # type: ignore[attr-defined]
        _thread.start_new_thread(handle, (_socket.socket(fileno=fd), port))


def serve(sockets: list[_socket.socket], port: int) -> NoReturn:
    """Relay and answer until the jail ends (the process is killed with it)."""
    relay, ready = sockets
    _thread.start_new_thread(_accept, (ready, port, _answer_ready))
    try:
        _accept(relay, port, _join)
    finally:
        os._exit(0)
