"""Checking a tool's `structuredContent` against the `outputSchema` it declared.

fuzzgate checks this itself rather than through the SDK's `call_tool`, which raises a
`RuntimeError` whose English message was the only way to tell a drifting output from other
failures. Here the verdict is the jsonschema error itself: the failing keyword's path, no words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jsonschema import SchemaError
from jsonschema.exceptions import best_match
from jsonschema.validators import validator_for
from referencing import Registry
from referencing.exceptions import Unresolvable

from fuzzgate.model.untrusted_regex import PatternTimeout, bounded

MISSING = "structuredContent"
"""The path reported when a tool with an output schema sends no structured content at all."""


@dataclass(frozen=True, slots=True)
class Violation:
    path: str
    """The failing keyword's path in the output schema (`MISSING` for no structured content)."""
    message: str


class OutputChecker:
    """Validators for the output schemas of one server's tools, compiled once per schema."""

    def __init__(self) -> None:
        self._schemas: dict[str, Mapping[str, Any] | None] = {}
        self._validators: dict[str, Any] = {}

    def knows(self, tool: str) -> bool:
        return tool in self._schemas

    def learn(self, tool: str, schema: Mapping[str, Any] | None) -> None:
        if self._schemas.get(tool, {}) != schema:
            self._schemas[tool] = schema
            self._validators.pop(tool, None)

    def violation(self, tool: str, result_fields: set[str], structured: Any) -> Violation | None:
        """The schema path at which `structured` fails the tool's output schema (`MISSING` when a
        tool with a schema sent none), or None when it conforms, or when there is no schema or it
        cannot be used (not a valid schema, an unresolvable `$ref`, a pattern too costly to match)."""
        schema = self._schemas.get(tool)
        if schema is None:
            return None
        if structured is None and "structured_content" not in result_fields:
            return Violation(MISSING, "the tool declares an output schema but sent no structured content")
        validator = self._validator(tool, schema)
        if validator is None:
            return None
        try:
            error = best_match(validator.iter_errors(structured))
        except (Unresolvable, PatternTimeout, RecursionError):
            return None
        if error is None:
            return None
        path = "/".join(str(part) for part in error.schema_path)
        return Violation(path, f"structured content does not match the output schema: {error.message}")

    def _validator(self, tool: str, schema: Mapping[str, Any]) -> Any:
        if tool not in self._validators:
            cls = validator_for(schema)
            try:
                cls.check_schema(schema)
            except SchemaError:
                self._validators[tool] = None
            else:
                # `$ref`s resolve within the schema document only, as the SDK does; patterns are
                # the server's, matched under a time limit.
                self._validators[tool] = bounded(cls)(schema, registry=Registry())
        return self._validators[tool]
