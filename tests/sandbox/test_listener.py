"""The SSRF listener: what it answers and reports (pure parts), what fuzzgate reads of it, and the
listener really started in a jail: reachable from the server at every spelling of loopback,
through its redirect too, and gone with the jail."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fuzzgate.sandbox._jail_spec import Listen
from fuzzgate.sandbox._listener import answer, logged_path, page
from fuzzgate.sandbox.jail import jailed
from fuzzgate.sandbox.listener import (
    FILE_MARKER,
    HOSTS,
    PAGE_MARKER,
    UNREACHABLE_HOST,
    Listener,
    ListenerLog,
    Request,
    aimed,
    unreachable,
)
from fuzzgate.sandbox.removal import remove_tree
from fuzzgate.sandbox.workspace import Workspace, workdir_base

MARKER = "fzgurl-0123456789abcdef"


def test_the_logged_path_is_the_request_lines_and_printable() -> None:
    assert logged_path(b"GET /fzgurl-01/x?q=1 HTTP/1.1\r\nHost: a\r\n\r\n") == "/fzgurl-01/x?q=1"
    assert logged_path(b"GET /a\xff%b HTTP/1.1\r\n") == "/a%FF%25b"
    assert logged_path(b"garbage") is None
    assert logged_path(b"GET " + b"a" * 5000 + b" HTTP/1.1") == "a" * 1024


def test_pages_name_the_marker_and_redirects_lead_back() -> None:
    assert PAGE_MARKER + "0123456789abcdef" in page(f"/{MARKER}").decode()
    # A path without a marker gets a page all the same, naming none.
    assert PAGE_MARKER + "0" * 16 in page("/other").decode()
    redirect = answer(f"/{MARKER}/redirect", 20001).decode()
    assert redirect.startswith("HTTP/1.1 302 ")
    assert f"Location: http://127.0.0.1:20001/{MARKER}/redirect/followed\r\n" in redirect
    assert answer(f"/{MARKER}", 20001).startswith(b"HTTP/1.1 200 OK\r\n")


def test_requests_say_their_markers_and_whether_a_redirect_led_there() -> None:
    assert Request(f"/{MARKER}/redirect/followed").followed
    assert not Request(f"/{MARKER}/redirect").followed
    assert Request(f"/{MARKER}?x={MARKER}").markers() == [MARKER, MARKER]
    assert Request("/fzgurl-0123").markers() == []


def test_the_port_is_the_tokens_and_the_urls_spell_loopback() -> None:
    listener = Listener.for_token("abc")
    assert listener == Listener.for_token("abc")
    assert 20000 <= listener.port < 40000
    assert Listener.for_token("abd").port != listener.port or Listener.for_token("abe").port != listener.port
    urls = [listener.url(host, MARKER) for _, host in HOSTS]
    assert urls[1] == f"http://2130706433:{listener.port}/{MARKER}"
    assert urls[2] == f"http://[::1]:{listener.port}/{MARKER}"
    assert listener.url("127.0.0.1", MARKER, redirect=True).endswith(f"/{MARKER}/redirect")
    assert FILE_MARKER in listener.file_content


def test_without_a_listener_canary_urls_lead_nowhere() -> None:
    value = {
        "url": f"http://127.0.0.1:20001/{MARKER}",
        "nested": [f"see http://[::1]:20001/{MARKER}/redirect now", "http://127.0.0.1:8080/fzgother"],
    }
    assert unreachable(value) == {
        "url": f"http://{UNREACHABLE_HOST}/{MARKER}",
        "nested": [f"see http://{UNREACHABLE_HOST}/{MARKER}/redirect now", "http://127.0.0.1:8080/fzgother"],
    }


def test_a_string_without_the_marker_is_never_searched(monkeypatch: pytest.MonkeyPatch) -> None:
    # The pattern backtracks over every letter of a long string: 64 KiB of `A` took seconds.
    class Refusing:
        def sub(self, *args: object) -> str:
            raise AssertionError("searched a string that cannot hold a canary URL")

    monkeypatch.setattr("fuzzgate.sandbox.listener._CANARY_URL", Refusing())
    long = "A" * 65536
    assert unreachable({"path": long, "items": [long]}) == {"path": long, "items": [long]}


def test_a_canary_url_made_under_another_seed_is_aimed_at_this_listener() -> None:
    # A repro's URL names the port of the listener of the run that found it; a replay under another
    # seed (a baseline entry in a later run, `replay --tool` on another commit) has another one.
    value = {
        "url": f"http://127.0.0.1:20001/{MARKER}",
        "nested": [
            f"see http://[::1]:20001/{MARKER}/redirect now and http://2130706433:31000/{MARKER}",
            f"http://user@localhost:20001/{MARKER}",
            "http://127.0.0.1:8080/fzgother",
        ],
        f"http://127.0.0.1:20001/{MARKER}": 20001,
    }
    assert aimed(value, 34888) == {
        "url": f"http://127.0.0.1:34888/{MARKER}",
        "nested": [
            f"see http://[::1]:34888/{MARKER}/redirect now and http://2130706433:34888/{MARKER}",
            f"http://user@localhost:34888/{MARKER}",
            "http://127.0.0.1:8080/fzgother",
        ],
        f"http://127.0.0.1:34888/{MARKER}": 20001,
    }
    # A file:// canary and a URL without a port have no port to change.
    assert aimed(f"file:///tmp/x/{MARKER}", 34888) == f"file:///tmp/x/{MARKER}"
    assert aimed(f"http://127.0.0.1/{MARKER}", 34888) == f"http://127.0.0.1/{MARKER}"


def test_a_string_without_the_marker_is_never_searched_for_a_port(monkeypatch: pytest.MonkeyPatch) -> None:
    class Refusing:
        def sub(self, *args: object) -> str:
            raise AssertionError("searched a string that cannot hold a canary URL")

    monkeypatch.setattr("fuzzgate.sandbox.listener._CANARY_PORT", Refusing())
    long = "A" * 65536
    assert aimed({"path": long, "items": [long, 3, None]}, 34888) == {"path": long, "items": [long, 3, None]}


def test_the_log_reads_what_was_reported_since_a_mark() -> None:
    log = ListenerLog(20001)
    try:
        os.write(log.child_fd, b"/a\n/b")
        mark = log.mark()
        assert mark == 1
        os.write(log.child_fd, b"c\n/d\n")
        assert log.since(mark) == (Request("/bc"), Request("/d"))
        assert log.since(0)[0] == Request("/a")
        log.started()
        assert log.since(log.mark()) == ()
    finally:
        log.close()


# --- the listener in a jail ----------------------------------------------------------------------------


@pytest.fixture
def workspace() -> Iterator[Workspace]:
    area = Path(tempfile.mkdtemp(prefix="fuzzgate-listener-test-", dir=workdir_base()))
    (area / "project").mkdir()
    workspace = Workspace([area / "project"], "listener-test", isolate=True, cwd=area / "project")
    yield workspace
    workspace.close()
    remove_tree(area)


FETCH = """
import json, sys, urllib.request
out = {}
for url in sys.argv[1:]:
    try:
        out[url] = urllib.request.urlopen(url, timeout=10).read().decode()
    except Exception as exc:
        out[url] = type(exc).__name__
print(json.dumps(out))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux namespaces")
def test_a_jailed_server_reaches_the_listener_and_it_goes_with_the_jail(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in list(os.environ):
        if name.startswith("COVERAGE_"):
            monkeypatch.delenv(name)
    listener = Listener.for_token(workspace.token)
    urls = [listener.url(host, MARKER) for _, host in HOSTS]
    urls.append(listener.url("127.0.0.1", MARKER, redirect=True))
    layer = workspace.layer()
    read_end, write_end = os.pipe()
    command, args = jailed(
        sys.executable,
        ["-c", textwrap.dedent(FETCH), *urls],
        layer,
        scope=workspace.scope,
        listen=Listen(listener.port, write_end),
    )
    done = subprocess.run(
        [command, *args], capture_output=True, cwd=layer.cwd, timeout=60, start_new_session=True, pass_fds=(write_end,)
    )
    os.close(write_end)
    assert done.returncode == 0, done.stderr.decode()
    pages = json.loads(done.stdout)
    assert all(PAGE_MARKER + "0123456789abcdef" in pages[url] for url in urls), pages
    # The pipe ends when its last writer, the listener, is gone: it died with the jail.
    deadline = time.monotonic() + 30
    reported = b""
    while True:
        readable, _, _ = select.select([read_end], [], [], max(0.0, deadline - time.monotonic()))
        if not readable:
            pytest.fail("the listener outlived the jail")
        chunk = os.read(read_end, 65536)
        if not chunk:
            break
        reported += chunk
    os.close(read_end)
    paths = reported.decode().splitlines()
    assert paths == [f"/{MARKER}"] * len(HOSTS) + [f"/{MARKER}/redirect", f"/{MARKER}/redirect/followed"]
    with pytest.raises(ValueError, match="own network"):
        jailed(sys.executable, [], layer, scope=workspace.scope, network=True, listen=Listen(1, 1))


TRACE = """
import ctypes, errno, json, os
libc = ctypes.CDLL(None, use_errno=True)
results = []
for pid in sorted(int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid())):
    failed = libc.ptrace(16, pid, None, None) != 0  # PTRACE_ATTACH
    results.append(errno.errorcode[ctypes.get_errno()] if failed else "attached")
print(json.dumps(results))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux namespaces")
def test_the_server_cannot_trace_the_listener(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    # The listener runs as the server's user in its PID namespace; dumpable, the server attached to
    # it with ptrace and could have forged or hidden what it reports.
    for name in list(os.environ):
        if name.startswith("COVERAGE_"):
            monkeypatch.delenv(name)
    listener = Listener.for_token(workspace.token)
    layer = workspace.layer()
    read_end, write_end = os.pipe()
    command, args = jailed(
        sys.executable, ["-c", TRACE], layer, scope=workspace.scope, listen=Listen(listener.port, write_end)
    )
    done = subprocess.run(
        [command, *args], capture_output=True, cwd=layer.cwd, timeout=60, start_new_session=True, pass_fds=(write_end,)
    )
    os.close(write_end)
    os.close(read_end)
    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout) == ["EPERM"]
