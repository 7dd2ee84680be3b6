"""The one codec of a finding (`Finding`/`Repro`/`Step`/`Details` `to_json`/`from_json`), which
`report.json`, baseline entries, the shared store and corpus entries are read and written with:
every field survives the trip through JSON text, and a malformed field is named."""

from __future__ import annotations

import json
from dataclasses import fields

import pytest
from hypothesis import given

from fuzzgate.model.findings import Details, Finding, Repro, Step
from tests import strategies


def test_the_strategies_draw_every_field() -> None:
    for cls in (Step, Repro, Details, Finding):
        assert strategies.COVERED[cls] == {f.name for f in fields(cls)}, cls.__name__


def test_a_strategy_missing_a_field_is_refused() -> None:
    with pytest.raises(AssertionError, match="produced"):
        strategies.complete(Step, tool=strategies.text, arguments=strategies.arguments)


@given(strategies.findings)
def test_a_finding_survives_json_text_whole(finding: Finding) -> None:
    text = json.dumps(finding.to_json(), sort_keys=True, ensure_ascii=False)
    assert Finding.from_json(json.loads(text)) == finding


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda d: d["repro"].update(surface="telepathy"), "repro.surface"),
        (
            lambda d: d["repro"].update(prefix=[{"tool": "x", "arguments": {}, "produced": 3}]),
            "repro.prefix[].produced",
        ),
        (lambda d: d["repro"].update(workspace=7), "repro.workspace"),
        (lambda d: d["details"].update(location={"path": "a.py"}), "details.location.line"),
        (lambda d: d.pop("kind"), '"kind"'),
    ],
)
def test_a_malformed_field_is_named(change: object, named: str) -> None:
    data = Finding.from_json(
        {
            "kind": "crash",
            "severity": "high",
            "surface": "prompt",
            "name": "summarize",
            "message": "KeyError",
            "fingerprint": "ab12",
            "repro": {"seed": 1, "case_index": 0, "arguments": {}, "transport": "stdio"},
        }
    ).to_json()
    change(data)  # type: ignore[operator]
    with pytest.raises(ValueError, match=named.replace("[", r"\[").replace("]", r"\]")):
        Finding.from_json(data)
