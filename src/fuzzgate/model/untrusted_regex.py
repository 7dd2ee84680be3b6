"""Regular expressions a server supplies (a schema's `pattern` and `patternProperties`), run with a
time limit.

A server under test can send any schema, including a pattern with catastrophic backtracking
(`^(a|a)+$`). Python's `re` cannot be interrupted, so one such pattern matched in fuzzgate's own
process would stall the whole run. The third-party `regex` engine accepts `re` syntax and a
`timeout`; jsonschema lets a validator class swap the keywords that search. Nothing else in
fuzzgate's process runs a server-supplied pattern: generation runs in its worker process, which
has its own deadline.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

import regex
from jsonschema import ValidationError
from jsonschema.validators import extend

MATCH_TIMEOUT_S: Final = 0.25


class PatternTimeout(Exception):
    """Matching a server-supplied pattern took longer than `MATCH_TIMEOUT_S`."""

    def __init__(self, pattern: str) -> None:
        shown = pattern if len(pattern) <= 80 else pattern[:80] + "…"
        super().__init__(f"matching the pattern {shown!r} took longer than {MATCH_TIMEOUT_S:g}s")
        self.pattern = pattern


def search(pattern: str, text: str) -> bool:
    """`re.search(pattern, text)`, bounded; raises `PatternTimeout`."""
    try:
        return regex.search(pattern, text, timeout=MATCH_TIMEOUT_S) is not None
    except TimeoutError:
        raise PatternTimeout(pattern) from None


def _pattern(validator: Any, patrn: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not search(patrn, instance):
        yield ValidationError(f"{instance!r} does not match {patrn!r}")


def _pattern_properties(validator: Any, properties: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for patrn, subschema in properties.items():
        for key, value in instance.items():
            if search(patrn, key):
                yield from validator.descend(value, subschema, path=key, schema_path=patrn)


def bounded(validator_class: Any) -> Any:
    """`validator_class` with `pattern` and `patternProperties` matched under a time limit."""
    return extend(validator_class, {"pattern": _pattern, "patternProperties": _pattern_properties})
