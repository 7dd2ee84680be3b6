"""Walking a schema alongside a value, to vary one location of the value at a time.

Each location (the value itself, each present property, the first array elements, each union
alternative) contributes its own variants; the walker rebuilds the enclosing containers around them
and interleaves locations tier by tier, so every property gets its early turn.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final

from fuzzgate.generate._base import BASE_RECURSION, BaseBuilder
from fuzzgate.generate._document import SchemaDocument
from fuzzgate.generate._model import UNAVAILABLE, Leaf, Ref, Schema, Union, escape_pointer

MAX_DEPTH: Final = 6
"""Containers nested deeper than this are varied only as a whole."""
PER_LOCATION_CAP: Final = 400


@dataclass(frozen=True, slots=True)
class Variant:
    """A value with one location changed. Lower tiers are tried first."""

    tier: int
    value: Any
    origin: str


Edits = Callable[[Schema, Any, str], Iterable[Variant]]
"""The variants a module proposes for one location: (node, current value, label) -> variants."""


def interleave(groups: list[list[Variant]], cap: int = PER_LOCATION_CAP) -> list[Variant]:
    """Tier by tier, taking the n-th variant of every group before the (n+1)-th of any."""
    ranked: list[tuple[int, int, int, Variant]] = []
    for index, group in enumerate(groups):
        seen: dict[int, int] = {}
        for variant in group:
            rank = seen.get(variant.tier, 0)
            seen[variant.tier] = rank + 1
            ranked.append((variant.tier, rank, index, variant))
    ranked.sort(key=lambda entry: entry[:3])
    return [entry[3] for entry in ranked[:cap]]


class VariantWalker:
    def __init__(self, document: SchemaDocument, bases: BaseBuilder, edits: Edits) -> None:
        self.document = document
        self.bases = bases
        self.edits = edits

    def variants(self, node: Schema, value: Any, label: str, depth: int = 0, refs: int = 0) -> list[Variant]:
        """Every variant of `value` that changes exactly one location below `node`."""
        groups = [list(self.edits(node, value, label))]
        if isinstance(node, Ref):
            if node.target in self.document.recursive_targets:
                refs += 1
            if refs <= BASE_RECURSION + 1:
                groups.append(self.variants(self.document.target(node.target), value, label, depth, refs))
        elif isinstance(node, Union):
            groups.extend(self._alternatives(node, value, label, depth, refs))
        elif depth < MAX_DEPTH:
            groups.extend(self._children(node, value, label, depth, refs))
        return interleave(groups)

    def _alternatives(self, union: Union, value: Any, label: str, depth: int, refs: int) -> list[list[Variant]]:
        groups: list[list[Variant]] = []
        holder = next((alt for alt in union.alternatives if self.document.accepts(alt, value)), None)
        for alternative in union.alternatives:
            current = value if alternative is holder else self.bases.base(alternative, refs)
            if current is not UNAVAILABLE:
                groups.append(self.variants(alternative, current, label, depth, refs))
        return groups

    def _children(self, leaf: Leaf, value: Any, label: str, depth: int, refs: int) -> list[list[Variant]]:
        groups: list[list[Variant]] = []
        if isinstance(value, dict) and leaf.object is not None:
            for key, schema in leaf.object.properties:
                if key in value:
                    child_label = f"{label}/properties/{escape_pointer(key)}"
                    found = self.variants(schema, value[key], child_label, depth + 1, refs)
                    groups.append([Variant(v.tier, {**value, key: v.value}, v.origin) for v in found])
        if isinstance(value, list) and value and leaf.array is not None:
            rule = leaf.array
            for index in range(min(len(value), len(rule.prefix) + 1)):
                if index < len(rule.prefix):
                    schema, child_label = rule.prefix[index], f"{label}/prefixItems/{index}"
                else:
                    schema, child_label = rule.items, f"{label}/items"
                found = self.variants(schema, value[index], child_label, depth + 1, refs)
                groups.append([Variant(v.tier, _replaced(value, index, v.value), v.origin) for v in found])
        return groups


def _replaced(values: list[Any], index: int, new: Any) -> list[Any]:
    copy = list(values)
    copy[index] = new
    return copy
