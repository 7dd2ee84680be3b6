"""A real `redis-server` for tests: started on a free loopback port, persisting every write to an
append-only file in its own directory, restartable on the same port and directory (a Redis restart
a worker must survive), and stopped however the test ends.

Use the `redis_server` fixture (import it into a conftest: `from tests.redis_server import
redis_server`). A missing `redis-server` binary fails the test (the Debian package `redis-server`
is a test requirement, like the validators), never skips it.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

BINARY_ENV = "FUZZGATE_REDIS_SERVER"
"""Overrides where the `redis-server` binary is (default: the one on PATH, else /usr/bin's)."""

START_TIMEOUT = 30.0


def redis_binary() -> str:
    found = os.environ.get(BINARY_ENV) or shutil.which("redis-server") or "/usr/bin/redis-server"
    if not Path(found).is_file():
        raise FileNotFoundError(
            f"redis-server not found ({found}): install the Debian package redis-server (tests need a real Redis)"
        )
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    """One `redis-server` process on 127.0.0.1:`port` with its data in `directory`."""

    def __init__(self, directory: Path, port: int | None = None, *, password: str | None = None) -> None:
        self.directory = Path(directory)
        self.password = password
        self.directory.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.binary = redis_binary()
        self.log = self.directory / "redis.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def socket(self) -> Path:
        """The Unix socket it also listens on (a short path: sockets allow about 100 bytes)."""
        return self.directory / "redis.sock"

    @property
    def unix_url(self) -> str:
        return f"unix://{self.socket}?db=0"

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def argv(self) -> list[str]:
        return [
            self.binary,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--save", "",
            "--appendonly", "yes",
            "--appendfsync", "always",
            "--dir", str(self.directory),
            "--daemonize", "no",
            "--logfile", "",
            "--unixsocket", str(self.socket),
            *(["--requirepass", self.password] if self.password else []),
        ]  # fmt: skip

    def start(self) -> None:
        """Start the server and wait until it answers PING with PONG (its data loaded)."""
        if self.running:
            return
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                self.argv(), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
            )
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.process.returncode}: {self._tail()}")
            if self.ping():
                return
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"redis-server did not answer on port {self.port} in {START_TIMEOUT:g} s: {self._tail()}")

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as conn:
                auth = f"AUTH {self.password}\r\n".encode() if self.password else b""
                conn.sendall(auth + b"PING\r\n")
                reply = b""
                while reply.count(b"\r\n") < (2 if auth else 1):
                    chunk = conn.recv(256)
                    if not chunk:
                        break
                    reply += chunk
                return reply.endswith(b"+PONG\r\n")
        except OSError:
            return False

    def stop(self) -> None:
        """Stop the server (SIGTERM: it flushes the append-only file), killing it after 10 s."""
        proc, self.process = self.process, None
        if proc is None or proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()

    def kill(self) -> None:
        """Kill the server without letting it shut down (what a crash or power cut does to it)."""
        proc, self.process = self.process, None
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()

    def restart(self, *, hard: bool = False) -> None:
        """Stop (or with `hard`, kill) the server and start it again on the same port and directory."""
        if hard:
            self.kill()
        else:
            self.stop()
        self.start()

    def _tail(self) -> str:
        try:
            return " | ".join(self.log.read_text(errors="replace").strip().splitlines()[-5:])
        except OSError:
            return "(no log)"

    def __enter__(self) -> RedisServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@pytest.fixture
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A fresh, empty Redis on a free loopback port, stopped after the test."""
    with RedisServer(tmp_path_factory.mktemp("redis")) as server:
        yield server
