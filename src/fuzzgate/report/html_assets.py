"""The HTML report's own style and script, and the Content-Security-Policy that lets only them run.

The policy names them by hash: the page loads nothing from anywhere, and a `<script>` or `<style>`
that got into the page some other way would not run.
"""

from __future__ import annotations

import base64
import hashlib

STYLE = """
:root { color-scheme: light dark; --fg: #1f2328; --muted: #59636e; --bg: #fff; --line: #d1d9e0;
  --panel: #f6f8fa; --accent: #0969da; --bad: #cf222e; --warn: #9a6700; --ok: #1a7f37; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --muted: #9198a1; --bg: #0d1117;
  --line: #3d444d; --panel: #151b23; --accent: #4493f8; --bad: #f85149; --warn: #d29922; --ok: #3fb950; } }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1100px; padding: 1rem 1.5rem 3rem; color: var(--fg); background: var(--bg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; }
h1 { font-size: 1.6rem; margin: .5rem 0; } h2 { border-bottom: 1px solid var(--line); padding-bottom: .3rem;
  margin-top: 2.5rem; } h3 { margin-top: 1.8rem; } h4 { margin: 0 0 .4rem; font-size: 1rem; }
code, pre { font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
code { overflow-wrap: anywhere; }
pre { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: .6rem .8rem;
  margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: 14px; }
th, td { border: 1px solid var(--line); padding: .25rem .6rem; text-align: left; vertical-align: top; }
th { background: var(--panel); } td.n { text-align: right; font-variant-numeric: tabular-nums; }
tr.total td { font-weight: 600; }
.muted, .note { color: var(--muted); } .empty-page { font-size: 1.1rem; padding: 2rem 0; }
.facts { display: flex; flex-wrap: wrap; gap: .4rem 1.4rem; margin: .4rem 0; }
.charts { display: flex; flex-wrap: wrap; gap: 1rem; }
.charts figure { margin: 0; } .charts figcaption { font-weight: 600; font-size: 14px; }
svg.chart { max-width: 100%; height: auto; background: var(--panel); border: 1px solid var(--line);
  border-radius: 6px; }
svg .grid { stroke: var(--line); stroke-width: 1; } svg .axis { stroke: var(--muted); stroke-width: 1; }
svg .tick, svg .axis-label, svg .empty { fill: var(--muted); font: 11px system-ui, sans-serif; }
svg .line { fill: none; stroke: var(--accent); stroke-width: 2; } svg .dot { fill: var(--accent); }
.filters { display: flex; flex-wrap: wrap; gap: .4rem; align-items: center; margin: .6rem 0; }
button { font: inherit; font-size: 13px; padding: .15rem .6rem; border: 1px solid var(--line);
  border-radius: 6px; background: var(--panel); color: var(--fg); cursor: pointer; }
button[aria-pressed="true"] { background: var(--accent); border-color: var(--accent); color: #fff; }
article.finding { border: 1px solid var(--line); border-left: 4px solid var(--muted); border-radius: 6px;
  padding: .7rem .9rem; margin: .8rem 0; }
article.state-confirmed { border-left-color: var(--bad); } article.state-flaky { border-left-color: var(--warn); }
article.state-unconfirmed { border-left-color: var(--accent); }
.badge { display: inline-block; border-radius: 1em; padding: 0 .55em; font-size: 12px; font-weight: 600;
  border: 1px solid currentColor; margin-right: .3em; }
.sev-critical, .sev-high, .st-confirmed { color: var(--bad); } .sev-medium, .st-flaky { color: var(--warn); }
.sev-low, .st-seen { color: var(--muted); } .st-unconfirmed { color: var(--accent); }
.message { white-space: pre-wrap; overflow-wrap: anywhere; margin: .3rem 0; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: .1rem .9rem; margin: .4rem 0; font-size: 14px; }
dl.meta dt { color: var(--muted); } dl.meta dd { margin: 0; overflow-wrap: anywhere; }
.repro { display: flex; gap: .5rem; align-items: flex-start; margin: .4rem 0; } .repro pre { flex: 1; }
.repro code { user-select: all; }
details > summary { cursor: pointer; color: var(--muted); }
[hidden] { display: none !important; }
"""

SCRIPT = """
(function () {
  "use strict";
  var STATES = ["all", "confirmed", "flaky", "unconfirmed", "seen"];
  function apply(state) {
    document.querySelectorAll("button.filter").forEach(function (button) {
      button.setAttribute("aria-pressed", String(button.dataset.state === state));
    });
    document.querySelectorAll("section.findings").forEach(function (section) {
      var shown = 0, total = 0;
      section.querySelectorAll("article.finding").forEach(function (article) {
        var show = state === "all" || article.dataset.state === state;
        article.hidden = !show;
        total += 1;
        if (show) { shown += 1; }
      });
      var count = section.querySelector(".shown");
      if (count) { count.textContent = shown + " of " + total + " shown"; }
    });
  }
  document.querySelectorAll("button.filter").forEach(function (button) {
    button.addEventListener("click", function () {
      apply(button.dataset.state);
      try { history.replaceState(null, "", "#state=" + button.dataset.state); } catch (ignored) { }
    });
  });
  document.querySelectorAll("button.copy").forEach(function (button) {
    button.addEventListener("click", function () {
      var code = button.parentNode.querySelector("code");
      function select() {
        var range = document.createRange();
        range.selectNodeContents(code);
        var selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        button.textContent = "Selected: press Ctrl+C";
      }
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(code.textContent).then(function () { button.textContent = "Copied"; }, select);
      } else {
        select();
      }
    });
  });
  var wanted = /^#state=([a-z]+)$/.exec(window.location.hash);
  apply(wanted && STATES.indexOf(wanted[1]) >= 0 ? wanted[1] : "all");
})();
"""


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; style-src '{_sha256(STYLE)}'; script-src '{_sha256(SCRIPT)}'; "
    "base-uri 'none'; form-action 'none'"
)
"""Nothing loads from anywhere; only this module's own style and script run (by hash, so a
`<script>` that got into the page could not run)."""
