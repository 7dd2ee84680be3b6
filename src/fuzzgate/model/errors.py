"""The one error hierarchy. Every error a user can cause says what is wrong, where, and how to fix it.

Only the CLI and the action entrypoint turn these into exit codes; the engine raises them.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """The documented exit codes (README, "Exit codes")."""

    OK = 0
    FINDINGS = 1
    USAGE = 2
    TARGET = 3
    INTERNAL = 4


class FuzzgateError(Exception):
    """Base of every error fuzzgate reports to a user.

    `title` is a short heading, `message` one line saying what is wrong (and where), `hint` the fix.
    """

    exit_code: ExitCode = ExitCode.USAGE
    title: str = "error"

    def __init__(self, message: str, *, hint: str | None = None, detail: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.detail = detail

    def __str__(self) -> str:
        return self.message


class UsageError(FuzzgateError):
    """A command-line mistake."""

    title = "usage error"


class ConfigError(FuzzgateError):
    """A configuration file or value that cannot be used."""

    title = "configuration error"


class BaselineError(FuzzgateError):
    """A baseline corpus file that cannot be read or written."""

    title = "baseline error"


class ReportError(FuzzgateError):
    """A report or repro file that cannot be read."""

    title = "report error"


class TargetError(FuzzgateError):
    """The MCP server could not be started or did not initialize."""

    exit_code = ExitCode.TARGET
    title = "target error"
