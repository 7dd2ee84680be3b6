"""The nested-condition benchmark server (bench/servers/nested.py) and its clean twin, through a real
SDK client over stdio, with no fuzzer: each planted bug's trigger records its ground truth and shows
its symptom, each near miss (all conditions but one) records nothing and is answered, and the clean
twin answers every trigger and records nothing. The benchmark's scores rest on these records.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent

from tests.e2e.conftest import ROOT

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

BENCH_SERVERS = ROOT / "bench" / "servers"
SERVICE_KEY = "AKIAJ3NESTEDPROXY7QX"
WAIT_S = 30
"""A guard around every call that must answer, so a broken server fails the test instead of hanging it."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


Call = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class Planted:
    symptom: str
    """"exception" (an isError result), "crash" (the process dies), "hang" (no answer), "secret"."""
    trigger: list[Call]
    """The calls that trigger the bug, in one server's life; the last one misbehaves."""
    near_misses: list[list[Call]] = field(default_factory=list)
    """Sequences that meet every condition but one."""


def proxy(auth: dict[str, Any] | None) -> dict[str, Any]:
    inner: dict[str, Any] = {"host": "proxy.internal", "port": 8080}
    if auth is not None:
        inner["auth"] = auth
    return {"settings": {"network": {"timeout_s": 10, "proxy": inner}}}


def segments(n: int, middle: dict[str, Any]) -> dict[str, Any]:
    items: list[dict[str, Any]] = [{"kind": "text", "weight": 2} for _ in range(n)]
    if n > 3:
        items[3] = middle
    return {"segments": items}


MEDIA = {"codec": "flac", "container": "mkv", "layout": "5.1", "lossless": True, "dither": False}

PLANTED: dict[str, Planted] = {
    "NST-1": Planted(
        "exception",
        [("render_theme", {"theme": "xylophone-7", "depth": 9})],
        [
            [("render_theme", {"theme": "xylophone-7", "depth": 8})],
            [("render_theme", {"theme": "xylophone", "depth": 9})],
        ],
    ),
    "NST-2": Planted(
        "crash",
        [("allocate_buffer", {"size": 4094, "aligned": False})],
        [
            [("allocate_buffer", {"size": 4093, "aligned": False})],
            [("allocate_buffer", {"size": 4099, "aligned": False})],
            [("allocate_buffer", {"size": 4098, "aligned": True})],
        ],
    ),
    "NST-3": Planted(
        "hang",
        [("encode_media", MEDIA)],
        [
            [("encode_media", {**MEDIA, key: other})]
            for key, other in (
                ("codec", "alac"),
                ("container", "mp4"),
                ("layout", "7.1"),
                ("lossless", False),
                ("dither", True),
            )
        ],
    ),
    "NST-4": Planted(
        "exception",
        [("layout_segments", segments(7, {"kind": "break", "weight": 0}))],
        [
            [("layout_segments", segments(6, {"kind": "break", "weight": 0}))],
            [("layout_segments", segments(8, {"kind": "break", "weight": 0}))],
            [("layout_segments", segments(7, {"kind": "rule", "weight": 0}))],
            [("layout_segments", segments(7, {"kind": "break", "weight": 1}))],
        ],
    ),
    "NST-5": Planted(
        "crash",
        [("set_profile", {"profile": "overdrive"}), ("run_batch", {"jobs": 51})],
        [
            [("run_batch", {"jobs": 100})],
            [("set_profile", {"profile": "overdrive", "threshold": 3}), ("run_batch", {"jobs": 50})],
            [("set_profile", {"profile": "overdriv"}), ("run_batch", {"jobs": 51})],
            [
                ("set_profile", {"profile": "overdrive"}),
                ("set_profile", {"profile": "eco"}),
                ("run_batch", {"jobs": 99}),
            ],
        ],
    ),
    "NST-6": Planted(
        "secret",
        [("connect_proxy", proxy({"scheme": "ntlm-legacy", "user": "svc"}))],
        [
            [("connect_proxy", proxy({"scheme": "ntlm", "user": "svc"}))],
            [("connect_proxy", proxy(None))],
            [("connect_proxy", {"settings": {"network": {"timeout_s": 10}}})],
            [("connect_proxy", {"settings": {"name": "ntlm-legacy"}})],
        ],
    ),
}


def records(truth: Path) -> list[dict[str, Any]]:
    if not truth.exists():
        return []
    return [json.loads(line) for line in truth.read_text().splitlines()]


def bugs_recorded(truth: Path) -> list[str]:
    return [str(r["bug"]) for r in records(truth) if "bug" in r]


@asynccontextmanager
async def connect(script: str, truth: Path, stderr: Path) -> AsyncIterator[Client]:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", ""), "BENCH_GROUND_TRUTH": str(truth)}
    params = StdioServerParameters(command=sys.executable, args=[str(BENCH_SERVERS / script)], env=env)
    with stderr.open("a") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="auto") as client:
            yield client


def text_of(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


def leaves(exc: BaseException) -> Iterator[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from leaves(inner)
    else:
        yield exc


def is_connection_closed(exc: BaseException) -> bool:
    return any(isinstance(e, MCPError) and e.error.code == -32000 for e in leaves(exc))


async def answered(client: Client, call: Call) -> CallToolResult:
    with anyio.fail_after(WAIT_S):
        return await client.call_tool(*call)


@pytest.mark.parametrize("bug", sorted(PLANTED))
async def test_a_trigger_records_its_bug_and_misbehaves(bug: str, tmp_path: Path) -> None:
    planted = PLANTED[bug]
    truth = tmp_path / "truth.jsonl"
    *before, last = planted.trigger
    outcome: CallToolResult | None = None
    failure: BaseException | None = None
    try:
        async with connect("nested.py", truth, tmp_path / "stderr.txt") as client:
            for call in before:
                assert not (await answered(client, call)).is_error
            if planted.symptom == "hang":
                with anyio.move_on_after(3) as waited:
                    await client.call_tool(*last)
                assert waited.cancelled_caught, "the call answered"
                # The server stays up: only that call hangs.
                assert not (await answered(client, ("render_theme", {"theme": "plain"}))).is_error
            else:
                outcome = await answered(client, last)
    except Exception as exc:  # the process died mid-call
        failure = exc
    assert bugs_recorded(truth) == [bug], (tmp_path / "stderr.txt").read_text()[-2000:]
    if planted.symptom == "crash":
        assert failure is not None and is_connection_closed(failure), failure
        return
    assert failure is None, failure
    if planted.symptom == "exception":
        assert outcome is not None and outcome.is_error
        assert "Error executing tool" in text_of(outcome)
        assert "Traceback" in (tmp_path / "stderr.txt").read_text()
    elif planted.symptom == "secret":
        assert outcome is not None and not outcome.is_error
        assert SERVICE_KEY in text_of(outcome)


@pytest.mark.parametrize("bug", sorted(PLANTED))
async def test_near_misses_record_nothing_and_are_answered(bug: str, tmp_path: Path) -> None:
    truth = tmp_path / "truth.jsonl"
    for sequence in PLANTED[bug].near_misses:
        async with connect("nested.py", truth, tmp_path / "stderr.txt") as client:
            for call in sequence:
                result = await answered(client, call)
                assert not result.is_error, (call, text_of(result))
                assert SERVICE_KEY not in text_of(result)
    assert records(truth) == []


async def test_the_clean_twin_handles_every_trigger(tmp_path: Path) -> None:
    truth = tmp_path / "truth.jsonl"
    async with connect("nested_clean.py", truth, tmp_path / "stderr.txt") as client:
        assert client.server_info is not None and client.server_info.name == "bench-nested-clean"
        for bug, planted in sorted(PLANTED.items()):
            for call in planted.trigger:
                result = await answered(client, call)
                text = text_of(result)
                assert SERVICE_KEY not in text
                # NST-1's look-alike refuses politely (a ToolError's own words); every other one answers.
                assert result.is_error == (bug == "NST-1"), (call, text)
                assert bug != "NST-1" or "at most 8 nesting levels" in text
    assert records(truth) == []
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text()
