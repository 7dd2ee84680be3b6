"""The host side of the relay to an HTTP server fuzzgate started in the sandbox (`_relay.py`): the
server listens on the jail's own loopback, which the host cannot reach, and fuzzgate's HTTP client
connects to the relay's Unix socket instead.

`RelayDir` is one server start's directory for the two sockets, made fresh for the start and
removed with its layer: in the workspace (swept with it after a run that was killed), unless its
path is too long for a Unix socket's (about 100 bytes), then in the temp dir, as a `fuzzgate-relay-*`
directory with an owner file of its own, which the next relay directory made there sweeps as a
workspace sweeps stale roots (`stale_roots.py`)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from fuzzgate.sandbox._relay import READY, RELAY
from fuzzgate.sandbox.removal import remove_tree
from fuzzgate.sandbox.stale_roots import sweep_stale, write_owner

__all__ = ["RelayDir", "address_of"]

_LONGEST_BASE = 64
"""A base dir longer than this is passed over: the sockets' paths must stay short."""


def address_of(url: str) -> tuple[str, int]:
    """The host and TCP port a URL is reached at (the port is what the relay connects to)."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.hostname or "localhost", port


class RelayDir:
    """The directory the jail binds the relay's sockets in, for one server start."""

    def __init__(self, workspace: Path) -> None:
        base = str(workspace)
        if len(base) <= _LONGEST_BASE:
            self.path = Path(tempfile.mkdtemp(prefix="relay-", dir=base))
            return
        base = tempfile.gettempdir()
        if len(base) > _LONGEST_BASE and os.path.isdir("/tmp"):
            base = "/tmp"
        # Outside the workspace, nothing else would remove it after a run killed with SIGKILL.
        sweep_stale(Path(base))
        self.path = Path(tempfile.mkdtemp(prefix="fuzzgate-relay-", dir=base))
        try:
            write_owner(self.path)
        except OSError:
            remove_tree(self.path)
            raise

    @property
    def socket(self) -> Path:
        """Where fuzzgate's HTTP client connects: each connection reaches the server's port."""
        return self.path / RELAY

    @property
    def ready(self) -> Path:
        """One byte per connection: whether the server's port accepts connections now."""
        return self.path / READY

    def close(self) -> None:
        remove_tree(self.path)
