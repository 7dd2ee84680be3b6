"""The one-line commands reports print so a user can reproduce or tidy up locally."""

from __future__ import annotations

import json
import shlex

from fuzzgate.findings import Finding, Surface

_MAX_INLINE_ARGUMENTS = 2000
"""Past this, the arguments do not fit a readable command line; the repro refers to the fingerprint."""


def _config_flag(config_path: str | None) -> list[str]:
    return ["--config", config_path] if config_path else []


def repro_command(finding: Finding, config_path: str | None = None) -> str:
    """A command that sends the finding's exact request to the configured server again.

    Small arguments are inlined so the command works on any machine with the repository checked
    out; large ones are looked up by fingerprint in the baseline or the last report.
    """
    args = json.dumps(finding.repro.arguments, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    words = ["fuzzgate", "replay"]
    if len(args) <= _MAX_INLINE_ARGUMENTS and finding.surface is Surface.TOOL:
        words += ["--tool", finding.name, "--arguments", args]
    else:
        words.append(finding.fingerprint)
    words += _config_flag(config_path)
    return shlex.join(words)


def prune_command(config_path: str | None = None) -> str:
    return shlex.join(["fuzzgate", "baseline", "prune", *_config_flag(config_path)])


def accept_command(config_path: str | None = None) -> str:
    return shlex.join(["fuzzgate", "baseline", "accept", *_config_flag(config_path)])
