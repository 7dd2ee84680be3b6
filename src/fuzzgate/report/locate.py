"""Where in the repository a finding is reported: the one choice SARIF, JUnit, the job summary and
the annotations share, and the repository root their paths are relative to."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from fuzzgate.model.findings import Finding
from fuzzgate.record.results import RunReport

FALLBACK_PATH = "fuzzgate.toml"
"""Where a finding points when nothing better is known: the default config file name. Code
scanning accepts a path with no file behind it (the alert shows without a snippet)."""

_NOT_REPOSITORY_CODE = frozenset({".venv", "site-packages", "dist-packages", "node_modules"})
"""Directories whose files are installed, not written in the repository: a traceback ending in
one does not locate the bug in the repository's code."""


def repository_root(cwd: Path) -> Path:
    """Where SARIF and JUnit paths are relative to: $GITHUB_WORKSPACE, the git top level, or cwd."""
    if workspace := os.environ.get("GITHUB_WORKSPACE"):
        return Path(workspace).resolve()
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        if out.returncode == 0 and out.stdout.strip():
            return Path(out.stdout.strip()).resolve()
    except (OSError, subprocess.SubprocessError):
        pass
    return cwd.resolve()


@dataclass(frozen=True, slots=True)
class SourceLocation:
    """A place in the repository: a POSIX path relative to its root, and a 1-based line."""

    path: str
    line: int = 1


def source_location(finding: Finding | None, report: RunReport, repo_root: Path) -> SourceLocation:
    """Where in the repository a finding (or, with None, the target) is reported.

    In order: the code location from the server's traceback, if it is a file in the repository
    and not installed code; the config file that declares the target, at the target's line; the
    server script named in the target's command line, if it is a file in the repository;
    `FALLBACK_PATH`. Relative paths are taken relative to `repo_root`.
    """
    if finding is not None and finding.details.location is not None:
        path, line = finding.details.location
        relative = _in_repository(path, repo_root)
        if relative is not None and not _NOT_REPOSITORY_CODE.intersection(PurePosixPath(relative).parts):
            return SourceLocation(relative, max(line, 1))
    if report.config_path:
        relative = _in_repository(report.config_path, repo_root)
        if relative is not None:
            return SourceLocation(relative, max(report.target_line, 1))
    for word in (*report.target.args, report.target.command or ""):
        relative = _in_repository(word, repo_root) if word.endswith((".py", ".js", ".mjs", ".ts")) else None
        if relative is not None and (repo_root / relative).is_file():
            return SourceLocation(relative)
    return SourceLocation(FALLBACK_PATH)


def _in_repository(path: str, repo_root: Path) -> str | None:
    """`path` relative to `repo_root` in POSIX form, or None when it is outside (or is the root)."""
    root = repo_root.resolve()
    try:
        relative = (root / Path(path)).resolve().relative_to(root)
    except (ValueError, OSError, RuntimeError):
        return None
    return relative.as_posix() if relative.parts else None
