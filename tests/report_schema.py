"""The published JSON Schemas of what fuzzgate writes for users (docs/schemas/): report.json, checked
against every report the tests make fuzzgate write (the e2e helper validates each report.json a CLI
call wrote; the report's property tests, whatever `RunReport.to_json` writes for any report), and a
baseline entry, checked against whatever `BaselineEntry.to_bytes` writes for any finding, and a
corpus entry, against whatever `CorpusEntry.to_json` writes for any entry, and each line of a
`--trace` file an e2e call wrote. A schema
refers to another by its file name, as a validator reading them from docs/schemas/ resolves it."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

SCHEMAS = Path(__file__).resolve().parents[1] / "docs" / "schemas"
REPORT = "report.schema.json"
BASELINE = "baseline.schema.json"
CORPUS = "corpus.schema.json"
TRACE = "trace.schema.json"


@cache
def _registry() -> Registry:
    resources = []
    for path in sorted(SCHEMAS.glob("*.schema.json")):
        contents = json.loads(path.read_text(encoding="utf-8"))
        Draft202012Validator.check_schema(contents)
        resources.append((path.name, Resource.from_contents(contents, default_specification=DRAFT202012)))
    return Registry().with_resources(resources)


@cache
def _validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(_registry()[name].contents, registry=_registry())


def schema_errors(data: Any, schema: str = REPORT) -> list[str]:
    """Where `data` departs from the schema, one line each (empty when it conforms)."""
    errors = sorted(_validator(schema).iter_errors(data), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message[:300]}" for e in errors]


def assert_conforms(data: Any, where: str = "report.json", schema: str = REPORT) -> None:
    errors = schema_errors(data, schema)
    assert not errors, f"{where} departs from {schema}:\n" + "\n".join(errors[:20])
