"""What `fuzzgate run` imports before its first server starts: nothing of the MCP SDK, Hypothesis,
the engine or the reporters (they are imported while the server starts, `target.head_start`)."""

from __future__ import annotations

import json
import subprocess
import sys

from fuzzgate.cli.run import OUTPUT_FILES

HEAVY = (
    "mcp",
    "mcp_types",
    "pydantic",
    "hypothesis",
    "jsonschema",
    "sarif_om",
    "fuzzgate.generate",
    "fuzzgate.check.oracles",
    "fuzzgate.target.connection",
    "fuzzgate.engine.execute",
    "fuzzgate.report.console",
    "fuzzgate.report.sarif",
    "fuzzgate.fleet.store_sync",
)


def _imported_after(statement: str) -> list[str]:
    script = f"import json, sys\n{statement}\nprint(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    return list(json.loads(out.stdout.strip().splitlines()[-1]))


def test_the_run_command_imports_nothing_heavy_before_its_server_starts() -> None:
    assert _imported_after("import fuzzgate.cli.main, fuzzgate.cli.run, fuzzgate.target.head_start") == []


def test_the_check_package_imports_its_checks_on_first_use() -> None:
    assert _imported_after("import fuzzgate.check.secrets, fuzzgate.check.patterns") == []
    assert "fuzzgate.check.oracles" in _imported_after("from fuzzgate.check import Oracles")


def test_the_output_files_are_the_writers_own_names() -> None:
    from fuzzgate.report.json_report import REPORT_FILE
    from fuzzgate.report.junit import JUNIT_FILENAME
    from fuzzgate.report.sarif import SARIF_FILENAME
    from fuzzgate.report.summary import SUMMARY_FILENAME

    assert OUTPUT_FILES == (REPORT_FILE, SARIF_FILENAME, JUNIT_FILENAME, SUMMARY_FILENAME)
