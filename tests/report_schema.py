"""The published JSON Schema of report.json (docs/schemas/report.schema.json), checked against every
report the tests make fuzzgate write: the e2e helper validates each report.json a CLI call wrote, and
the report's property tests validate what `RunReport.to_json` writes for any report."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

SCHEMA = Path(__file__).resolve().parents[1] / "docs" / "schemas" / "report.schema.json"


@cache
def _validator() -> Draft202012Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def schema_errors(report: Any) -> list[str]:
    """Where `report` departs from the schema, one line each (empty when it conforms)."""
    errors = sorted(_validator().iter_errors(report), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message[:300]}" for e in errors]


def assert_conforms(report: Any, where: str = "report.json") -> None:
    errors = schema_errors(report)
    assert not errors, f"{where} departs from {SCHEMA.name}:\n" + "\n".join(errors[:20])
