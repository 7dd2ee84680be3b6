"""What a check reports: one symptom of one call, and the evidence quoted with it."""

from __future__ import annotations

from dataclasses import dataclass, replace

from fuzzgate.check.secrets import Redactor
from fuzzgate.check.traceback import Trace, parse_traces, root_cause
from fuzzgate.model.findings import Cause, Details, Kind, Severity
from fuzzgate.model.outcome import CallOutcome

STDERR_EXCERPT_LINES = 40
FRAMES_KEPT = 8


@dataclass(frozen=True, slots=True)
class Observation:
    """One symptom of one call. `signature` identifies the bug (never the payload)."""

    kind: Kind
    message: str
    signature: tuple[str, ...]
    details: Details
    ambiguous: bool = False
    """Several calls were in flight, so a process-wide symptom may belong to another one; or the call
    was timed in a server slowed by the coverage collector (`engine.collector.under_collector`). A
    replay must show it again, or it is dropped."""
    server_wide: bool = False
    """The bug lies below any one tool (the server's transport or SDK): the finding is the server's
    (`Surface.SERVER`), one whichever tool the request was for."""
    cause: Cause = Cause.SERVER
    """Whose bug: `Cause.SDK` for the SDK's symptom (`check.sdk`), reported low whatever the kind."""
    ceiling: Severity | None = None
    """The most this symptom is rated, whatever `[severity]` says for its kind (None: no limit): an
    exception the server caught and answered, a hang the server survived."""

    def rated(self, configured: Severity) -> Severity:
        """The severity of this symptom, given its kind's `configured` one."""
        if self.ceiling is not None and configured.rank > self.ceiling.rank:
            return self.ceiling
        return configured


def stderr_excerpt(stderr: str, redact: Redactor) -> str | None:
    """The last lines of what the server logged, redacted whole first."""
    lines = [line.rstrip() for line in redact.text(stderr).splitlines() if line.strip()]
    if not lines:
        return None
    return "\n".join(lines[-STDERR_EXCERPT_LINES:])


def outcome_details(outcome: CallOutcome, redact: Redactor, error: str | None = None) -> Details:
    """The outcome's error (or `error`) and its stderr excerpt, redacted, the paths in the server's
    throwaway layer written as the user's files."""
    error = error if error is not None else outcome.error
    return Details(
        error=redact(error and outcome.in_user_paths(error)),
        stderr=stderr_excerpt(outcome.in_user_paths(outcome.stderr), redact),
    )


def trace_details(trace: Trace | None, outcome: CallOutcome, redact: Redactor) -> Details:
    """`outcome_details` with the trace's last frames and the innermost frame in user code, their
    paths in the user's directories rather than the server's throwaway layer of them (which is
    another directory on every start)."""
    frames: tuple[str, ...] = ()
    location = None
    if trace is not None:
        source = outcome.source_path
        frames = tuple(redact.text(f"{source(f.path)}:{f.line} in {f.func}") for f in trace.frames[-FRAMES_KEPT:])
        user = trace.user_frames()
        if user:
            location = (redact.text(source(user[-1].path)), user[-1].line)
    return replace(outcome_details(outcome, redact), frames=frames, location=location)


def stderr_root_cause(outcome: CallOutcome) -> Trace | None:
    """The traceback on the call's stderr that says most about the bug, if there is one."""
    return root_cause(parse_traces(outcome.stderr)) if outcome.stderr else None
