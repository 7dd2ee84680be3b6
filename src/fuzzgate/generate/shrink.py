"""Smaller variants of a finding's failing call, each with whether it still conforms to the tool's
input schema: what verification replays to shrink a repro (`triage.minimize`).

The variants are the corpus tools' (`_reduce.shrink_candidates`: an optional field left out, fewer
array items, a string emptied or halved, a number moved towards 0; biggest reduction first) and
keep every bound the call satisfies. Validity is checked again all the same, so a repro says
truly whether its arguments conform: the oracles judge an internal error by it.
"""

from __future__ import annotations

from typing import Any

from fuzzgate.generate._keywords import build_validator
from fuzzgate.generate._model import UnsupportedSchema
from fuzzgate.generate._reduce import shrink_candidates


def smaller_calls(arguments: dict[str, Any], schema: dict[str, Any]) -> list[tuple[dict[str, Any], bool]]:
    """`arguments` made smaller in one place, biggest reduction first, each with whether it conforms
    to `schema`. None of them for a schema fuzzgate cannot validate against."""
    from fuzzgate.model.untrusted_regex import PatternTimeout

    try:
        validator = build_validator(schema, bounded_patterns=True)
    except UnsupportedSchema:
        return []
    found: list[tuple[dict[str, Any], bool]] = []
    for candidate, _ in shrink_candidates(arguments, schema):
        try:
            valid = bool(validator.is_valid(candidate))
        except PatternTimeout:
            valid = False
        except Exception:
            # The schema is the server's: one that validates nothing (a `$ref` that resolves
            # nowhere) must not end the run. Such a call is taken as not conforming.
            valid = False
        found.append((candidate, valid))
    return found
