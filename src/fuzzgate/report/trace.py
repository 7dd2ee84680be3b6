"""`--trace FILE`: every request and its outcome, one JSON object per line.

Requests are written as sent but redacted, like a written repro (`redaction.redact_repro`): a
value a reply handed out, or one of the user's secrets, is written `[REDACTED]`; the tool's name and
the outcome's text are the server's words and go through the run's redactor, the text whole before
it is cut. `elapsed_s`: seconds from the process's start to the call's end (the run's
time box clock), so a trace can be read over time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO

from fuzzgate.check.secrets import Redactor
from fuzzgate.engine.events import CallFinished, Event
from fuzzgate.report.redaction import redact_json

TEXT_CHARS = 500


class TraceWriter:
    def __init__(self, path: Path, redact: Redactor) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._handle: IO[str] = path.open("w", encoding="utf-8")
        self._redact = redact

    def __call__(self, event: Event) -> None:
        if not isinstance(event, CallFinished):
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
        self._handle.write(json.dumps(record, ensure_ascii=True) + "\n")

    def close(self) -> None:
        self._handle.close()
