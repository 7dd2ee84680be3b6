"""fuzzgate's HTTP client for a streamable HTTP target: the transport that counts requests failed at
the transport level (the evidence that the server went away) and keeps what a raw message needs to
join the SDK's session, and the client that records a request body it cannot encode as fuzzgate's
own failure."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from mcp.client.streamable_http import MCP_SESSION_ID, streamable_http_client

from fuzzgate.target.client_side import ENCODING_ERRORS, ClientSide


class WatchedTransport(httpx2.AsyncBaseTransport):
    """Counts HTTP requests that failed at the transport level (refused, reset, cut mid-stream), the
    evidence that an HTTP server went away, as a stdio server's exit is. It also keeps what a raw
    message (`raw.send_raw`) needs to join the SDK's session: the client, the URL and the session id
    the server gave."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, side: ClientSide | None = None) -> None:
        self._inner = inner
        self.side = side or ClientSide()
        self.failures = 0
        self.client: httpx2.AsyncClient | None = None
        self.url: str | None = None
        self.session_id: str | None = None

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            response = await self._inner.handle_async_request(request)
        except httpx2.TransportError:
            self.failures += 1
            raise
        if session_id := response.headers.get(MCP_SESSION_ID):
            self.session_id = session_id
        response.stream = _WatchedStream(response.stream, self)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


class _WatchedClient(httpx2.AsyncClient):
    """The SDK's HTTP client builds each request's body in a task of its transport. A body it cannot
    encode (a lone surrogate has no UTF-8 form) kills that task and with it the session, and every
    call then reads -32000 "Connection closed": recorded here first, as fuzzgate's own failure."""

    def __init__(self, side: ClientSide, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._side = side

    def build_request(self, *args: Any, **kwargs: Any) -> httpx2.Request:
        try:
            return super().build_request(*args, **kwargs)
        except ENCODING_ERRORS as exc:
            self._side.fail(exc, encoding=True)
            raise


class _WatchedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: Any, owner: WatchedTransport) -> None:
        self._inner = inner
        self._owner = owner

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._inner:
                yield chunk
        except httpx2.TransportError:
            self._owner.failures += 1
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()


@asynccontextmanager
async def http_transport(url: str, headers: Mapping[str, str], watched: WatchedTransport) -> AsyncIterator[Any]:
    http = _WatchedClient(
        watched.side, headers=dict(headers), timeout=httpx2.Timeout(30.0, read=300.0), transport=watched
    )
    watched.client, watched.url = http, url
    async with http, streamable_http_client(url, http_client=http) as streams:
        yield streams
