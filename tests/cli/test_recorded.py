"""`replay` and `baseline` typed with no config file and no target flag take the target of the
last report (`cli.recorded`), and stop with the fix where the report could not record it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from fuzzgate.cli.recorded import recorded_target
from fuzzgate.config import Overrides
from fuzzgate.model.errors import ConfigError, ReportError
from fuzzgate.record.results import RunReport, TargetSummary
from fuzzgate.report import json_report
from tests.report.report_factory import sample_report


def _written(tmp_path: Path, target: TargetSummary, config_path: str | None = None) -> RunReport:
    report = replace(sample_report(tmp_path), target=target, config_path=config_path)
    (tmp_path / "out").mkdir(exist_ok=True)
    json_report.write(report, tmp_path / "out")
    return report


STDIO = TargetSummary(name="srv", kind="stdio", command="python3", args=("server.py", "--port=0"))


def test_a_stdio_target_is_taken_with_its_arguments(tmp_path: Path) -> None:
    _written(tmp_path, STDIO)
    found = recorded_target(Overrides(out=tmp_path / "out", timeout="3s"))
    assert found is not None
    overrides, line = found
    assert overrides == Overrides(out=tmp_path / "out", timeout="3s", command="python3", args=("server.py", "--port=0"))
    assert line == f"the server of the last run (srv), as {tmp_path / 'out' / 'report.json'} recorded it"


def test_an_http_target_is_taken_by_url_and_its_headers_are_asked_for(tmp_path: Path) -> None:
    http = TargetSummary(name="web", kind="http", url="http://127.0.0.1:9/mcp", header_names=("Authorization",))
    _written(tmp_path, http)
    with pytest.raises(ConfigError, match=r"sent the header\(s\) Authorization, whose values are not recorded"):
        recorded_target(Overrides(out=tmp_path / "out"))
    found = recorded_target(Overrides(out=tmp_path / "out", headers=("Authorization: Bearer t",)))
    assert found is not None and found[0].url == "http://127.0.0.1:9/mcp" and found[0].command is None


def test_no_report_or_a_run_from_a_config_file_gives_nothing(tmp_path: Path) -> None:
    assert recorded_target(Overrides(out=tmp_path / "out")) is None
    _written(tmp_path, STDIO, config_path="fuzzgate.toml")
    assert recorded_target(Overrides(out=tmp_path / "out")) is None


def test_a_redacted_command_line_is_refused(tmp_path: Path) -> None:
    _written(tmp_path, replace(STDIO, args=("server.py", "--key=[REDACTED]")))
    with pytest.raises(ConfigError, match=r"holds \[REDACTED\] in place of a secret") as error:
        recorded_target(Overrides(out=tmp_path / "out"))
    assert error.value.hint == "pass the target yourself: --command with --arg, or --url with --header"


def test_a_corrupt_report_is_its_own_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.json").write_text("{not json")
    with pytest.raises(ReportError, match="not a readable report"):
        recorded_target(Overrides(out=tmp_path / "out"))


def test_a_report_file_given_to_replay_is_the_one_read_and_a_baseline_entry_is_not(tmp_path: Path) -> None:
    _written(tmp_path, STDIO)
    elsewhere = tmp_path / "ci-artifact"
    elsewhere.mkdir()
    node = replace(sample_report(tmp_path), target=replace(STDIO, command="node"), config_path=None)
    json_report.write(node, elsewhere)
    found = recorded_target(Overrides(out=tmp_path / "out"), elsewhere / "report.json")
    assert found is not None and found[0].command == "node"
    entry = tmp_path / "entry.json"
    entry.write_text('{"fingerprint": "ab12", "kind": "crash"}')
    found = recorded_target(Overrides(out=tmp_path / "out"), entry)
    assert found is not None and found[0].command == "python3"
