"""GitHub workflow commands: keeping a server's text from starting one, and writing fuzzgate's own.

The Actions runner reads every line a step prints. A line that starts with `::` after leading
whitespace is a command (`::error ...::`, `::stop-commands::TOKEN`, `::add-mask::`), and the older
`##[name ...]data` form is recognised *anywhere* in a line; the runner ends a line at `\\n` or `\\r`
(REFERENCE.md, "Workflow commands"). fuzzgate prints a server's tool names, messages and stderr, so
under GitHub Actions (`GITHUB_ACTIONS=true`) everything this process writes to stdout and stderr
passes a `CommandFilter`: a `::` at a line start becomes `:\\N{REPLACEMENT CHARACTER}:` and `##[`
becomes `##\\N{REPLACEMENT CHARACTER}[`, visibly, so a reader sees that text was neutralized.

Why a filter on the streams and not escaping at each print: Rich wraps long lines, and a wrap can put
any part of a message at the start of a line; only the bytes on their way out show where lines start.
Why hand-written: neither the standard library nor Rich filters a stream by line position, and the
runner's rules are the two above. fuzzgate's own `::error` annotations go past the filter through
`write_command`; their text is escaped by `fuzzgate.report.annotations`.

Wrapping the untrusted output in `::stop-commands::TOKEN` ... `::TOKEN::` was not chosen: it does
nothing for `##[`, and fuzzgate's annotations would have to wait for the end of the pause.
"""

from __future__ import annotations

import codecs
import sys
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from typing import Any, TextIO, cast

MARK = "\N{REPLACEMENT CHARACTER}"
"""Inserted where a workflow command would start."""
_ASCII_MARK = "?"
"""The mark on a stream whose encoding has no replacement character."""

_LINE_START, _ONE_COLON, _INSIDE = range(3)


def neutralize_legacy(text: str, mark: str = MARK) -> str:
    """`text` with every `##[` (the runner's older command form, read anywhere in a line) broken."""
    return text.replace("##[", f"##{mark}[")


class CommandFilter:
    """A text stream that writes through to `stream`, breaking every workflow command a write could
    start. It keeps its place in the line across writes, so a command split over several writes
    (`"  :"` then `":error::"`) is caught as well; nothing is held back."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._state = _LINE_START
        self._last = ""
        """The last two characters written, for a `##[` split over writes."""
        self._mark = MARK if _can_encode(stream, MARK) else _ASCII_MARK

    def write(self, text: str) -> int:
        out: list[str] = []
        state, last, mark = self._state, self._last, self._mark
        for ch in text:
            if ch in "\r\n":
                state = _LINE_START
            elif state == _LINE_START and ch == ":":
                state = _ONE_COLON
            elif state == _ONE_COLON and ch == ":":
                out.append(mark)
                state = _INSIDE
            elif not (state == _LINE_START and ch.isspace()):
                state = _INSIDE
            if ch == "[" and last == "##":
                out.append(mark)
            out.append(ch)
            last = (last + ch)[-2:]
        self._state, self._last = state, last
        self.stream.write("".join(out))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def write_command(self, line: str) -> None:
        """Write one of fuzzgate's own workflow commands, unfiltered, on a line of its own."""
        if self._state != _LINE_START:
            self.stream.write("\n")
        self.stream.write(line + "\n")
        self.stream.flush()
        self._state, self._last = _LINE_START, ""

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    @property
    def encoding(self) -> str:
        return self.stream.encoding

    @property
    def errors(self) -> str | None:
        return self.stream.errors

    def __getattr__(self, name: str) -> Any:
        if name == "buffer":
            # Bytes written to the buffer would pass unfiltered.
            raise AttributeError(name)
        return getattr(self.stream, name)


def _can_encode(stream: TextIO, text: str) -> bool:
    try:
        codecs.encode(text, getattr(stream, "encoding", None) or "utf-8")
    except (LookupError, UnicodeError):
        return False
    return True


def under_github_actions(environ: Mapping[str, str]) -> bool:
    return environ.get("GITHUB_ACTIONS") == "true"


@contextmanager
def guarded_output(environ: Mapping[str, str]) -> Iterator[None]:
    """Under GitHub Actions, pass everything written to `sys.stdout` and `sys.stderr` inside the
    block through a `CommandFilter` (Rich consoles, `print`, logging and tracebacks alike)."""
    if not under_github_actions(environ) or isinstance(sys.stdout, CommandFilter):
        yield
        return
    saved = sys.stdout, sys.stderr
    sys.stdout = cast(TextIO, CommandFilter(sys.stdout))
    sys.stderr = cast(TextIO, CommandFilter(sys.stderr))
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            with suppress(OSError, ValueError):
                stream.flush()
        sys.stdout, sys.stderr = saved


def write_command(line: str) -> None:
    """Print one of fuzzgate's own workflow commands (escaped by its maker) past the filter."""
    stream: object = sys.stdout
    if isinstance(stream, CommandFilter):
        stream.write_command(line)
    else:
        print(line, flush=True)
