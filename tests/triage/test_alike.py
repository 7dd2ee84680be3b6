"""One error that most of what a server offers failed with gets a note (the environment, more often
than as many bugs); errors that differ, or that half or fewer share, get none."""

from __future__ import annotations

from dataclasses import replace

from fuzzgate.model.findings import Details, Finding, Kind, Severity, Surface
from fuzzgate.triage.alike import alike_note
from tests.report.report_factory import make_finding

MISSING = "unhandled ValueError: Missing required environment variables. Please set ZOTERO_API_KEY"
CHROME = "Could not find Chrome (ver. 131.0.6778.204). This can occur if either\n 1. you did not install"


def internal(name: str, message: str, error: str | None = None, surface: Surface = Surface.TOOL) -> Finding:
    finding = make_finding(f"fp-{surface.value}-{name}", kind=Kind.INTERNAL_ERROR, severity=Severity.HIGH,
                           name=name, message=message, surface=surface)  # fmt: skip
    return replace(finding, details=Details(error=error))


def test_every_tool_failing_alike_gets_the_note_quoting_the_error() -> None:
    note = alike_note([internal(n, MISSING) for n in ("search", "metadata", "fulltext")], fuzzed=3)
    assert note is not None and note.startswith(f"3 of the 3 tools, resources and prompts fuzzed failed with the same "
                                                f"error, {MISSING!r}: ")  # fmt: skip
    assert "likely missing something in its environment" in note


def test_the_reply_s_error_counts_before_the_message_and_only_its_first_line() -> None:
    findings = [internal(n, f"JSON-RPC internal error -32603 for {n}: x", CHROME) for n in ("go", "click", "shot")]
    findings.append(internal("nope", "answered a tools/call of a tool that does not exist with an error", CHROME))
    note = alike_note(findings, fuzzed=5)
    assert note is not None and note.startswith("4 of the 5 ") and repr(CHROME.splitlines()[0]) in note


def test_no_note_for_errors_that_differ_half_or_fewer_one_subject_or_other_kinds() -> None:
    differ = [internal("a", "Failed to describe"), internal("b", "Failed to get"), internal("c", "Port-forward")]
    assert alike_note(differ, fuzzed=3) is None
    assert alike_note([internal("a", MISSING), internal("b", MISSING)], fuzzed=4) is None
    assert alike_note([internal("a", MISSING)], fuzzed=1) is None
    crashes = [replace(internal(n, MISSING), kind=Kind.CRASH) for n in "abc"]
    assert alike_note(crashes, fuzzed=3) is None
    # A tool and a prompt of one name are two subjects; two findings of one tool are one.
    both = [internal("x", MISSING), internal("x", MISSING, surface=Surface.PROMPT), internal("x", MISSING)]
    note = alike_note(both, fuzzed=3)
    assert note is not None and note.startswith("2 of the 3 ")


def test_a_long_error_is_cut() -> None:
    long = "E" * 500
    note = alike_note([internal("a", long), internal("b", long)], fuzzed=2)
    assert note is not None and "E" * 159 + "…" in note and "E" * 160 not in note


def test_no_note_when_the_tools_failing_alike_also_accepted_calls() -> None:
    """mcp-text-editor refuses every relative path with "File path must be absolute" and edits
    files given absolute ones: the error says what the inputs lacked, not the environment."""
    absolute = "unhandled RuntimeError: File path must be absolute"
    findings = [internal(n, absolute) for n in ("get_text_file_contents", "edit_text_file_contents")]
    accepting = {(Surface.TOOL, "get_text_file_contents"), (Surface.TOOL, "edit_text_file_contents")}
    assert alike_note(findings, fuzzed=2, accepting=accepting) is None
    # One of the two never accepted a call: one subject is not "most of what it offers" alike.
    assert alike_note(findings, fuzzed=2, accepting={(Surface.TOOL, "edit_text_file_contents")}) is None
    assert alike_note(findings, fuzzed=2) is not None
