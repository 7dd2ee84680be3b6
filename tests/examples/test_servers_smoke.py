"""Smoke tests of the example servers with the plain SDK client, no fuzzgate involved.

Each clean tool answers valid arguments, and each planted bug in buggy_server.py shows its raw
symptom when triggered directly: a dead process, no answer, a RuntimeError on drifted output, a
traceback on stderr or in the result, a stray stdout line, a leaked secret. Every server is
started with a tag in its environment; the module's teardown fails if a tagged process outlived
the tests (and kills it).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

SERVERS = Path(__file__).resolve().parents[2] / "examples" / "servers"
RUN_TAG = f"smoke-{uuid.uuid4().hex}"
CANARY = "fzg-smoke-canary-7f3a"
GITHUB_TOKEN = re.compile(r"ghp_[A-Za-z0-9]{36}")
MODERN = "2026-07-28"

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def tagged_processes() -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                environ = (entry / "environ").read_bytes()
            except OSError:
                continue
            if f"FUZZGATE_SMOKE_TAG={RUN_TAG}".encode() in environ.split(b"\0"):
                found.append(int(entry.name))
    return found


@pytest.fixture(scope="module", autouse=True)
def no_server_outlives_the_tests() -> Iterator[None]:
    yield
    assert not (SERVERS / ".destructive-called").exists()
    if not Path("/proc/self/environ").exists():
        return
    deadline = time.monotonic() + 10
    while (survivors := tagged_processes()) and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in survivors:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert survivors == [], "example servers outlived the tests"


@pytest.fixture
def marker_dir(tmp_path: Path) -> Path:
    markers = tmp_path / "markers"
    markers.mkdir()
    return markers


def server_env(marker_dir: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", ""),
        "FUZZGATE_EXAMPLE_MARKER_DIR": str(marker_dir),
        "FUZZGATE_CANARY_SMOKE": CANARY,
        "FUZZGATE_SMOKE_TAG": RUN_TAG,
    }


def stdio(script: str, marker_dir: Path, *flags: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=[str(SERVERS / script), *flags], env=server_env(marker_dir), cwd=SERVERS
    )


@asynccontextmanager
async def connect(
    script: str, marker_dir: Path, *flags: str, mode: str = "auto", stderr: Path | None = None, **kwargs: Any
) -> AsyncIterator[Client]:
    """A connected client; with `stderr`, the server's stderr goes to that file."""
    params = stdio(script, marker_dir, *flags)
    if stderr is None:
        async with Client(params, mode=mode, **kwargs) as client:
            yield client
        return
    with stderr.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=mode, **kwargs) as client:
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


# ------------------------------------------------------------------------------------ clean server

CLEAN_CALLS: dict[str, dict[str, Any]] = {
    "slugify": {"text": "Hello, Wörld! Déjà vu", "separator": "_"},
    "lookup_user": {"username": "ada", "include": ["email", "groups"]},
    "schedule_meeting": {
        "title": "Sprint review",
        "start": "2026-03-02T14:00:00+01:00",
        "attendees": [
            {"name": "Ada", "email": "ada@example.org"},
            {"name": "Bob", "email": "b@x.io", "optional": True},
        ],
        "duration_minutes": 45,
        "room": "atlas",
    },
    "convert_temperature": {"value": 100, "from_unit": "celsius", "to_unit": "fahrenheit"},
    "paginate": {"items": [f"item {i}" for i in range(25)], "page": 3, "page_size": 10},
    "create_invoice": {
        "customer": {
            "name": "ACME SARL",
            "address": {"street": "1 rue de Rivoli", "city": "Paris", "postal_code": "75001", "country": "FR"},
        },
        "lines": [{"sku": "MUG-0001", "quantity": 3, "unit_price_cents": 990, "discount_percent": 10}],
    },
}


async def test_clean_server(marker_dir: Path) -> None:
    async with connect("clean_server.py", marker_dir) as client:
        assert client.protocol_version == MODERN
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == set(CLEAN_CALLS)
        assert all(tool.output_schema for tool in tools.values())
        results = {name: await client.call_tool(name, args) for name, args in CLEAN_CALLS.items()}
        refusals = [
            await client.call_tool("lookup_user", {"username": "nobody"}),
            await client.call_tool("paginate", {"items": "not a list", "page": 0}),
            await client.call_tool("convert_temperature", {"value": -500, "from_unit": "kelvin"}),
            await client.call_tool(
                "schedule_meeting",
                {"title": "t", "start": "9999-12-31T23:59:00Z", "attendees": [{"name": "a", "email": "a@b.cd"}]},
            ),
        ]
    for name, result in results.items():
        assert not result.is_error, (name, text_of(result))
        assert result.structured_content is not None, name
    assert results["slugify"].structured_content == {"slug": "hello_world_deja_vu", "words": 4}
    assert results["convert_temperature"].structured_content == {"value": 212.0, "unit": "fahrenheit"}
    assert results["paginate"].structured_content == {
        "items": ["item 20", "item 21", "item 22", "item 23", "item 24"],
        "page": 3,
        "total_pages": 3,
        "has_next": False,
    }
    assert results["create_invoice"].structured_content["total_cents"] == 3207  # 2673 + 20 % tax
    assert results["schedule_meeting"].structured_content["end"] == "2026-03-02T14:45:00+01:00"
    # Bad input: an isError result with a plain message, never the bare text of a crash.
    for result in refusals:
        assert result.is_error
        assert text_of(result).startswith("Error executing tool ") and ": " in text_of(result)
        assert "Traceback" not in text_of(result)


async def test_fast_server_pings(marker_dir: Path) -> None:
    async with connect("fast_server.py", marker_dir) as client:
        [tool] = (await client.list_tools()).tools
        assert tool.name == "ping_fast" and tool.output_schema is None
        assert text_of(await client.call_tool("ping_fast", {})) == "pong"
        assert text_of(await client.call_tool("ping_fast", {"n": 7})) == "pong 7"


# ------------------------------------------------------------------------------------ buggy server

BUGGY_TOOLS = {
    "format_label", "batch_export", "render_thumbnail", "sync_repository", "analyze_dependencies",
    "split_bill", "parse_config", "get_stock_level", "export_csv", "read_note", "debug_env",
    "delete_all_notes", "archive_project", "preview_cleanup", "echo", "add", "search",
}  # fmt: skip


async def test_buggy_server_listing_clean_tools_and_destructive_marker(marker_dir: Path) -> None:
    async with connect("buggy_server.py", marker_dir) as client:
        assert client.protocol_version == MODERN
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        resources = (await client.list_resources()).resources
        templates = (await client.list_resource_templates()).resource_templates
        prompts = (await client.list_prompts()).prompts
        index = await client.read_resource("notes://index")
        echo = await client.call_tool("echo", {"text": "hi", "uppercase": True})
        add = await client.call_tool("add", {"a": 2, "b": 40})
        search = await client.call_tool(
            "search", {"query": "blue", "filters": [{"field": "year", "op": "gt", "value": 1958}], "sort": "newest"}
        )
        bad_filter = await client.call_tool(
            "search", {"query": "blue", "filters": [{"field": "year", "op": "contains", "value": "x"}]}
        )
        preview = await client.call_tool("preview_cleanup", {"older_than_days": 90})
        safe_sizes = [
            await client.call_tool("render_thumbnail", {"image_id": 1, "size": size})
            for size in ("small", "medium", "large")
        ]
        markers_before = list(marker_dir.iterdir())
        await client.call_tool("delete_all_notes", {"confirm": True})
        await client.call_tool("archive_project", {"project": "roadmap"})

    assert set(tools) == BUGGY_TOOLS
    hints = {name: tool.annotations for name, tool in tools.items() if tool.annotations is not None}
    # destructiveHint is explicit everywhere: the spec's default for a tool without it is destructive.
    assert set(hints) == BUGGY_TOOLS and all(a.destructive_hint is not None for a in hints.values())
    destructive = {name for name, a in hints.items() if a.destructive_hint}
    assert destructive == {"delete_all_notes", "archive_project", "preview_cleanup"}
    assert [name for name in destructive if hints[name].read_only_hint] == ["preview_cleanup"]
    search_schema = tools["search"].input_schema
    assert "$defs" in search_schema and "Filter" in search_schema["$defs"]
    assert [r.uri for r in resources] == ["notes://index"]
    assert [t.uri_template for t in templates] == ["notes://note/{name}"]
    assert [p.name for p in prompts] == ["summarize_note"]
    assert "welcome" in getattr(index.contents[0], "text", "")
    assert text_of(echo) == "HI"
    assert add.structured_content == {"a": 2, "b": 40, "total": 42}
    assert search.structured_content is not None
    assert [item["id"] for item in search.structured_content["items"]] == ["item-04", "item-02"]
    assert bad_filter.is_error and "'contains' does not apply to year" in text_of(bad_filter)
    assert preview.structured_content == {"result": ["projects/launch-checklist.md", "welcome.md"]}
    assert not any(r.is_error for r in safe_sizes)
    assert markers_before == []
    assert (marker_dir / ".destructive-called").read_text().split() == ["delete_all_notes", "archive_project"]


async def test_buggy_server_nonfatal_bugs(marker_dir: Path, tmp_path: Path) -> None:
    stray_lines: list[Exception] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, Exception):
            stray_lines.append(message)

    stderr = tmp_path / "stderr.log"
    async with connect("buggy_server.py", marker_dir, stderr=stderr, message_handler=on_message) as client:
        divided = await client.call_tool("split_bill", {"total_cents": 1000, "people": 4})
        unhandled = await client.call_tool("split_bill", {"total_cents": 1000, "people": 0})
        parsed = await client.call_tool("parse_config", {"text": '{"debug": true}'})
        traced = await client.call_tool("parse_config", {"text": "{not json"})
        toml_error = await client.call_tool("parse_config", {"text": "[x", "format": "toml"})
        stock = await client.call_tool("get_stock_level", {"sku": "SKU-1001", "warehouse": "reno"})
        with pytest.raises(RuntimeError, match="Invalid structured content returned by tool get_stock_level"):
            await client.call_tool("get_stock_level", {"sku": "SKU-1001", "warehouse": "archive"})
        quiet_export = await client.call_tool("export_csv", {"table": "orders"})
        lines_before = len(stray_lines)
        noisy_export = await client.call_tool("export_csv", {"table": "orders", "progress": True})
        await client.call_tool("echo", {"text": "flush"})  # the stray line precedes this reply
        note = await client.call_tool("read_note", {"path": "welcome.md"})
        escaped = await client.call_tool("read_note", {"path": ".."})
        env_summary = await client.call_tool("debug_env", {})
        env_dump = await client.call_tool("debug_env", {"verbose": True})

    assert divided.structured_content == {"share_cents": 250, "remainder_cents": 0}
    assert unhandled.is_error and text_of(unhandled) == "Error executing tool split_bill"
    log = stderr.read_text()
    assert "ZeroDivisionError" in log and re.search(r'File ".*buggy_server\.py", line \d+, in split_bill', log)

    assert text_of(parsed) == "keys: debug"
    assert not traced.is_error and text_of(traced).startswith("Traceback (most recent call last):")
    assert toml_error.is_error and "Traceback" not in text_of(toml_error)

    assert stock.structured_content is not None and isinstance(stock.structured_content["quantity"], int)

    assert text_of(quiet_export) == text_of(noisy_export)
    assert lines_before == 0 and len(stray_lines) == 1

    assert not GITHUB_TOKEN.search(text_of(note))
    assert GITHUB_TOKEN.search(text_of(escaped))
    assert CANARY not in text_of(env_summary)
    assert f"FUZZGATE_CANARY_SMOKE={CANARY}" in text_of(env_dump)


async def test_buggy_server_hang_and_slow(marker_dir: Path) -> None:
    async with connect("buggy_server.py", marker_dir) as client:
        assert "fast sync done" in text_of(await client.call_tool("sync_repository", {"repository": "a/b"}))
        with anyio.move_on_after(2) as hang:
            await client.call_tool("sync_repository", {"repository": "a/b", "mode": "wait"})
        assert hang.cancelled_caught
        shallow = await client.call_tool("analyze_dependencies", {"package": "requests", "depth": 5})
        with anyio.move_on_after(1) as deep:
            await client.call_tool("analyze_dependencies", {"package": "requests", "depth": 6})
        assert deep.cancelled_caught
        # The server is still serving after both abandoned calls.
        assert text_of(await client.call_tool("echo", {"text": "still here"})) == "still here"
    assert not shallow.is_error


CRASHES: dict[str, tuple[str, dict[str, Any]]] = {
    "format_label NUL": ("format_label", {"template": "total\x00"}),
    "format_label %n": ("format_label", {"template": "%n%n"}),
    "batch_export 2**31": ("batch_export", {"record_count": 2**31}),
}


async def test_buggy_server_crashes(marker_dir: Path) -> None:
    # One server per crash, started side by side: each start costs about a second of CPU.
    failures: dict[str, BaseException | None] = {}

    async def trigger(label: str, tool: str, arguments: dict[str, Any]) -> None:
        failures[label] = None
        try:
            async with connect("buggy_server.py", marker_dir) as client:
                await client.call_tool(tool, arguments)
        except Exception as exc:  # the SDK wraps the MCPError in exception groups
            failures[label] = exc

    async with anyio.create_task_group() as group:
        for label, (tool, arguments) in CRASHES.items():
            group.start_soon(trigger, label, tool, arguments)
    closed = {label: exc is not None and is_connection_closed(exc) for label, exc in failures.items()}
    assert closed == dict.fromkeys(CRASHES, True), failures


async def test_buggy_server_flaky_crash_sometimes_crashes_and_sometimes_not(marker_dir: Path) -> None:
    outcomes: set[str] = set()
    for _ in range(20):  # a fresh server per crash; both outcomes show within 2-3 servers typically
        try:
            async with connect("buggy_server.py", marker_dir) as client:
                for _ in range(20):
                    await client.call_tool("render_thumbnail", {"image_id": 7, "size": "original"})
                    outcomes.add("answered")
        except Exception as exc:  # the process died mid-call
            assert is_connection_closed(exc), exc
            outcomes.add("crashed")
        if outcomes == {"answered", "crashed"}:
            break
    assert outcomes == {"answered", "crashed"}


async def test_buggy_server_legacy_speaks_only_the_handshake_era(marker_dir: Path) -> None:
    versions: dict[str, str] = {}
    failures: list[BaseException] = []

    async def session(mode: str) -> None:
        try:
            async with connect("buggy_server.py", marker_dir, "--legacy", mode=mode) as client:
                assert text_of(await client.call_tool("echo", {"text": "old"})) == "old"
                assert (await client.call_tool("split_bill", {"total_cents": 1, "people": 0})).is_error
                versions[mode] = client.protocol_version
        except Exception as exc:
            failures.append(exc)

    async with anyio.create_task_group() as group:
        for mode in ("auto", "legacy", MODERN):
            group.start_soon(session, mode)
    # auto probes server/discover, gets "Method not found" and falls back to initialize.
    assert set(versions) == {"auto", "legacy"}
    assert all(version in HANDSHAKE_PROTOCOL_VERSIONS for version in versions.values()), versions
    # A client pinned to 2026-07-28 skips the probe, and its first request is refused.
    [refused] = failures
    assert any(isinstance(e, MCPError) for e in leaves(refused)), refused


# -------------------------------------------------------------------------------------------- HTTP


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def wait_until_listening(proc: subprocess.Popen[bytes], port: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the HTTP server exited with {proc.returncode}")
        try:
            stream = await anyio.connect_tcp("127.0.0.1", port)
        except OSError:
            await anyio.sleep(0.1)
        else:
            await stream.aclose()
            return
    raise AssertionError(f"the HTTP server did not listen on port {port} within {timeout} s")


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)


@pytest.mark.parametrize(("flags", "expected"), [((), MODERN), (("--legacy",), "2025-11-25")])
async def test_buggy_server_over_http(flags: tuple[str, ...], expected: str, marker_dir: Path, tmp_path: Path) -> None:
    port = free_port()
    stdout = tmp_path / "stdout.log"
    with stdout.open("wb") as out, (tmp_path / "stderr.log").open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, str(SERVERS / "buggy_server.py"), "--transport", "http", "--port", str(port), *flags],
            env=server_env(marker_dir),
            cwd=SERVERS,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        try:
            await wait_until_listening(proc, port)
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                assert client.protocol_version == expected
                echoed = await client.call_tool("echo", {"text": "over http"})
                exported = await client.call_tool("export_csv", {"table": "products", "progress": True})
            assert text_of(echoed) == "over http"
            assert not exported.is_error
        finally:
            stop(proc)
    assert b"exporting" not in stdout.read_bytes()
