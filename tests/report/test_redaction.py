"""The last redaction pass over repros: one rule with the corpus, a written repro never holds a
secret; it says it was redacted, and keeps what makes it the same bug (its fingerprint)."""

from __future__ import annotations

import json
from pathlib import Path

from fuzzgate.check.secrets import REDACTED, Redactor
from fuzzgate.engine.events import CallFinished
from fuzzgate.model.findings import Finding, Kind, Repro, Severity, Step, Surface
from fuzzgate.model.outcome import CallOutcome, OutcomeStatus
from fuzzgate.report.redaction import redact_finding, redact_json, redact_repro
from fuzzgate.report.trace import TraceWriter

TOKEN = "ghp_" + "a1" * 18
redact = Redactor(["user-secret-value"])


def _repro(note: str, *, produced: str | None = None) -> Repro:
    steps = (
        Step("create_note", {"text": "a"}, produced=("objects", produced or note)),
        Step("delete_note", {"note_id": note}),
    )
    return Repro(
        seed=7, case_index=3, arguments={"note_id": note, "path": [f"/n/{note}"]}, transport="stdio", prefix=steps
    )


def test_a_secret_anywhere_in_a_repro_is_written_as_the_marker_and_the_repro_says_so() -> None:
    repro = redact_repro(_repro(TOKEN), redact)
    assert repro.redacted
    assert repro.arguments == {"note_id": REDACTED, "path": [f"/n/{REDACTED}"]}
    assert [step.arguments for step in repro.prefix] == [{"text": "a"}, {"note_id": REDACTED}]
    assert repro.prefix[0].produced == ("objects", REDACTED)
    assert TOKEN not in json.dumps(repro.to_json())
    assert Repro.from_json(json.loads(json.dumps(repro.to_json()))) == repro


def test_a_repro_without_a_secret_is_written_as_it_was() -> None:
    repro = _repro("5eed0000-0000-4000-8000-00000000c0de")
    assert redact_repro(repro, redact) == repro
    assert "redacted" not in repro.to_json()


def test_keys_and_the_users_own_values_are_redacted_and_a_redacted_repro_stays_marked() -> None:
    assert redact_json({"user-secret-value": ["x", "user-secret-value"]}, redact) == {REDACTED: ["x", REDACTED]}
    once = redact_repro(_repro(TOKEN), redact)
    assert redact_repro(once, redact) == once


def test_a_finding_keeps_its_fingerprint() -> None:
    finding = Finding(
        Kind.INTERNAL_ERROR, Severity.HIGH, Surface.TOOL, "get_note", f"note slot {TOKEN} was freed", "f1ngerpr1nt",
        _repro(TOKEN),
    )  # fmt: skip
    written = redact_finding(finding, redact)
    assert written.fingerprint == finding.fingerprint
    assert written.repro.redacted and TOKEN not in json.dumps(written.to_json())


def test_the_trace_writes_the_arguments_redacted(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    writer = TraceWriter(trace, redact)
    outcome = CallOutcome(status=OutcomeStatus.OK, duration_s=0.01, text="ok")
    writer(CallFinished("get_note", 1, {"note_id": TOKEN}, True, "conform", outcome, 0, 1, 1, 0.1))
    writer.close()
    assert json.loads(trace.read_text())["arguments"] == {"note_id": REDACTED}


def test_the_arguments_before_shrinking_are_redacted_without_marking_what_a_replay_sends() -> None:
    shrunk = Repro(
        seed=7, case_index=3, arguments={"path": ""}, transport="stdio", original_arguments={"path": f"/x/{TOKEN}"}
    )
    written = redact_repro(shrunk, redact)
    assert written.original_arguments == {"path": f"/x/{REDACTED}"}
    assert written.arguments == {"path": ""} and not written.redacted
    assert TOKEN not in json.dumps(written.to_json())
