"""What a finding's message says about an exception: its type and the first line of its message,
as a maintainer reads it at the top of a traceback (`ZeroDivisionError: division by zero`,
`TypeError: Cannot read properties of undefined (reading 'length')`).

The text is the server's, so it is redacted whole first, then cut to one line, its unprintable
characters escaped (`\\x1b`, `\\u2028`), and capped (`HEADLINE_CHARS`).
"""

from __future__ import annotations

from collections.abc import Sequence

from fuzzgate.check.secrets import Redactor
from fuzzgate.check.traceback import Trace, parse_traces, root_cause

HEADLINE_CHARS = 160
"""The most characters of an exception's type and message a finding's message quotes."""


def named_exception(traces: Sequence[Trace], root: Trace) -> Trace:
    """The exception a message names for `root` (the trace that identifies the bug): an exception
    group says only that its tasks failed, so it names the first sub-exception that followed it."""
    if root.exc_type.rsplit(".", 1)[-1] in ("ExceptionGroup", "BaseExceptionGroup") and root in traces:
        later = traces[traces.index(root) + 1 :]
        return next((t for t in later if t.typed), root)
    return root


def stderr_headline(stderr: str, redact: Redactor) -> str | None:
    """`headline` of the exception that identifies the bug among the tracebacks on `stderr`."""
    traces = parse_traces(stderr) if stderr else []
    root = root_cause(traces)
    return None if root is None else headline(named_exception(traces, root), redact)


def printable(text: str) -> str:
    """`text` with every character that is not printable (controls, line and paragraph separators,
    lone surrogates) written as its Python escape, so one line of it stays one line anywhere."""
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def first_line(text: str, redact: Redactor, limit: int = HEADLINE_CHARS) -> str:
    """The first non-blank line of `text`, redacted whole first, escaped and cut to `limit`
    characters (with "..." after a cut)."""
    redacted = redact.text(text)
    line = next((part.strip() for part in redacted.splitlines() if part.strip()), "")
    shown = printable(line)
    return shown if len(shown) <= limit else redact.cut(shown, limit - 3) + "..."


UNTYPED = "an exception (the traceback ends before its type)"
"""The headline of a traceback cut before its exception line (`Trace.typed` false)."""


def headline(trace: Trace, redact: Redactor, limit: int = HEADLINE_CHARS) -> str:
    """`Type: first line of the message` (or the type alone); for a traceback that ended before
    its exception line, says so."""
    if not trace.typed:
        return UNTYPED
    return first_line(
        f"{trace.exc_type}: {trace.message}".rstrip(": ") if trace.message else trace.exc_type, redact, limit
    )
