"""The collector end of the servers' ground truth (`servers/_truth.py`): a Unix socket that appends
every line it receives to the ground-truth file, fsyncs it, and only then answers `ok`, so a server
that waits for the answer has its record on disk before it misbehaves.

    with collector(work / "truth.sock", work / "ground_truth.jsonl") as socket_path:
        ...  # start servers with BENCH_GROUND_TRUTH=socket_path

A socket rather than the file itself: a fuzzer's sandbox may mount everything outside the server's
scope read-only (connecting to a socket still works there) and may overlay the scope, which would
swallow writes. The socket lives outside the scope, so it is never copied or overlaid.
"""

from __future__ import annotations

import contextlib
import os
import socketserver
import threading
from collections.abc import Iterator
from pathlib import Path

MAX_SOCKET_PATH = 107
"""sun_path holds 108 bytes, the terminating NUL included."""


class _Collector(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True

    def __init__(self, socket_path: Path, file: Path) -> None:
        self.file = file
        self.lock = threading.Lock()
        super().__init__(str(socket_path), _Handler)


class _Handler(socketserver.StreamRequestHandler):
    server: _Collector

    def handle(self) -> None:
        for line in self.rfile:
            if not line.endswith(b"\n"):
                return  # cut short: the server died mid-line
            with self.server.lock:
                fd = os.open(self.server.file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
                try:
                    os.write(fd, line)
                    os.fsync(fd)
                finally:
                    os.close(fd)
            self.wfile.write(b"ok\n")


@contextlib.contextmanager
def collector(socket_path: Path, file: Path) -> Iterator[Path]:
    """Serve `socket_path` while the block runs, appending what arrives to `file`; yields the path."""
    if len(os.fsencode(socket_path)) > MAX_SOCKET_PATH:
        raise ValueError(f"socket path too long for a Unix socket: {socket_path}")
    socket_path.unlink(missing_ok=True)
    file.touch()
    server = _Collector(socket_path, file)
    socket_path.chmod(0o666)  # a server under another (namespaced) user may connect too
    thread = threading.Thread(target=server.serve_forever, name="ground-truth", daemon=True)
    thread.start()
    try:
        yield socket_path
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
        socket_path.unlink(missing_ok=True)
