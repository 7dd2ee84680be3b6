"""A real headless Chromium for the HTML report's tests, driven over the DevTools protocol.

The protocol runs on a pipe (`--remote-debugging-pipe`: Chromium reads commands from fd 3 and
writes replies and events to fd 4, each a JSON message ending in a NUL byte), so no port is opened
and no websocket library is needed. A tab reports every console message (`console.*` of any
level), every uncaught exception and every browser log entry (a Content-Security-Policy refusal, a
blocked load) as a problem; the report's page must cause none.

A missing browser fails the test (never skips it): install the Debian package `chromium`, or point
FUZZGATE_CHROMIUM at a binary.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

BINARY_ENV = "FUZZGATE_CHROMIUM"
REPLY_TIMEOUT_S = 60.0
"""Generous: a loaded CI machine starts Chromium slowly. Only a hang waits this long."""


def chromium_binary() -> str:
    found = os.environ.get(BINARY_ENV) or shutil.which("chromium") or "/usr/bin/chromium"
    if not os.access(found, os.X_OK):
        pytest.fail(
            f"chromium not found ({found}): install the Debian package chromium, or set {BINARY_ENV} "
            "(the HTML report is checked in a real browser)",
            pytrace=False,
        )
    return found


class Chromium:
    """One headless Chromium with a throwaway profile, in its own process group, killed on close."""

    def __init__(self) -> None:
        self._profile = tempfile.TemporaryDirectory(prefix="fuzzgate-chromium-")
        self._log = open(Path(self._profile.name) / "stderr.log", "wb")  # noqa: SIM115 (closed in close())
        commands_read, self._commands = os.pipe()
        self._replies, replies_write = os.pipe()

        def onto_fds_3_and_4() -> None:
            # Copies first: either pipe end may itself be fd 3 or 4. dup2 onto another fd makes
            # the copy inheritable; every other descriptor is close-on-exec.
            read_copy, write_copy = os.dup(commands_read), os.dup(replies_write)
            os.dup2(read_copy, 3)
            os.dup2(write_copy, 4)

        argv = [
            chromium_binary(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            f"--user-data-dir={self._profile.name}",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=self._log,
            close_fds=False,
            # Runs between fork and exec; these tests start no threads that could hold a lock then.
            preexec_fn=onto_fds_3_and_4,
            start_new_session=True,
        )
        os.close(commands_read)
        os.close(replies_write)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._send("Browser.close")
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        for fd in (self._commands, self._replies):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._log.close()
        self._profile.cleanup()

    def _send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> int:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        return self._next_id

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._replies], [], [], max(left, 0))
            if not ready:
                self._fail("no reply from chromium in time")
            chunk = os.read(self._replies, 1 << 20)
            if not chunk:
                self._fail("chromium closed the protocol pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message

    def _fail(self, what: str) -> None:
        self._log.flush()
        tail = (Path(self._profile.name) / "stderr.log").read_bytes()[-3000:].decode(errors="replace")
        pytest.fail(f"{what}; chromium's stderr ends:\n{tail}", pytrace=False)

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        """Send one command and return its result; events that come first are kept in `events`."""
        wanted = self._send(method, params, session)
        deadline = time.monotonic() + REPLY_TIMEOUT_S
        while True:
            message = self._read(deadline)
            if message.get("id") == wanted:
                if "error" in message:
                    raise AssertionError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            self.events.append(message)

    def wait_for(self, method: str, session: str) -> None:
        deadline = time.monotonic() + REPLY_TIMEOUT_S
        seen = len(self.events)
        while not any(e.get("method") == method and e.get("sessionId") == session for e in self.events[seen:]):
            self.events.append(self._read(deadline))

    def open(self, url: str) -> Tab:
        """A new tab with `url` loaded (its load event fired), recording problems from the start."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            self.call(f"{domain}.enable", session=session)
        tab = Tab(self, session)
        self.call("Page.navigate", {"url": url}, session=session)
        self.wait_for("Page.loadEventFired", session)
        return tab


@dataclass
class Tab:
    browser: Chromium
    session: str

    @property
    def problems(self) -> list[str]:
        """Console messages, uncaught exceptions and log entries of this tab, in words."""
        out = []
        for event in self.browser.events:
            if event.get("sessionId") != self.session:
                continue
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled":
                values = " ".join(str(arg.get("value", arg.get("description", ""))) for arg in params.get("args", []))
                out.append(f"console.{params.get('type')}: {values}")
            elif method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                out.append(f"uncaught: {details.get('exception', {}).get('description') or details.get('text')}")
            elif method == "Log.entryAdded":
                entry = params.get("entry", {})
                out.append(f"log {entry.get('level')} ({entry.get('source')}): {entry.get('text')}")
        return out

    def evaluate(self, expression: str) -> Any:
        """The value of `expression` (awaited if a promise), run as if the user clicked: an
        exception fails the test."""
        result = self.browser.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True, "userGesture": True},
            session=self.session,
        )
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def dom(self) -> DomTree:
        return DomTree(str(self.evaluate("document.documentElement.outerHTML")))


@contextlib.contextmanager
def chromium() -> Iterator[Chromium]:
    browser = Chromium()
    try:
        yield browser
    finally:
        browser.close()


def file_url(path: Path, fragment: str = "") -> str:
    return path.resolve().as_uri() + (f"#{fragment}" if fragment else "")


@dataclass
class Element:
    tag: str
    attrs: dict[str, str | None]
    text: str = ""


class DomTree(HTMLParser):
    """Every element of a page with its attributes and the text directly inside it, in order."""

    _VOID = frozenset({"meta", "br", "hr", "img", "input", "link", "col", "area", "base", "wbr", "source"})

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[Element] = []
        self._open: list[Element] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, dict(attrs))
        self.elements.append(element)
        if tag not in self._VOID:
            self._open.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append(Element(tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        for index in range(len(self._open) - 1, -1, -1):
            if self._open[index].tag == tag:
                del self._open[index:]
                return

    def handle_data(self, data: str) -> None:
        if self._open:
            self._open[-1].text += data

    def tags(self) -> set[str]:
        return {e.tag for e in self.elements}

    def find(self, tag: str, cls: str | None = None) -> list[Element]:
        return [
            e for e in self.elements if e.tag == tag and (cls is None or cls in (e.attrs.get("class") or "").split())
        ]
