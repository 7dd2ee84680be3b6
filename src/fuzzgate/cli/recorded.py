"""The target of the last run, for `replay` and `baseline` typed where a run given its server by
flags alone (`--command`/`--arg` or `--url`, no config file) wrote its report.

The commands such a run prints name no target: the job summary, the SARIF, the JUnit file and the
CI log show no command line or URL, any of which can carry a credential. Typed as printed, with no
config file to find and no target flag, they take the target `report.json` recorded. What the
report could not record makes the command stop with the fix rather than start another server: a
command line holding `[REDACTED]`, or headers whose values are secrets.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
from pathlib import Path

from fuzzgate.check.secrets import REDACTED
from fuzzgate.config import Overrides
from fuzzgate.config.model import DEFAULT_OUT_DIR
from fuzzgate.model.errors import ConfigError, ReportError
from fuzzgate.report import json_report

_HINT = "pass the target yourself: --command with --arg, or --url with --header"


def recorded_target(overrides: Overrides, given: Path | None = None) -> tuple[Overrides, str] | None:
    """`overrides` with the target of the report `given` to `replay` (when it is a report, not a
    baseline entry) or else of the one in `--out` (default `.fuzzgate/out`), and the line that says
    so; None when there is no report, or its run read a config file (the target is that file's, and
    a missing file is its own error)."""
    report = None
    if given is not None:
        # A baseline entry holds no target; a file that is no report, `replay` itself says so.
        with contextlib.suppress(ReportError):
            report, path = json_report.read(given), given
    if report is None:
        path = Path(overrides.out if overrides.out is not None else DEFAULT_OUT_DIR) / json_report.REPORT_FILE
        if not path.is_file():
            return None
        report = json_report.read(path)
    target = report.target
    if report.config_path is not None or (target.command is None and target.url is None):
        return None
    words = [target.command or "", *target.args, target.url or ""]
    if any(REDACTED in word for word in words):
        raise ConfigError(
            f"{path}: the last run's command line or URL holds {REDACTED} in place of a secret", hint=_HINT
        )
    if target.header_names and overrides.headers is None:
        names = ", ".join(target.header_names)
        raise ConfigError(f"{path}: the last run sent the header(s) {names}, whose values are not recorded", hint=_HINT)
    if target.command is not None:
        taken = replace(overrides, command=target.command, args=target.args)
    else:
        taken = replace(overrides, url=target.url)
    return taken, f"the server of the last run ({target.name}), as {path} recorded it"
