"""What `replay --tool` shows of the server's answer: redacted whole, then cut and escaped."""

from __future__ import annotations

from rich.console import Console

from fuzzgate.check.secrets import REDACTED, Redactor
from fuzzgate.cli.replay import REPLY_CHARS, REPLY_LINES, _reply_lines
from fuzzgate.model.outcome import CallOutcome, OutcomeStatus

SECRET = "sk-live-RT0123456789abcdefSECRET"


def _printed(outcome: CallOutcome, redact: Redactor) -> str:
    """What the console prints of it (markup applied, as `replay` prints it)."""
    console = Console(record=True, width=200, color_system=None)
    console.print(_reply_lines(outcome, redact), highlight=False)
    return console.export_text()


def test_the_reply_is_redacted_escaped_and_cut() -> None:
    text = f"token={SECRET}\n\x1b[2J[bold red]PASS[/]\n" + "\n".join(f"line {i}" for i in range(40))
    shown = _printed(CallOutcome(OutcomeStatus.TOOL_ERROR, 0.012, text=text), Redactor([SECRET]))
    assert shown.startswith("reply (tool_error, 12 ms):\n")
    assert SECRET not in shown and f"token={REDACTED}" in shown
    # A terminal sequence is written as an escape; markup is printed as text, not applied.
    assert "\x1b" not in shown and "\\x1b[2J[bold red]PASS[/]" in shown
    assert len(shown.splitlines()) == 1 + REPLY_LINES + 1 and "... (30 more lines)" in shown


def test_a_long_line_is_cut_and_an_empty_reply_says_so() -> None:
    long = _printed(CallOutcome(OutcomeStatus.OK, 0.001, text="x" * 5000), Redactor([]))
    assert REPLY_CHARS < len(long) < REPLY_CHARS + 100 and long.rstrip().endswith("x...")
    empty = _printed(CallOutcome(OutcomeStatus.RPC_ERROR, 0.002, text="", rpc_code=-32602), Redactor([]))
    assert empty == "reply (rpc_error -32602, 2 ms): (no text)\n"
