"""The `mcp` SDK behaviours fuzzgate's classification relies on, pinned: if an SDK upgrade changes
one of these, this file fails before users' gates change their verdicts.

fuzzgate matches codes and exception types, never the SDK's English messages.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientSession
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError

from fuzzgate.check import INTERNAL_ERROR_CODES
from fuzzgate.config.model import Config, TargetConfig, TargetKind
from fuzzgate.config.views import ServerSettings
from fuzzgate.model.outcome import OutcomeStatus
from fuzzgate.target import connection
from fuzzgate.target.call import call_tool
from fuzzgate.target.connection import open_connection

HOSTILE = Path(__file__).resolve().parents[1] / "servers" / "hostile.py"


def test_connection_closed_is_the_code_fuzzgate_matches() -> None:
    assert types.CONNECTION_CLOSED == connection.CONNECTION_CLOSED == -32000


def test_send_request_takes_a_type_adapter_and_a_progress_callback() -> None:
    parameters = inspect.signature(ClientSession.send_request).parameters
    assert {"request", "result_type", "progress_callback"} <= set(parameters)
    assert issubclass(types.InputRequiredResult, types.Result)


def _hostile_call(mode: str) -> Any:
    config = Config(target=TargetConfig(kind=TargetKind.STDIO, command=sys.executable, args=(str(HOSTILE),)))

    async def body() -> Any:
        async with open_connection(ServerSettings.of(config)) as conn:
            params = types.CallToolRequestParams(name="misbehave", arguments={"mode": mode})
            request = types.CallToolRequest(params=params)
            with pytest.raises(MCPError) as raised:
                with anyio.fail_after(10):
                    await conn.client.session.send_request(request, types.CallToolResult)
            outcome = await call_tool(conn, "misbehave", {"mode": mode}, 5) if mode != "exit" else None
        return raised.value, outcome

    return anyio.run(body)


def test_a_dying_server_fails_the_pending_request_with_connection_closed() -> None:
    error, _ = _hostile_call("exit")
    assert error.code == types.CONNECTION_CLOSED


def test_a_server_s_own_minus_32000_is_an_rpc_error_not_a_crash() -> None:
    # The same code and a message saying "closed": only the transport's evidence tells them apart.
    error, outcome = _hostile_call("server_error")
    assert error.code == -32000 and "closed" in error.message.lower()
    assert outcome.status is OutcomeStatus.RPC_ERROR and outcome.rpc_code == -32000


def test_mcpserver_answers_an_unhandled_exception_with_the_bare_error_text() -> None:
    """The oracle's `sdk-unhandled` signal: the Python SDK's text for an exception in a tool."""
    app = MCPServer("contract")

    @app.tool()
    def explode() -> str:
        raise ValueError("secret detail that must not be sent")

    async def body() -> types.CallToolResult:
        async with Client(app) as client:
            return await client.call_tool("explode", {})

    result = anyio.run(body)
    assert result.is_error
    (block,) = result.content
    assert isinstance(block, types.TextContent) and block.text == "Error executing tool explode"


@pytest.mark.parametrize(("mode", "code"), [("legacy", 0), ("2026-07-28", -32603)])
def test_a_lowlevel_handler_exception_is_an_internal_error_code(mode: str, code: int) -> None:
    async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name="boom", input_schema={"type": "object"})])

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        raise RuntimeError("boom")

    server = Server("contract", on_list_tools=on_list_tools, on_call_tool=on_call_tool)

    async def body() -> MCPError:
        async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
            with pytest.raises(MCPError) as raised:
                await client.call_tool("boom", {})
        return raised.value

    error = anyio.run(body)
    assert error.code == code and code in INTERNAL_ERROR_CODES
