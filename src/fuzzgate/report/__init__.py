"""Reporters: they read a `RunReport` and write files or console output; they never speak MCP.

- In: a `RunReport` (`record.results`), the engine's events, the store's views.
- Out: the console (rich), `report.json`, SARIF, JUnit, the Markdown summary, GitHub annotations,
  the JSON-lines trace, the `fuzzgate tools` table (`tables.py`), the HTML page.
- Never: speak MCP, decide an exit code, or write a secret.

- `locate.py`: the repository root, and the one place in it a finding is reported, shared by SARIF,
  JUnit, the summary and the annotations. SARIF, JUnit and the summary also take several merged
  reports (one SARIF run per target category, one suite and one section per target).
- `feedback_text.py`: the feedback and corpus lines the console and the summary share.
- `redaction.py`: a last pass over every string of a `RunReport`, repros included: a written repro
  never holds a secret, and says when one was redacted.
- `workflow_commands.py`: the stdout/stderr filter `cli.main` installs under GitHub Actions, and
  `write_command` for fuzzgate's own annotations.
- `html.py` (+ `html_assets.py`, `timeline_svg.py`): the store's view as one self-contained page
  (inline CSS and script allowed by hash in a CSP, hand-drawn stepped SVG timelines, every store
  string redacted and escaped); `html_data.py`: the page's input (`StoreData`) and the counts
  folded from it (environments, a row per subject, the plotted series, a worker's state).
"""
