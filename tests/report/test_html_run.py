"""`fuzzgate report` over what a real `fuzzgate run --store` wrote: the run's findings, with the
repro commands its own report gives, its statistics and its corpus, loaded clean in Chromium."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgate.model.commands import store_repro_command
from fuzzgate.model.findings import Finding
from tests.e2e.conftest import fuzzgate, stdio_target
from tests.report.chromium import chromium, file_url

pytestmark = pytest.mark.e2e


def test_report_shows_what_a_run_wrote(tmp_path: Path) -> None:
    store = tmp_path / "store"
    run = fuzzgate(
        "run",
        *stdio_target("buggy_server.py"),
        *("--include", "parse_config", "--include", "echo", "--cases", "20", "--budget", "60s", "--replays", "1"),
        *("--store", str(store), "--corpus", str(tmp_path / "corpus")),
        cwd=tmp_path,
    )
    assert run.code in (0, 1), run.stdout + run.stderr
    findings = run.report["findings"]

    page = tmp_path / "report.html"
    drawn = fuzzgate("report", "--store", str(store), "--out", str(page), cwd=tmp_path)
    assert drawn.code == 0, drawn.stderr
    assert f"1 target(s), {len(findings)} finding(s), 1 worker(s)" in drawn.stdout

    with chromium() as browser:
        tab = browser.open(file_url(page))
        assert tab.problems == []
        dom = tab.dom()
    codes = [e.text for e in dom.find("code")]
    commands = [e.text for e in dom.find("code", "command")]
    for data in findings:
        finding = Finding.from_json(data)
        assert finding.fingerprint in codes
        assert store_repro_command(finding, str(store)) in commands
    assert {"parse_config", "echo"} <= set(codes)
    # The run's statistics reach the table (calls, behaviours, corpus of the "All" row) and the plots.
    cells = [e.text for e in dom.find("td")]
    calls, behaviours, corpus = (int(n) for n in cells[cells.index("All") + 1 : cells.index("All") + 4])
    assert calls == run.report["calls"] and behaviours > 0 and corpus > 0
    assert len(dom.find("path", "line")) == 3
