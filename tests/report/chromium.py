"""A real headless Chromium for the HTML report's tests: load a page, get the DOM after its scripts
ran and every console message it caused (errors, uncaught exceptions, Content-Security-Policy
refusals).

A missing browser fails the test (never skips it): install the Debian package `chromium`, or point
FUZZGATE_CHROMIUM at a binary.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest

BINARY_ENV = "FUZZGATE_CHROMIUM"
LOAD_TIMEOUT_S = 90.0

_CONSOLE = re.compile(r":CONSOLE[(:][^\]]*\]\s*(.*)")
"""Chromium's `--enable-logging=stderr` line for a console message, whatever its level:
`[pid:tid:time:INFO:CONSOLE:12] "Uncaught Error: boom", source: file:///... (12)`."""


def chromium_binary() -> str:
    found = os.environ.get(BINARY_ENV) or shutil.which("chromium") or "/usr/bin/chromium"
    if not os.access(found, os.X_OK):
        pytest.fail(
            f"chromium not found ({found}): install the Debian package chromium, or set {BINARY_ENV} "
            "(the HTML report is checked in a real browser)",
            pytrace=False,
        )
    return found


@dataclass(frozen=True, slots=True)
class PageLoad:
    dom: str
    """The DOM serialized after the page's scripts ran (`--dump-dom`)."""
    console: tuple[str, ...]
    """Every console message: `console.*` calls, uncaught exceptions, CSP refusals."""


def load(url: str) -> PageLoad:
    """Open `url` in headless Chromium with a throwaway profile; its own process group, killed on
    every way out."""
    with tempfile.TemporaryDirectory(prefix="fuzzgate-chromium-") as profile:
        argv = [
            chromium_binary(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
            url,
        ]
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(timeout=LOAD_TIMEOUT_S)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    if proc.returncode != 0:
        pytest.fail(f"chromium exited with {proc.returncode}: {err[-2000:]}", pytrace=False)
    console = tuple(m.group(1) for line in err.splitlines() if (m := _CONSOLE.search(line)))
    return PageLoad(out, console)


def file_url(path: Path, fragment: str = "") -> str:
    return path.resolve().as_uri() + (f"#{fragment}" if fragment else "")


@dataclass
class Element:
    tag: str
    attrs: dict[str, str | None]
    text: str = ""


class DomTree(HTMLParser):
    """Every element of a page with its attributes and the text directly inside it, in order."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[Element] = []
        self._open: list[Element] = []
        self.feed(page)
        self.close()

    _VOID = frozenset({"meta", "br", "hr", "img", "input", "link", "col", "area", "base", "wbr", "source"})

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

    def all_text(self) -> str:
        return "\n".join(e.text for e in self.elements)
