"""`fuzzgate report` end to end: a store filled the way workers fill it, the real CLI, and the page
opened in a real headless Chromium. The page must load with no console message at all (no error,
no uncaught exception, no Content-Security-Policy refusal), show every finding with its repro
command, keep hostile text as text, draw its plots, and its buttons must work when clicked.

One browser serves the module's tests (each tab's problems are its own); a page that fails on
purpose proves the detector sees what it must.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fuzzgate.model.commands import store_repro_command
from fuzzgate.report.html_assets import SCRIPT
from fuzzgate.store.set_directory import SetDirectoryDatabase
from fuzzgate.store.shared import SharedStore
from tests.e2e.conftest import fuzzgate
from tests.report.chromium import Chromium, chromium, file_url
from tests.report.store_factory import FINDINGS, HOSTILE_MESSAGE, SVG_BREAKER, TARGET, TOKEN, fill

pytestmark = pytest.mark.e2e

ALLOWED_TAGS = {
    *("html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3", "h4", "p", "span"),
    *("code", "b", "div", "button", "nav", "a", "section", "table", "thead", "tbody", "tr", "th", "td"),
    *("figure", "figcaption", "svg", "line", "text", "path", "circle", "article", "dl", "dt", "dd"),
    *("pre", "details", "summary", "ul", "li", "script"),
}
"""Every element the page draws; anything else came from the store's text."""


@pytest.fixture(scope="module")
def browser() -> Iterator[Chromium]:
    with chromium() as running:
        yield running


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


def test_detector_sees_errors_exceptions_and_blocked_loads(browser: Chromium, tmp_path: Path) -> None:
    """The negative control: without it, a clean console could mean the detector sees nothing."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; script-src 'unsafe-inline'\">"
        "<title>bad</title></head><body><p>x</p><img src='https://example.invalid/pixel.png'>"
        "<script>console.warn('deliberate'); undefinedFunction();</script></body></html>"
    )
    tab = browser.open(file_url(bad))
    problems = "\n".join(tab.problems)
    assert "console.warning: deliberate" in problems
    assert "uncaught: ReferenceError: undefinedFunction is not defined" in problems
    assert "Content Security Policy" in problems
    with pytest.raises(AssertionError, match="boom"):
        tab.evaluate("(() => { throw new Error('boom'); })()")


def test_page_loads_clean_and_shows_every_finding(browser: Chromium, page: Path) -> None:
    tab = browser.open(file_url(page))
    assert tab.problems == []
    dom = tab.dom()
    # The page's one script ran (it set the count lines), and nothing from the store became an element.
    scripts = dom.find("script")
    assert len(scripts) == 1 and scripts[0].text == SCRIPT
    assert [e.text for e in dom.find("p", "shown")] == ["4 of 4 shown", "1 of 1 shown"]
    assert dom.tags() <= ALLOWED_TAGS
    assert all(not any(name.startswith("on") for name in e.attrs) for e in dom.elements)
    # Hostile text is text, where it belongs; the token is redacted.
    messages = [e.text for e in dom.find("p", "message")]
    assert HOSTILE_MESSAGE in messages
    assert any(SVG_BREAKER in m and "[REDACTED]" in m for m in messages)
    assert all(TOKEN not in e.text for e in dom.elements)
    assert "w-two<script>" in [e.text for e in dom.find("code")]
    assert any(e.text == "host<b>b</b>" for e in dom.find("td"))
    assert TARGET in [e.text for e in dom.find("code")]
    # Every finding, each once, with its fingerprint and repro command.
    articles = dom.find("article", "finding")
    assert sorted(a.attrs["data-state"] or "" for a in articles) == sorted(
        ["confirmed", "flaky", "unconfirmed", "seen", "confirmed"]
    )
    codes = [e.text for e in dom.find("code")]
    commands = [e.text for e in dom.find("code", "command")]
    store = str(page.parent.parent / "store")
    for found in FINDINGS.values():
        assert found.fingerprint in codes
        assert store_repro_command(found, store) in commands
    # A finding no command line can hold is replayed by fingerprint from this store.
    assert sum(command.endswith(f" --store {store}") for command in commands) >= 1
    assert len(dom.find("button", "copy")) == 5
    # The plots: three per target, each a stepped path on axes with labels; the second target has
    # findings but no statistics, so only its findings plot has a line.
    assert len(dom.find("svg", "chart")) == 6
    paths = [p.attrs["d"] or "" for p in dom.find("path", "line")]
    assert len(paths) == 4
    assert all(d.startswith("M") and d.count("H") > 5 and d.count("V") > 5 for d in paths[:2])
    assert [e.text for e in dom.find("text", "empty")] == ["nothing recorded yet"] * 2
    labels = [e.text for e in dom.find("text", "axis-label")]
    assert labels.count("time (UTC)") == 6 and "behaviours" in labels
    # The browser lays the plots out (an SVG it could not parse would have no size).
    sizes = tab.evaluate("[...document.querySelectorAll('svg.chart')].map(s => s.getBBox().width > 100)")
    assert sizes == [True] * 6


def test_buttons_filter_and_copy(browser: Chromium, page: Path) -> None:
    tab = browser.open(file_url(page))
    shown = "[...document.querySelectorAll('article.finding')].filter(a => !a.hidden).map(a => a.dataset.state)"
    tab.evaluate("document.querySelector('button.filter[data-state=\"flaky\"]').click()")
    assert tab.evaluate(shown) == ["flaky"]
    assert tab.evaluate("[...document.querySelectorAll('p.shown')].map(p => p.textContent)") == [
        "1 of 4 shown",
        "0 of 1 shown",
    ]
    assert tab.evaluate("window.location.hash") == "#state=flaky"
    tab.evaluate("document.querySelector('button.filter[data-state=\"all\"]').click()")
    assert len(tab.evaluate(shown)) == 5
    # Copy: the clipboard gets the command exactly, or (where the browser refuses) it is selected.
    browser.call("Browser.grantPermissions", {"permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]})
    first = tab.evaluate("document.querySelector('code.command').textContent")
    label = tab.evaluate(
        "(() => { const b = document.querySelector('button.copy'); b.click();"
        " return new Promise(done => { const t0 = Date.now(); (function wait() {"
        " if (b.textContent !== 'Copy' || Date.now() - t0 > 10000) done(b.textContent); else setTimeout(wait, 20);"
        " })(); }); })()"
    )
    assert label == "Copied"
    assert tab.evaluate("navigator.clipboard.readText()") == first
    assert first in {store_repro_command(f, str(page.parent.parent / "store")) for f in FINDINGS.values()}
    assert tab.problems == []


def test_state_in_the_fragment_filters_on_load(browser: Chromium, page: Path) -> None:
    tab = browser.open(file_url(page, "state=unconfirmed"))
    assert tab.problems == []
    dom = tab.dom()
    shown = [a.attrs["data-state"] for a in dom.find("article", "finding") if "hidden" not in a.attrs]
    assert shown == ["unconfirmed"]
    pressed = [b.attrs["data-state"] for b in dom.find("button", "filter") if b.attrs.get("aria-pressed") == "true"]
    assert pressed == ["unconfirmed"]


def test_empty_store_page_loads_clean(browser: Chromium, tmp_path: Path) -> None:
    store_dir = tmp_path / "empty-store"
    store_dir.mkdir()
    out = tmp_path / "report.html"
    run = fuzzgate("report", "--store", str(store_dir), "--out", str(out), cwd=tmp_path)
    assert run.code == 0, run.stderr
    tab = browser.open(file_url(out))
    assert tab.problems == []
    dom = tab.dom()
    assert any(e.text.startswith("Nothing in this store yet") for e in dom.find("p", "empty-page"))
    assert not dom.find("article")
