"""An in-memory target: the engine's connector seam, as httpx's `MockTransport` is its client's.

`memory_connector(make_server)` opens each connection to a new server object in this process
(`mcp.Client` drives an `MCPServer` or low-level `Server` through memory streams), so the scheduler,
the keeper, the oracles and verification can be run and tested without starting processes. A
fresh server object per connection is what a fresh process is for a stdio target.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import mcp_types as types
from mcp import Client

from fuzzgate import __version__
from fuzzgate.config.views import ServerSettings
from fuzzgate.target.connection import Connection

ServerFactory = Callable[[], Any]
"""Returns a new `MCPServer` or low-level `Server`."""


def memory_connector(
    make_server: ServerFactory,
) -> Callable[[ServerSettings, Mapping[str, str]], AbstractAsyncContextManager[Connection]]:
    @asynccontextmanager
    async def connect(config: ServerSettings, extra_env: Mapping[str, str]) -> AsyncIterator[Connection]:
        client = Client(
            make_server(),
            mode=config.protocol.value,
            cache=None,
            client_info=types.Implementation(name="fuzzgate", version=__version__),
        )
        async with client:
            yield Connection(client=client, transport="memory", process=None)

    return connect
