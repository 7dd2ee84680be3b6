"""Everything the case stream of one tool draws from: fixed candidates and two random streams.

A `CaseSource` is a pure function of (schema, max_string); the random streams are pure functions
of their seed. It runs inside the generation worker process (see `_worker`).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, Final

from fuzzgate.generate._base import BaseBuilder
from fuzzgate.generate._document import SchemaDocument
from fuzzgate.generate._draw import draw_values
from fuzzgate.generate._merge import merge_all
from fuzzgate.generate._model import UNAVAILABLE, JsonType, Leaf, Schema, Stream, UnsupportedSchema, json_key
from fuzzgate.generate._walk import Variant, VariantWalker, interleave
from fuzzgate.generate.adversarial import MutationEdits, RandomMutator, Violations
from fuzzgate.generate.boundary import BoundaryEdits
from fuzzgate.generate.schema import StrategyBuilder

Candidate = tuple[dict[str, Any], str]
"""Tool arguments and the origin label that says how they were made."""

MAX_FIXED: Final = 2000
MAX_DRAW_RUNS: Final = 4
_DRAWN_CACHE: Final = 64
_SEED_STEP: Final = 0x9E3779B97F4A7C15


class CaseSource:
    """The fixed candidates and the random draws for one (schema, max_string)."""

    def __init__(self, schema: Mapping[str, Any] | bool, *, max_string: int) -> None:
        document = SchemaDocument(schema)
        root = merge_all(document, [document.root, Leaf(path="", types=frozenset({JsonType.OBJECT}))], "")
        if isinstance(root, Leaf) and root.is_never:
            raise UnsupportedSchema("does not describe a JSON object (MCP tool arguments always are one) at /")
        self.document = document
        self.root = root
        self.builder = StrategyBuilder(document, max_string=max_string)
        self.bases = BaseBuilder(document, self.builder)
        self._valid = self.builder.build(root)
        self.violations = Violations(document, max_string=max_string)
        self._mutator = RandomMutator(self.violations, root)
        self._fixed: list[Candidate] | None = None
        self._drawn: dict[tuple[int, int], list[dict[str, Any]]] = {}

    def fixed(self) -> list[Candidate]:
        """The base value, then single-location boundary values and violations, earliest-first."""
        if self._fixed is None:
            self._fixed = self._compute_fixed()
        return self._fixed

    def _compute_fixed(self) -> list[Candidate]:
        base = self.bases.base(self.root)
        if base is UNAVAILABLE or not isinstance(base, dict):
            return []
        first = Variant(0, base, "example" if _uses_offered(self.root) else "base")
        boundary = VariantWalker(
            self.document, self.bases, BoundaryEdits(self.bases, max_string=self.builder.max_string)
        )
        mutations = VariantWalker(self.document, self.bases, MutationEdits(self.violations))
        ordered = interleave(
            [[first], boundary.variants(self.root, base, ""), mutations.variants(self.root, base, "")],
            cap=MAX_FIXED,
        )
        return _unique([(v.value, v.origin) for v in ordered if isinstance(v.value, dict)])

    def draw(self, stream: Stream, *, seed: int, count: int, base_seed: int | None = None) -> list[Candidate]:
        """Up to `count` distinct random candidates of the stream, pure in its seeds.

        The adversarial stream breaks one location of each valid value drawn for `base_seed` (the
        seed of the conform chunk with the same number, which mixed mode draws anyway), its choices
        made by a PRNG seeded with `seed`.
        """
        if stream == "conform":
            return [(value, "random") for value in self._valid_values(seed, count)]
        values = self._valid_values(seed if base_seed is None else base_seed, count) or [{}]
        found: dict[str, Candidate] = {}
        for attempt in range(MAX_DRAW_RUNS):
            for index, value in enumerate(values):
                mutated = self._mutator.mutate(value, random.Random(f"{seed}:{attempt}:{index}"))
                found.setdefault(json_key(mutated[0]), mutated)
            if len(found) >= count:
                break
        return list(found.values())[:count]

    def _valid_values(self, seed: int, count: int) -> list[dict[str, Any]]:
        """Distinct valid values: a repeated input is a wasted call to the server, so runs with
        derived seeds top the list up until it is full or the value space looks exhausted."""
        key = (seed, count)
        if key in self._drawn:
            return self._drawn[key]
        found: dict[str, dict[str, Any]] = {}
        strategy = self._valid
        for attempt in range(MAX_DRAW_RUNS if strategy is not None else 0):
            assert strategy is not None
            run_seed = (seed + attempt * _SEED_STEP) % 2**64
            before = len(found)
            for value in draw_values(strategy, seed_value=run_seed, count=count):
                if isinstance(value, dict):
                    found.setdefault(json_key(value), value)
            if len(found) >= count or len(found) - before < count // 8:
                break
        values = list(found.values())[:count]
        self._drawn[key] = values
        if len(self._drawn) > _DRAWN_CACHE:
            del self._drawn[next(iter(self._drawn))]
        return values


def _uses_offered(root: Schema) -> bool:
    """Whether the base object takes something the schema offers (for its origin label)."""
    if root.offered:
        return True
    return isinstance(root, Leaf) and root.object is not None and any(s.offered for _, s in root.object.properties)


def _unique(candidates: list[Candidate]) -> list[Candidate]:
    seen: set[str] = set()
    kept: list[Candidate] = []
    for arguments, origin in candidates:
        key = json_key(arguments)
        if key not in seen:
            seen.add(key)
            kept.append((arguments, origin))
    return kept
