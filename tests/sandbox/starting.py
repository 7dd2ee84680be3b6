"""Starting a server for the sandbox tests that check why a start failed."""

from __future__ import annotations

import anyio

from fuzzgate.config.model import Config, ProtocolMode, SandboxMode, TargetConfig
from fuzzgate.config.views import ServerSettings
from fuzzgate.model.errors import TargetError
from fuzzgate.sandbox.containment import contain
from fuzzgate.target.connection import open_connection


def start_error(target: TargetConfig) -> TargetError | None:
    """Start `target`'s server, contained as a run would, and stop it: the start's error, if any."""
    config = Config(target=target, protocol=ProtocolMode.LEGACY)
    containment = contain(config.target, 1)
    # These tests run only where the sandbox works: a target that asks for it is contained.
    assert containment is not None or target.sandbox is SandboxMode.OFF

    async def body() -> None:
        async with open_connection(ServerSettings.of(config), containment=containment):
            pass

    try:
        anyio.run(body)
    except TargetError as exc:
        return exc
    finally:
        if containment is not None:
            containment.close()
    return None
