"""The command line shared by the example servers: transport, address and protocol era.

    python <server>.py [--transport stdio|http] [--host 127.0.0.1] [--port 8000] [--legacy]

`--transport http` serves streamable HTTP at `http://HOST:PORT/mcp`.

`--legacy` makes the server speak only the handshake era (protocol 2024-11-05 .. 2025-11-25), the
way servers built on older SDKs do:

- `server/discover` answers JSON-RPC -32601 "Method not found", so `mcp.Client(mode="auto")` falls
  back to `initialize`;
- over stdio the connection is served by the SDK's handshake-only loop (`serve_loop`). The default
  `Server.run` loop commits a connection to 2026-07-28 as soon as the first request carries the
  2026 envelope (the discover probe does) and then refuses `initialize`, so replacing the discover
  handler alone would leave an auto client unable to connect at all;
- a request that still arrives at a 2026-07-28 version (a client pinned to it, which skips the
  probe) is refused with -32022 naming the handshake versions.

Over HTTP the SDK's session manager already serves `initialize` sessions with the handshake loop;
the discover probe reaches the replaced handler on its single-exchange path.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import Any

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types import METHOD_NOT_FOUND, UNSUPPORTED_PROTOCOL_VERSION, RequestParams
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS


def plain_stderr_logging(level: int = logging.INFO) -> None:
    """Log to stderr as plain text. Call before creating the MCPServer.

    MCPServer logs through rich when it is installed, which draws tracebacks in boxes and wraps their
    paths; a fuzzer reading a crashed call's stderr wants the plain `File "...", line N` frames.
    MCPServer's own `logging.basicConfig` is a no-op once the root logger has a handler.
    """
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)


def parse_args(description: str, argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="HTTP port (default 8000)")
    parser.add_argument(
        "--legacy",
        action="store_true",
        help="speak only the handshake protocol era (2024-11-05..2025-11-25): no server/discover",
    )
    return parser.parse_args(argv)


def serve(app: MCPServer, args: argparse.Namespace) -> None:
    """Run `app` until its transport closes (stdio) or the process is stopped (HTTP)."""
    if args.legacy:
        _make_handshake_only(app)
    if args.transport == "http":
        app.run("streamable-http", host=args.host, port=args.port)
    elif args.legacy:
        anyio.run(_serve_stdio_handshake_only, _lowlevel(app))
    else:
        app.run("stdio")


def _lowlevel(app: MCPServer) -> Server[Any]:
    # MCPServer has no public accessor for its low-level server; mcp.Client reads it the same way.
    return app._lowlevel_server


async def _refuse_discover(ctx: ServerRequestContext[Any, Any], params: RequestParams) -> HandlerResult:
    raise MCPError(code=METHOD_NOT_FOUND, message="Method not found", data="server/discover")


async def _refuse_modern_versions(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS and ctx.method != "server/discover":
        raise MCPError(
            code=UNSUPPORTED_PROTOCOL_VERSION,
            message=f"this server speaks only the handshake protocol era, not {ctx.protocol_version}",
            data={"supported": list(HANDSHAKE_PROTOCOL_VERSIONS), "requested": ctx.protocol_version},
        )
    return await call_next(ctx)


def _make_handshake_only(app: MCPServer) -> None:
    _lowlevel(app).add_request_handler("server/discover", RequestParams, _refuse_discover)
    app.middleware.append(_refuse_modern_versions)


async def _serve_stdio_handshake_only(server: Server[Any]) -> None:
    async with server.lifespan(server) as lifespan_state, stdio_server() as (read_stream, write_stream):
        await serve_loop(
            server,
            read_stream,
            write_stream,
            lifespan_state=lifespan_state,
            init_options=server.create_initialization_options(),
        )
