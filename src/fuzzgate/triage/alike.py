"""Findings that are one cause seen everywhere: most of what a server offers failing with the same
error is rarely as many bugs in its code as tools. It is the server's environment far more often
(`zotero-mcp` without its API key: "Missing required environment variables" from every tool;
`@modelcontextprotocol/server-puppeteer` without Chrome: "Could not find Chrome" from every tool).

The findings stay as they are (the server does let an exception out, and a fix of the environment
makes them go away on the next run); the run gets a note naming the error, so the reader of a red
gate looks at the environment first.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from fuzzgate.model.findings import Finding, Kind, Surface

_SHOWN = 160
"""Characters of the shared error a note quotes."""


def alike_note(findings: Sequence[Finding], fuzzed: int, accepting: Collection[tuple[Surface, str]] = ()) -> str | None:
    """The note for an error that more than half of the `fuzzed` tools, resources and prompts (and
    at least two) answered in an `internal_error` finding, none of them ever `accepting` a call
    (answering a schema-valid one with success: `mcp-text-editor` refuses every relative path with
    the same error, and works on absolute ones, so what it lacks is in the input, not in its
    environment); None when there is none. The error is a finding's `details.error` when the reply
    held one, else its message."""
    subjects: dict[str, set[tuple[Surface, str]]] = {}
    for finding in findings:
        if finding.kind is not Kind.INTERNAL_ERROR or (finding.surface, finding.name) in accepting:
            continue
        lines = (finding.details.error or finding.message).strip().splitlines()
        if lines and lines[0].strip():
            subjects.setdefault(lines[0].strip(), set()).add((finding.surface, finding.name))
    if not subjects:
        return None
    error, alike = max(subjects.items(), key=lambda item: (len(item[1]), item[0]))
    if len(alike) < 2 or len(alike) * 2 <= fuzzed:
        return None
    shown = error if len(error) <= _SHOWN else error[: _SHOWN - 1] + "…"
    return (
        f"{len(alike)} of the {fuzzed} tools, resources and prompts fuzzed failed with the same error, {shown!r}: "
        "a server that fails most of what it offers alike is likely missing something in its environment (a "
        "setting, an environment variable, a program or a service it needs), and these findings may be that "
        "rather than its code"
    )
