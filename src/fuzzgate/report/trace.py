"""`--trace FILE`: every request and its outcome, one JSON object per line.

Requests are written as sent but redacted, like a written repro (`redaction.redact_repro`): a
value a reply handed out, or one of the user's secrets, is written `[REDACTED]`; the tool's name and
the outcome's text are the server's words and go through the run's redactor, the text whole before
it is cut. `elapsed_s`: seconds from the process's start to the call's end (the run's
time box clock), so a trace can be read over time.

A trace that cannot be written (a full disk) never stops the run: the writer stops, cuts the file
back to the whole lines already written, and says so once (`failure`, a note of the run).
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from fuzzgate.check.secrets import Redactor
from fuzzgate.engine.events import CallFinished, Event
from fuzzgate.report.redaction import redact_json

TEXT_CHARS = 500

FLUSH_BYTES = 8192
"""Lines are written in batches of about this size (a buffered file's), each whole or not at all."""


class TraceWriter:
    """Raises `OSError` when the file cannot be created; never while writing (`failure`)."""

    def __init__(self, path: Path, redact: Redactor) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o644)
        self._redact = redact
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._kept_bytes = 0
        self._kept_lines = 0
        self.failure: str | None = None
        """Why the trace stopped short, and what it holds, as a note of the run; None when whole."""

    def __call__(self, event: Event) -> None:
        if not isinstance(event, CallFinished) or self._fd < 0:
            return
        outcome = event.outcome
        record = {
            "tool": self._redact.text(event.tool),
            "surface": event.surface.value,
            "case": event.case_index,
            "arguments": redact_json(event.arguments, self._redact),
            "schema_valid": event.schema_valid,
            "origin": self._redact(event.origin),
            "status": outcome.status.value,
            "duration_ms": round(outcome.duration_s * 1000, 2),
            "rpc_code": outcome.rpc_code,
            "text": self._redact.cut(outcome.text, TEXT_CHARS),
            "observations": event.observations,
            "elapsed_s": round(event.elapsed_s, 3),
        }
        line = (json.dumps(record, ensure_ascii=True) + "\n").encode("ascii")
        self._pending.append(line)
        self._pending_bytes += len(line)
        if self._pending_bytes >= FLUSH_BYTES:
            self._flush()

    def close(self) -> None:
        if self._fd < 0:
            return
        self._flush()
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            try:
                os.close(fd)
            except OSError as exc:
                self._failed(exc)

    def _flush(self) -> None:
        batch = b"".join(self._pending)
        self._pending.clear()
        self._pending_bytes = 0
        view = memoryview(batch)
        written = 0
        try:
            while written < len(batch):
                written += os.write(self._fd, view[written:])
        except OSError as exc:
            # A line the full disk cut off is no JSON: the file keeps the whole lines before it.
            whole = batch.rfind(b"\n", 0, written) + 1
            self._kept_bytes += whole
            self._kept_lines += batch.count(b"\n", 0, whole)
            fd, self._fd = self._fd, -1
            with contextlib.suppress(OSError):
                os.ftruncate(fd, self._kept_bytes)
            with contextlib.suppress(OSError):
                os.close(fd)
            self._failed(exc)
            return
        self._kept_bytes += len(batch)
        self._kept_lines += batch.count(b"\n")

    def _failed(self, error: OSError) -> None:
        held = f"the first {self._kept_lines} call(s)" if self._kept_lines else "no call"
        self.failure = (
            f"the trace {self._path} could not be written ({error.strerror or error}): it holds {held}, "
            "and the run went on without it"
        )
