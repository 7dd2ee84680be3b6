"""`fuzzgate report` end to end: a store filled the way workers fill it, the real CLI, and the page
opened in a real headless Chromium. The page must load with no console message at all (no error,
no uncaught exception, no Content-Security-Policy refusal), show every finding with its repro
command, keep hostile text as text, and draw its plots.

Each browser load costs a second or two: the page is loaded twice (as is, and with a state filter
in its fragment, which runs the page's script) and the detector is proved once on a page that
fails on purpose.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgate.commands import repro_command
from fuzzgate.report.html_assets import SCRIPT
from fuzzgate.store.set_directory import SetDirectoryDatabase
from fuzzgate.store.shared import SharedStore
from tests.e2e.conftest import fuzzgate
from tests.report.chromium import DomTree, file_url, load
from tests.report.store_factory import FINDINGS, HOSTILE_MESSAGE, SVG_BREAKER, TARGET, TOKEN, fill

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The page of a filled directory store, written by the real CLI."""
    root = tmp_path_factory.mktemp("report")
    store_dir = root / "store"
    fill(SharedStore(SetDirectoryDatabase(store_dir), str(store_dir)))
    out = root / "site" / "report.html"
    run = fuzzgate("report", "--store", str(store_dir), "--out", str(out), cwd=root)
    assert run.code == 0, run.stderr
    assert "2 target(s), 5 finding(s), 2 worker(s)" in run.stdout
    assert out.is_file()
    return out


def test_detector_sees_errors_exceptions_and_blocked_loads(tmp_path: Path) -> None:
    """The negative control: without it, a clean console could mean the detector sees nothing."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; script-src 'unsafe-inline'\">"
        "<title>bad</title></head><body><p>x</p><img src='https://example.invalid/pixel.png'>"
        "<script>console.error('deliberate'); undefinedFunction();</script></body></html>"
    )
    loaded = load(file_url(bad))
    text = "\n".join(loaded.console)
    assert "deliberate" in text
    assert "Uncaught ReferenceError: undefinedFunction is not defined" in text
    assert "Content Security Policy" in text
    assert "<p>x</p>" in loaded.dom


def test_page_loads_clean_and_shows_every_finding(page: Path) -> None:
    loaded = load(file_url(page))
    assert loaded.console == ()
    dom = DomTree(loaded.dom)
    # The page's one script ran (it set the count line), and nothing from the store became an element.
    scripts = dom.find("script")
    assert len(scripts) == 1 and scripts[0].text == SCRIPT
    assert [e.text for e in dom.find("p", "shown")] == ["4 of 4 shown", "1 of 1 shown"]
    allowed = {
        *("html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3", "h4", "p", "span"),
        *("code", "b", "div", "button", "nav", "a", "section", "table", "thead", "tbody", "tr", "th", "td"),
        *("figure", "figcaption", "svg", "line", "text", "path", "circle", "article", "dl", "dt", "dd"),
        *("pre", "details", "summary", "ul", "li", "script"),
    }
    assert dom.tags() <= allowed
    assert not dom.find("img") and not dom.find("i")
    assert all(not any(name.startswith("on") for name in e.attrs) for e in dom.elements)
    # Hostile text is text, where it belongs.
    messages = [e.text for e in dom.find("p", "message")]
    assert HOSTILE_MESSAGE in messages
    assert any(SVG_BREAKER in m for m in messages)
    assert all(TOKEN not in e.text for e in dom.elements)
    assert any("[REDACTED]" in m for m in messages)
    assert "w-two<script>" in [e.text for e in dom.find("code")]
    assert any(e.text == "host<b>b</b>" for e in dom.find("td"))
    # Every finding, each once, with its fingerprint and repro command.
    articles = dom.find("article", "finding")
    assert len(articles) == 5
    assert sorted(a.attrs["data-state"] or "" for a in articles) == sorted(
        ["confirmed", "flaky", "unconfirmed", "seen", "confirmed"]
    )
    codes = [e.text for e in dom.find("code")]
    commands = [e.text for e in dom.find("code", "command")]
    for found in FINDINGS.values():
        assert found.fingerprint in codes
        assert repro_command(found) in commands
    assert len(dom.find("button", "copy")) == 5
    # The plots: three per target, each a stepped path on axes with labels; the second target has
    # findings but no statistics, so only its findings plot has a line.
    charts = dom.find("svg", "chart")
    assert len(charts) == 6
    paths = [p.attrs["d"] or "" for p in dom.find("path", "line")]
    assert len(paths) == 4
    assert all(d.startswith("M") and d.count("H") > 5 and d.count("V") > 5 for d in paths[:2])
    assert [e.text for e in dom.find("text", "empty")] == ["nothing recorded yet"] * 2
    labels = [e.text for e in dom.find("text", "axis-label")]
    assert labels.count("time (UTC)") == 6 and "behaviours" in labels
    assert TARGET in [e.text for e in dom.find("code")]


def test_state_filter_runs_in_the_browser(page: Path) -> None:
    loaded = load(file_url(page, "state=flaky"))
    assert loaded.console == ()
    dom = DomTree(loaded.dom)
    articles = dom.find("article", "finding")
    shown = [a.attrs["data-state"] for a in articles if "hidden" not in a.attrs]
    assert shown == ["flaky"]
    assert [e.text for e in dom.find("p", "shown")] == ["1 of 4 shown", "0 of 1 shown"]
    pressed = [b.attrs["data-state"] for b in dom.find("button", "filter") if b.attrs.get("aria-pressed") == "true"]
    assert pressed == ["flaky"]


def test_empty_store_page_loads_clean(tmp_path: Path) -> None:
    store_dir = tmp_path / "empty-store"
    store_dir.mkdir()
    out = tmp_path / "report.html"
    run = fuzzgate("report", "--store", str(store_dir), "--out", str(out), cwd=tmp_path)
    assert run.code == 0, run.stderr
    loaded = load(file_url(out))
    assert loaded.console == ()
    dom = DomTree(loaded.dom)
    assert any(e.text.startswith("Nothing in this store yet") for e in dom.find("p", "empty-page"))
    assert not dom.find("article")
