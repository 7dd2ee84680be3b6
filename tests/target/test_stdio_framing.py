"""fuzzgate's own stdio framing and process supervision against a raw, hostile server."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest

from fuzzgate.config.model import Config, TargetConfig, TargetKind
from fuzzgate.config.views import ServerSettings
from fuzzgate.model.errors import TargetError
from fuzzgate.model.outcome import AnomalyKind, OutcomeStatus
from fuzzgate.target.call import call_tool
from fuzzgate.target.connection import open_connection

HOSTILE = Path(__file__).resolve().parents[1] / "servers" / "hostile.py"


def config(*flags: str, startup_ms: int = 10000) -> Config:
    return Config(
        target=TargetConfig(kind=TargetKind.STDIO, command=sys.executable, args=(str(HOSTILE), *flags)),
        startup_timeout_ms=startup_ms,
    )


def _call(mode: str, timeout: float = 2.0):  # type: ignore[no-untyped-def]
    async def body():  # type: ignore[no-untyped-def]
        async with open_connection(ServerSettings.of(config())) as conn:
            outcome = await call_tool(conn, "misbehave", {"mode": mode}, timeout)
            pid = conn.process.pid if conn.process else None
        return outcome, pid

    return anyio.run(body)


def _gone(pid: int | None) -> bool:
    assert pid is not None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_ok_call_and_process_reaped() -> None:
    outcome, pid = _call("ok")
    assert outcome.status is OutcomeStatus.OK and outcome.text == "fine" and outcome.anomalies == ()
    assert _gone(pid)


def test_non_json_line_is_an_anomaly_and_the_session_goes_on() -> None:
    outcome, _ = _call("garbage")
    assert outcome.status is OutcomeStatus.OK
    assert [a.kind for a in outcome.anomalies] == [AnomalyKind.NON_JSON]


def test_wrong_id_is_an_anomaly_not_a_silent_hang() -> None:
    outcome, _ = _call("wrong_id", timeout=1.0)
    assert outcome.status is OutcomeStatus.TIMEOUT
    assert [a.kind for a in outcome.anomalies] == [AnomalyKind.WRONG_ID]


def test_invalid_message_is_an_anomaly() -> None:
    outcome, _ = _call("invalid", timeout=1.0)
    assert AnomalyKind.INVALID_MESSAGE in [a.kind for a in outcome.anomalies]


def test_exit_during_call_is_closed_with_status_and_stderr() -> None:
    outcome, pid = _call("exit")
    assert outcome.status is OutcomeStatus.CLOSED and outcome.exit_code == 3
    assert "panic: exiting" in outcome.stderr
    assert _gone(pid)


def test_server_dying_at_start_is_a_target_error_with_its_stderr() -> None:
    async def body() -> None:
        async with open_connection(ServerSettings.of(config("--die-at-start"))):
            pass

    with pytest.raises(TargetError) as info:
        anyio.run(body)
    assert "could not start" in info.value.message and "status 4" in info.value.message
    assert "missing DATABASE_URL" in (info.value.detail or "")


def test_server_that_never_initializes_times_out() -> None:
    async def body() -> None:
        async with open_connection(ServerSettings.of(config("--never-initialize", startup_ms=1500))):
            pass

    with pytest.raises(TargetError, match="no answer to initialize"):
        anyio.run(body)


def test_missing_command() -> None:
    cfg = Config(target=TargetConfig(kind=TargetKind.STDIO, command="/nonexistent/mcp-server"))

    async def body() -> None:
        async with open_connection(ServerSettings.of(cfg)):
            pass

    with pytest.raises(TargetError, match="command not found"):
        anyio.run(body)


def test_discovery_follows_every_page() -> None:
    from fuzzgate.target.discover import discover

    async def body() -> list[str]:
        async with open_connection(ServerSettings.of(config("--paginate"))) as conn:
            inventory = await discover(conn, 5.0)
        return [t.name for t in inventory.tools]

    assert anyio.run(body) == ["misbehave", "second_page_tool"]


def test_lone_surrogate_sent_and_echoed_back() -> None:
    async def body():  # type: ignore[no-untyped-def]
        async with open_connection(ServerSettings.of(config())) as conn:
            return await call_tool(conn, "misbehave", {"mode": "ok", "echo": "a\ud800b"}, 2.0)

    outcome = anyio.run(body)
    assert outcome.status is OutcomeStatus.OK
    assert outcome.text == "a\ud800b"


LATE = Path(__file__).resolve().parents[1] / "servers" / "late_replier.py"


def test_a_late_and_a_second_reply_to_a_cancelled_request_are_nobodys_anomaly() -> None:
    """The server answers the call fuzzgate gave up on (and cancelled) when the cancellation comes,
    and again during the next call: neither is an answer with a wrong id to that next call."""

    async def body():  # type: ignore[no-untyped-def]
        late = Config(target=TargetConfig(kind=TargetKind.STDIO, command=sys.executable, args=(str(LATE),)))
        async with open_connection(ServerSettings.of(late)) as conn:
            given_up = await call_tool(conn, "sleepy", {}, 0.5)
            follow = await call_tool(conn, "echo", {"text": "next"}, 5.0)
        return given_up, follow

    given_up, follow = anyio.run(body)
    assert given_up.status is OutcomeStatus.TIMEOUT
    assert follow.status is OutcomeStatus.OK and follow.text == "next"
    assert follow.anomalies == ()
