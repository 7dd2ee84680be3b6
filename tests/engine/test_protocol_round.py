"""The protocol round and raw messages against real servers, over stdio and streamable HTTP: the
planted protocol bugs of tests/servers/protocol_breaker.py are found, its clean look-alike and the
official SDK's servers give nothing."""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from fuzzgate.check.protocol_probes import BANNER, PROBES, judge, probe_of
from fuzzgate.check.secrets import Redactor
from fuzzgate.config.model import Config, ProtocolMode, TargetConfig, TargetKind
from fuzzgate.config.views import ServerSettings
from fuzzgate.engine.protocol_round import RoundResult, protocol_round, send_probe, startup_banner
from fuzzgate.engine.settings import EngineSettings
from fuzzgate.model.findings import Kind
from fuzzgate.model.outcome import AfterTimeout, AnomalyKind, OutcomeStatus
from fuzzgate.target.call import call_tool
from fuzzgate.target.connection import open_connection
from fuzzgate.target.discover import discover
from fuzzgate.target.raw import send_raw

SERVERS = Path(__file__).resolve().parents[1] / "servers"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "servers"
BREAKER = SERVERS / "protocol_breaker.py"
HOSTILE = SERVERS / "hostile.py"
REDACT = Redactor(())
ALL_PROBES = set(PROBES)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stdio(script: Path, *args: str, protocol: ProtocolMode = ProtocolMode.AUTO) -> Config:
    target = TargetConfig(kind=TargetKind.STDIO, command=sys.executable, args=(str(script), *args))
    return Config(target=target, protocol=protocol, startup_timeout_ms=20_000)


def http(script: Path, *args: str, protocol: ProtocolMode = ProtocolMode.AUTO) -> Config:
    """An HTTP target whose command fuzzgate starts; `{port}` in `args` is its port."""
    port = _free_port()
    target = TargetConfig(
        kind=TargetKind.HTTP,
        url=f"http://127.0.0.1:{port}/mcp",
        command=sys.executable,
        args=(str(script), *(a.format(port=port) for a in args)),
    )
    return Config(target=target, protocol=protocol, startup_timeout_ms=30_000)


def run_round(config: Config) -> tuple[RoundResult, Any]:
    async def body() -> tuple[RoundResult, Any]:
        async with open_connection(ServerSettings.of(config)) as connection:
            inventory = await discover(connection, 10)
            banner = startup_banner(connection, REDACT)
            return await protocol_round(connection, EngineSettings.of(config), inventory.tools, REDACT), banner

    return anyio.run(body)


def found(result: RoundResult) -> dict[str, tuple[Kind, str]]:
    return {str(probe_of(o)): (o.kind, o.signature[2]) for o, _, _ in result.found}


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_planted_protocol_bugs_are_found(transport: str) -> None:
    config = stdio(BREAKER) if transport == "stdio" else http(BREAKER, "--http={port}")
    result, banner = run_round(config)
    assert found(result) == {
        "arguments-omitted": (Kind.INTERNAL_ERROR, "internal-error"),
        "arguments-null": (Kind.CRASH, "crash"),
    }
    # The round stops where the server died, and says it must be restarted.
    assert result.sent == ("arguments-omitted", "arguments-omitted-required", "arguments-null")
    assert result.restart is not None and "arguments-null" in result.restart
    crash = next(o for o, _, _ in result.found if probe_of(o) == "arguments-null")
    assert crash.server_wide and "exit status 3" in crash.message
    assert "AttributeError" in crash.message and crash.details.frames
    # The repro is the raw message sent, never a payload in the signature.
    message = next(m for o, m, _ in result.found if probe_of(o) == "arguments-null")
    assert message["method"] == "tools/call" and message["params"]["arguments"] is None
    assert message["params"]["name"] == "echo"
    omitted = next(m for o, m, _ in result.found if probe_of(o) == "arguments-omitted")
    assert "arguments" not in omitted["params"]
    if transport == "stdio":
        assert banner is not None and banner.kind is Kind.PROTOCOL_ERROR and banner.server_wide
        assert "4 non-JSON lines" in banner.message and "protocol-breaker 0.1 starting" in banner.message
    else:
        # Over HTTP stdout is only logs: the same lines are no banner.
        assert banner is None


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_clean_look_alike_gives_nothing(transport: str) -> None:
    config = stdio(BREAKER, "--clean") if transport == "stdio" else http(BREAKER, "--clean", "--http={port}")
    result, banner = run_round(config)
    assert banner is None
    assert result.found == () and result.restart is None and not result.cut_short
    assert set(result.sent) == ALL_PROBES


SDK_SERVERS = [
    pytest.param(stdio(EXAMPLES / "clean_server.py"), id="stdio-2026"),
    pytest.param(stdio(EXAMPLES / "clean_server.py", "--legacy"), id="stdio-handshake"),
    pytest.param(stdio(EXAMPLES / "clean_server.py", protocol=ProtocolMode.LEGACY), id="stdio-legacy-client"),
    pytest.param(stdio(EXAMPLES / "buggy_server.py"), id="stdio-buggy-example"),
    pytest.param(http(EXAMPLES / "clean_server.py", "--transport=http", "--port={port}"), id="http-2026"),
    pytest.param(
        http(EXAMPLES / "clean_server.py", "--transport=http", "--port={port}", "--legacy"), id="http-handshake"
    ),
]


@pytest.mark.parametrize("config", SDK_SERVERS)
def test_the_official_sdk_gives_no_protocol_finding(config: Config) -> None:
    """mcp 2.3's MCPServer rejects what it should and drops what it cannot parse (params as an
    array, an id of 1e300): rejections and tolerated silences, never findings."""
    result, banner = run_round(config)
    assert banner is None
    assert result.found == () and result.restart is None and not result.cut_short
    # Every probe was sent (`arguments-omitted` only where a tool fuzzing may call requires nothing).
    assert ALL_PROBES - set(result.sent) <= {"arguments-omitted"}


def test_raw_replies_never_reach_the_sdk_and_strays_are_still_anomalies() -> None:
    """Over stdio a raw request's reply is taken off stdout by its id: the SDK session goes on; a
    reply with an id nobody sent is a wrong-id anomaly, an invalid one is judged as such."""

    async def body() -> None:
        async with open_connection(ServerSettings.of(stdio(HOSTILE))) as connection:
            request = {"jsonrpc": "2.0", "method": "tools/call"}
            ok = await send_raw(
                connection, {**request, "id": "raw-1", "params": {"name": "misbehave", "arguments": {"mode": "ok"}}}, 2
            )
            assert ok.status is OutcomeStatus.OK and ok.text == "fine" and ok.anomalies == ()
            after = await call_tool(connection, "misbehave", {"mode": "ok", "echo": "sdk"}, 2)
            assert after.status is OutcomeStatus.OK and after.text == "sdk" and after.anomalies == ()
            # hostile.py answers "wrong_id" with the id + 1000.
            wrong = await send_raw(
                connection, {**request, "id": 7, "params": {"name": "misbehave", "arguments": {"mode": "wrong_id"}}}, 1
            )
            assert wrong.status is OutcomeStatus.TIMEOUT and wrong.after_timeout is AfterTimeout.ALIVE
            assert [a.kind for a in wrong.anomalies] == [AnomalyKind.WRONG_ID]
            [unanswered] = judge("unknown-method", wrong, REDACT)
            assert unanswered.signature == ("probe", "unknown-method", "unanswered")
            # "invalid" answers with neither result nor error.
            invalid = await send_raw(
                connection, {**request, "id": 8, "params": {"name": "misbehave", "arguments": {"mode": "invalid"}}}, 2
            )
            assert [a.kind for a in invalid.anomalies] == [AnomalyKind.INVALID_MESSAGE]
            assert [o.signature[2] for o in judge("unknown-tool", invalid, REDACT)] == ["invalid-reply"]
            # A notification waits briefly for nothing.
            quiet = await send_raw(connection, {"jsonrpc": "2.0", "method": "notifications/x"}, 1)
            assert quiet.status is OutcomeStatus.OK and quiet.payload == "" and quiet.anomalies == ()
            # An exit while a raw request is pending is a death with its status and stderr.
            died = await send_raw(
                connection, {**request, "id": 9, "params": {"name": "misbehave", "arguments": {"mode": "exit"}}}, 2
            )
            assert died.status is OutcomeStatus.CLOSED and died.exit_code == 3 and "panic: exiting" in died.stderr

    anyio.run(body)


def test_a_banner_replays_on_a_fresh_server() -> None:
    """The banner's repro is a harmless request: sent on any fresh server, its outcome carries what
    the server wrote before its first reply, and the judge sees the same finding."""

    async def body() -> list[Any]:
        config = stdio(BREAKER)
        async with open_connection(ServerSettings.of(config)) as connection:
            message = {"jsonrpc": "2.0", "id": "fuzzgate-probe-startup-banner", "method": "tools/list", "params": {}}
            outcome = await send_probe(connection, config.target, BANNER, message)
        return judge(BANNER, outcome, REDACT)

    [observation] = anyio.run(body)
    assert observation.signature == ("probe", BANNER, "non_json")


def test_what_a_raw_server_gets_wrong_is_found_once_and_a_tools_own_bug_is_left_to_fuzzing() -> None:
    """command_injector.py reads no request it does not know: it never answers an unknown tool or
    a numeric name, and answers a response as if it were a request. Its first tool answers any call
    with a stack trace, `arguments: {}` included: that is the tool's bug (fuzzing reports it), not
    an omitted `arguments`'s."""
    result, banner = run_round(stdio(SERVERS / "command_injector.py"))
    assert banner is None and result.restart is None
    assert found(result) == {
        "name-number": (Kind.PROTOCOL_ERROR, "unanswered"),
        "unknown-tool": (Kind.PROTOCOL_ERROR, "unanswered"),
        "unsolicited-response": (Kind.PROTOCOL_ERROR, "answered-notification"),
    }
