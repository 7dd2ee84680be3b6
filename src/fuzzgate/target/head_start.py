"""The run's first server, started while fuzzgate finishes its own start.

Starting a server takes about as long as fuzzgate's own imports (the MCP SDK's types, Hypothesis):
started one after the other, the first call waits for both. `begin` makes the run's containment and
prepares and starts its first server (jail, layer, collector and all) from the config alone, before
the CLI imports the engine; the server's interpreter then starts while fuzzgate's does. That is a
stdio server, or the command serving an HTTP target (on the sandbox's own loopback, or, unjailed, on
the URL's port once nothing else is found listening there, as `http_server.served_transport` checks). The
engine takes the containment over (`take_containment`), and its first `open_connection` takes the
process over (`take`) when it asks for exactly the start that was made (the same launch spec,
canaries included); anything else is discarded and started the ordinary way, as is a run whose
head start failed, so every error is still raised where and as it was.

- In: `ServerSettings`, the run's seed (the containment's token and the canaries follow from it).
- Out: a `HeadStart`; `close` (on every exit path) kills and removes whatever was not taken.
- Never: speak MCP (this module must not import the SDK), or start an HTTP target's command while
  something else holds its port on the host.
"""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass

from fuzzgate.check.secrets import canary_environment
from fuzzgate.config.model import TargetKind
from fuzzgate.config.views import ServerSettings
from fuzzgate.model.errors import FuzzgateError
from fuzzgate.sandbox.containment import Containment, contain
from fuzzgate.sandbox.early import Early, spawn_early
from fuzzgate.sandbox.owned_process import LaunchSpec
from fuzzgate.sandbox.relay import address_of
from fuzzgate.target.launch import PreparedStart, launch_spec, missing, prepare_start

_TAKEN_S = 0.5
"""How long the check that an HTTP target's port is free may wait for a connection (a filtered port
drops the attempt rather than refusing it): as `http_server.accepts`."""


@dataclass(slots=True, eq=False)
class EarlyStart:
    """One server start made ahead: the launch spec it was made for (before the containment and
    the collector changed it), what was prepared for it, and its process."""

    launch: LaunchSpec
    prepared: PreparedStart
    process: Early


class HeadStart:
    """The containment and first server start of a run, made before the engine was imported."""

    def __init__(self, containment: Containment, start: EarlyStart | None) -> None:
        self._containment: Containment | None = containment
        self._start = start

    def take_containment(self) -> Containment | None:
        """The run's containment, once: from here on the taker closes it."""
        containment, self._containment = self._containment, None
        return containment

    def take(self, config: ServerSettings, extra_env: Mapping[str, str]) -> EarlyStart | None:
        """The start made ahead, once, if it is the one asked for; else None (and it is discarded)."""
        start, self._start = self._start, None
        if start is None:
            return None
        if config.target.command is None or launch_spec(config, extra_env) != start.launch:
            _discard(start)
            return None
        return start

    def close(self) -> None:
        """Kill and remove what was not taken. Idempotent."""
        start, self._start = self._start, None
        if start is not None:
            _discard(start)
        if self._containment is not None:
            self._containment.close()
            self._containment = None


def _discard(start: EarlyStart) -> None:
    start.process.discard()
    start.prepared.close()


def _held(url: str) -> bool:
    """Whether something on the host accepts connections at the URL's port now."""
    try:
        with socket.create_connection(address_of(url), timeout=_TAKEN_S):
            return True
    except OSError:
        return False


def begin(config: ServerSettings, seed: int) -> HeadStart | None:
    """Contain and start the run's first server now (a stdio server, or the command serving an HTTP
    target); None for a target fuzzgate does not start, or when the containment cannot be made (the
    engine then makes it, or says why not)."""
    target = config.target
    if target.command is None:
        return None
    http = target.kind is TargetKind.HTTP
    try:
        containment = contain(target, seed)
    except (FuzzgateError, OSError):
        return None
    if containment is None:
        return None
    launch = launch_spec(config, canary_environment(seed))
    if missing(launch):
        return HeadStart(containment, None)
    if http and containment.relay_port is None and target.url is not None and _held(target.url):
        # Started now, it could not own the port: the ordinary start says so (exit 3).
        return HeadStart(containment, None)
    try:
        prepared = prepare_start(config, canary_environment(seed), containment)
    except (FuzzgateError, OSError):
        return HeadStart(containment, None)
    try:
        # An HTTP server's stdin is /dev/null, as `ServedProcess` starts it.
        process = spawn_early(prepared.spec or launch, stdin=subprocess.DEVNULL if http else subprocess.PIPE)
    except OSError:
        prepared.close()
        return HeadStart(containment, None)
    return HeadStart(containment, EarlyStart(launch, prepared, Early(process)))
