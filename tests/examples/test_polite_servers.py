"""Smoke tests of the servers whose bugs answer politely (tests/servers/polite.py and
surrogate_dropper.py), with the plain SDK client over real stdio and no fuzzgate involved.

Each planted bug must really have its effect (a file read or a folder made outside the root, a file
an injected option or shell command created, a request never answered and a death on the next one,
an abort after a sequence of calls), and each clean look-alike must not: that is what makes them
worth fuzzing. The SDK client cannot send a lone surrogate (it serializes with pydantic, which
refuses it), so those requests go over a raw pipe.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent

SERVERS = Path(__file__).resolve().parents[1] / "servers"
POLITE = SERVERS / "polite.py"
DROPPER = SERVERS / "surrogate_dropper.py"
CANARY = "fzg-polite-canary-41c9"
LONE_SURROGATE_CALL = (
    '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"%s","arguments":{"%s":"x\\ud800y"}}}'
)
DEADLINE_S = 60
"""Only a guard against a hung test: nothing here measures time."""

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "root"
    path.mkdir()
    return path


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory beside the root holding a canary: only a bug reaches it."""
    path = tmp_path / "outside"
    path.mkdir()
    (path / "canary.txt").write_text(f"{CANARY}\n")
    return path


def tree(path: Path) -> set[str]:
    return {p.relative_to(path).as_posix() for p in path.rglob("*")}


@asynccontextmanager
async def polite(root: Path, stderr: Path | None = None) -> AsyncIterator[Client]:
    params = StdioServerParameters(command=sys.executable, args=[str(POLITE), "--root", str(root)], cwd=root)
    if stderr is None:
        async with Client(params) as client:
            yield client
        return
    with stderr.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            yield client


def text_of(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


def is_connection_closed(exc: BaseException) -> bool:
    if isinstance(exc, BaseExceptionGroup):
        return any(is_connection_closed(inner) for inner in exc.exceptions)
    return isinstance(exc, MCPError) and exc.error.code == -32000


# ---------------------------------------------------------------------------------------- scope


async def test_read_note_returns_a_file_outside_the_root(root: Path, outside: Path) -> None:
    async with polite(root) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        by_climbing = await client.call_tool("read_note", {"path": "../outside/canary.txt"})
        by_absolute = await client.call_tool("read_note", {"path": str(outside / "canary.txt")})
        inside = await client.call_tool("read_note", {"path": "welcome.md"})
    assert tools == {
        "read_note", "init_project", "diff_files", "greet", "create_item", "delete_item", "get_item",
        "write_note", "echo", "read_note_safe",
    }  # fmt: skip
    for result in (by_climbing, by_absolute):
        assert not result.is_error
        assert CANARY in text_of(result)
    assert text_of(inside).startswith("# Welcome")


async def test_read_note_safe_refuses_what_is_outside(root: Path, outside: Path) -> None:
    async with polite(root) as client:
        refused = [
            await client.call_tool("read_note_safe", {"path": path})
            for path in ("../outside/canary.txt", str(outside / "canary.txt"), "a/../../outside/canary.txt")
        ]
        inside = await client.call_tool("read_note_safe", {"path": "welcome.md"})
    for result in refused:
        assert result.is_error
        assert CANARY not in text_of(result)
    assert not inside.is_error and text_of(inside).startswith("# Welcome")


async def test_init_project_makes_folders_outside_the_root(root: Path, outside: Path) -> None:
    async with polite(root) as client:
        climbing = await client.call_tool("init_project", {"path": "../outside/climbed"})
        absolute = await client.call_tool("init_project", {"path": str(outside / "absolute" / "deep")})
        inside = await client.call_tool("init_project", {"path": "alpha/beta"})
    assert not climbing.is_error and not absolute.is_error and not inside.is_error
    assert (outside / "climbed").is_dir()
    assert (outside / "absolute" / "deep").is_dir()
    assert (root / "alpha" / "beta").is_dir()


async def test_write_note_writes_only_inside_the_root(root: Path, outside: Path) -> None:
    before = tree(outside)
    async with polite(root) as client:
        refused = [
            await client.call_tool("write_note", {"path": path, "text": "x"})
            for path in ("../outside/w.md", str(outside / "w.md"), "sub/../../outside/w.md", ".")
        ]
        written = await client.call_tool("write_note", {"path": "sub/note.md", "text": "kept"})
    assert all(result.is_error for result in refused)
    assert not written.is_error
    assert (root / "sub" / "note.md").read_text() == "kept"
    assert tree(outside) == before


# ------------------------------------------------------------------------------------ injection


async def test_diff_files_passes_an_injected_option_to_git(root: Path, outside: Path) -> None:
    injected = outside / "by-option"
    async with polite(root) as client:
        await client.call_tool("write_note", {"path": "draft.md", "text": "# Draft\n"})
        diff = await client.call_tool("diff_files", {"target": "draft.md"})
        await client.call_tool("diff_files", {"target": f"--output={injected}"})
        climbing = await client.call_tool("diff_files", {"target": "../outside/canary.txt"})
    assert not diff.is_error and "-# Draft" in text_of(diff) and "+# Title" in text_of(diff)
    assert injected.is_file()  # git parsed the target as its --output option and wrote there
    assert climbing.is_error and CANARY not in text_of(climbing)  # an injection, not a traversal


async def test_greet_runs_shell_syntax(root: Path, outside: Path) -> None:
    fragments = {
        "semicolon": "x; touch {}",
        "substitution": "$(touch {})",
        "backticks": "`touch {}`",
        "pipe": "x | touch {}",
        "and": "x && touch {}",
    }
    async with polite(root) as client:
        plain = await client.call_tool("greet", {"name": "Ada"})
        for name, fragment in fragments.items():
            await client.call_tool("greet", {"name": fragment.format(outside / name)})
    assert text_of(plain) == "hello Ada"
    assert {name for name in fragments if (outside / name).is_file()} == set(fragments)


async def test_echo_only_echoes(root: Path, outside: Path) -> None:
    payloads = [f"--output={outside / 'e1'}", f"$(touch {outside / 'e2'})", f"x; touch {outside / 'e3'}"]
    before = tree(outside)
    async with polite(root) as client:
        replies = [await client.call_tool("echo", {"text": payload}) for payload in payloads]
    assert [text_of(reply) for reply in replies] == payloads
    assert tree(outside) == before


# ------------------------------------------------------------------------------------- stateful


async def test_items_live_until_deleted(root: Path) -> None:
    async with polite(root) as client:
        first = await client.call_tool("create_item", {"name": "bolt"})
        second = await client.call_tool("create_item", {"name": "nut"})
        missing = await client.call_tool("get_item", {"id": 50})
        missing_delete = await client.call_tool("delete_item", {"id": 50})
        deleted = await client.call_tool("delete_item", {"id": 1})
        kept = await client.call_tool("get_item", {"id": 2})
    assert first.structured_content == {"id": 1, "name": "bolt"}
    assert second.structured_content == {"id": 2, "name": "nut"}
    assert missing.is_error and missing_delete.is_error  # never created: a plain tool error
    assert not deleted.is_error
    assert kept.structured_content == {"id": 2, "name": "nut"}


@pytest.mark.parametrize(("tool", "function"), [("get_item", "items_get"), ("delete_item", "items_delete")])
async def test_a_call_after_delete_kills_the_server(root: Path, tmp_path: Path, tool: str, function: str) -> None:
    stderr = tmp_path / "stderr.txt"
    with pytest.raises((MCPError, BaseExceptionGroup)) as caught:
        async with polite(root, stderr) as client:
            await client.call_tool("create_item", {"name": "bolt"})
            await client.call_tool("delete_item", {"id": 1})
            await client.call_tool(tool, {"id": 1})
    assert is_connection_closed(caught.value)
    assert f"{function}: Assertion `slot->live' failed." in stderr.read_text()


# ------------------------------------------------------------------------------ lone surrogates


def raw_session(
    argv: list[str], cwd: Path, lines: list[str], *, replies_expected: int
) -> tuple[list[dict[str, Any]], int | None, str]:
    """Send `lines` after the handshake and read replies until `replies_expected` have come or stdout
    ends; only then close stdin. Closing it right after writing raced the server: an SDK server that
    reads EOF may end its session before answering requests still in flight, so under load the last
    reply was sometimes never written. Returns (replies, exit code or None if still running, stderr)."""
    proc = subprocess.Popen(
        argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    handshake = [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "smoke", "version": "0"}}}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]  # fmt: skip
    replies: list[dict[str, Any]] = []
    enough = threading.Event()
    stderr_lines: list[str] = []

    def read_replies() -> None:
        for line in proc.stdout:  # type: ignore[union-attr]
            if line.strip():
                replies.append(json.loads(line))
                if len(replies) >= replies_expected:
                    enough.set()
        enough.set()

    readers = [
        threading.Thread(target=read_replies, daemon=True),
        threading.Thread(target=lambda: stderr_lines.extend(proc.stderr), daemon=True),  # type: ignore[arg-type]
    ]
    for reader in readers:
        reader.start()
    try:
        proc.stdin.write("\n".join([*handshake, *lines]) + "\n")
        proc.stdin.flush()
        enough.wait(DEADLINE_S)
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.close()
        proc.wait(timeout=DEADLINE_S)
    except BrokenPipeError:
        proc.wait(timeout=DEADLINE_S)
    finally:
        proc.kill()
        proc.wait()
        for reader in readers:
            reader.join(DEADLINE_S)
    return replies, proc.returncode, "".join(stderr_lines)


async def test_surrogate_dropper_answers_plain_calls(root: Path) -> None:
    params = StdioServerParameters(command=sys.executable, args=[str(DROPPER), "--root", str(root)], cwd=root)
    async with Client(params) as client:
        [tool] = (await client.list_tools()).tools
        result = await client.call_tool("set_title", {"title": "Quarterly report"})
    assert tool.name == "set_title"
    assert not result.is_error
    assert (root / "title.txt").read_text() == "Quarterly report"


def test_surrogate_dropper_never_answers_then_dies_on_the_next_request(root: Path) -> None:
    replies, code, err = raw_session(
        [sys.executable, str(DROPPER), "--root", str(root)],
        root,
        [
            json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
            LONE_SURROGATE_CALL % ("set_title", "title"),
            json.dumps({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1}}),
            json.dumps({"jsonrpc": "2.0", "id": 4, "method": "ping"}),
            json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}),
        ],
        replies_expected=5,
    )
    assert [reply["id"] for reply in replies] == [1, 2]  # nothing for 3, and dead before 4
    assert code == 1
    assert "Traceback (most recent call last)" in err and "UnicodeEncodeError" in err


def test_an_sdk_server_drops_a_lone_surrogate_request_but_stays_up(root: Path) -> None:
    """What mcp 2.3 does itself (polite.py is an ordinary MCPServer): the request with the escape
    gets no reply at all, not even a parse error, and the next request is answered. A fuzzer's
    oracle for unanswered requests sees this on every SDK server."""
    replies, code, _ = raw_session(
        [sys.executable, str(POLITE), "--root", str(root)],
        root,
        [LONE_SURROGATE_CALL % ("echo", "text"), json.dumps({"jsonrpc": "2.0", "id": 4, "method": "ping"})],
        replies_expected=2,
    )
    assert [reply.get("id") for reply in replies] == [1, 4]
    assert code == 0  # it exits normally when stdin closes
