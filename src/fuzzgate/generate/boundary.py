"""Schema-offered and boundary values for one location: the cases worth trying early and often.

Tier 1 is what the schema itself names (examples, default, enum, const, other union alternatives,
optional properties the base leaves out); tier 2 the edges of declared bounds, the classic small
values and array sizes (`_structure`); tier 3 the magic numbers, hostile strings and shapes (deep
nesting, many properties). Whether a value is valid is not decided here:
the case stream validates every candidate and files it under conform or adversarial accordingly.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, Final

from fuzzgate.generate._base import BaseBuilder
from fuzzgate.generate._formats import INVALID_SAMPLES, VALID_SAMPLES
from fuzzgate.generate._model import (
    UNAVAILABLE,
    JsonType,
    Leaf,
    NumberRule,
    Ref,
    Schema,
    StringRule,
    Union,
    describe,
    escape_pointer,
)
from fuzzgate.generate._numbers import lower_bound, upper_bound
from fuzzgate.generate._structure import ByteAllowance, array_variants, many_properties_variant, nesting_variants
from fuzzgate.generate._walk import Variant
from fuzzgate.generate.value_class import ValueClass, key_class

MAGIC_INTEGERS: Final = (
    2**31 - 1,
    2**31,
    -(2**31),
    -(2**31) - 1,
    2**53,
    2**53 + 1,
    -(2**53) - 1,
    2**63 - 1,
    2**63,
    -(2**63),
    2**64,
)
MAGIC_FLOATS: Final = (0.5, -0.5, 1e-7, 5e-324, -0.0, 1.7976931348623157e308, -1.7976931348623157e308)
TRAVERSALS: Final = ("..", "../", "../../../../etc/passwd")
"""Path traversal: the strings a field named as a path (`path`, `file`, `dir`: `value_class`) gets
among its first edge cases, since climbing out of the allowed directory is the bug such a field
has most often; other strings get them with the rest of `HOSTILE_STRINGS`."""
HOSTILE_STRINGS: Final = (
    "\x00",
    "\u202eevil\u202c",
    "😀",
    "👩\u200d👩\u200d👧\u200d👦",
    "e\u0301\u0302\u0303\u0304",
    "\ud800",
    " ",
    "\t\r\n",
    "null",
    "%s%n%x",
    "' OR '1'='1",
    "${7*7}",
    "{{7*7}}",
    "$(id)",
    *TRAVERSALS,
)
"""NUL, RTL override, emoji, a ZWJ sequence, stacked combining marks, a lone surrogate (which JSON
escapes can carry and transports may refuse), and the usual probes: SQL, format string, template
and shell injection, path traversal."""


class BoundaryEdits:
    """The `Edits` of the boundary walk."""

    def __init__(self, bases: BaseBuilder, *, max_string: int) -> None:
        self.bases = bases
        self.max_string = max_string
        self.allowance = ByteAllowance()

    def __call__(self, node: Schema, value: Any, label: str) -> Iterator[Variant]:
        for offered in node.offered:
            yield Variant(1, offered.value, f"{offered.source}:{label}={describe(offered.value)}")
        if isinstance(node, Ref):
            return
        if isinstance(node, Union):
            for alternative in node.alternatives:
                other = self.bases.base(alternative)
                if other is not UNAVAILABLE:
                    yield Variant(1, other, f"alternative:{label}={describe(other)}")
            return
        yield from self._leaf(node, value, label)

    def _leaf(self, leaf: Leaf, value: Any, label: str) -> Iterator[Variant]:
        if leaf.enum is not None:
            kind = "const" if len(leaf.enum) == 1 else "enum"
            for item in leaf.enum:
                yield Variant(1, item, f"{kind}:{label}={describe(item)}")
        types = leaf.types
        if JsonType.INTEGER in types or JsonType.NUMBER in types:
            floats = JsonType.NUMBER in types
            for tier, number in _numbers(leaf.number, floats=floats):
                yield Variant(tier, number, f"boundary:{label}={describe(number)}")
        if JsonType.STRING in types:
            for tier, text in self._strings(leaf.string, path=_names_a_path(label)):
                yield Variant(tier, text, f"boundary:{label}={describe(text)}")
        if JsonType.BOOLEAN in types:
            for flag in (True, False):
                yield Variant(2, flag, f"boundary:{label}={describe(flag)}")
        if JsonType.NULL in types:
            yield Variant(2, None, f"boundary:{label}=null")
        if JsonType.ARRAY in types and isinstance(value, list):
            yield from array_variants(leaf, value, label, self.bases, self.allowance)
        if JsonType.OBJECT in types and isinstance(value, dict):
            yield from self._objects(leaf, value, label)
            yield from many_properties_variant(leaf, value, label, self.bases, self.allowance)
        yield from nesting_variants(leaf, label)

    def _strings(self, rule: StringRule, *, path: bool) -> Iterator[tuple[int, str]]:
        if path:
            for text in TRAVERSALS:
                yield 2, text
        lengths = [0, rule.min_length, rule.min_length - 1]
        if rule.max_length is not None:
            lengths += [rule.max_length, rule.max_length + 1]
        for length in lengths:
            if 0 <= length <= self.max_string:
                yield 2, "a" * length
        for sample in VALID_SAMPLES.get(rule.format or "", ())[1:]:
            yield 2, sample
        for sample in INVALID_SAMPLES.get(rule.format or "", ()):
            yield 3, sample
        yield 3, "A" * self.max_string
        for text in HOSTILE_STRINGS:
            if not (path and text in TRAVERSALS):
                yield 3, text

    def _objects(self, leaf: Leaf, value: dict[str, Any], label: str) -> Iterator[Variant]:
        rule = leaf.object
        if rule is None:
            return
        extra = self.bases.base(rule.additional) if rule.additional_explicit else UNAVAILABLE
        if extra is not UNAVAILABLE:
            # Entries of a map type are ordinary input; servers that merge them into objects have
            # choked on __proto__. Merely open objects get no unknown keys in valid cases: many
            # servers reject those whatever the schema says, and that is not the bug we look for.
            for key in ("extra", "__proto__"):
                if key not in value and rule.property(key) is None:
                    yield Variant(2, {**value, key: extra}, f"extra:{label}/{escape_pointer(key)}")
        for key, schema in rule.properties:
            where = f"{label}/properties/{escape_pointer(key)}"
            if key in value and key not in rule.required:
                yield Variant(2, {k: v for k, v in value.items() if k != key}, f"omit:{where}")
            elif key not in value:
                found = self.bases.base(schema)
                if found is not UNAVAILABLE:
                    yield Variant(1, {**value, key: found}, f"add:{where}={describe(found)}")
        if value and label:
            yield Variant(3, {}, f"boundary:{label}={{}}")


def _names_a_path(label: str) -> bool:
    """Whether the property at `label` (a JSON pointer: `/properties/file_path`) is named as a path."""
    parent, _, key = label.rpartition("/")
    name = key.replace("~1", "/").replace("~0", "~")
    return parent.endswith("/properties") and key_class(name) is ValueClass.PATH


def _numbers(rule: NumberRule, *, floats: bool) -> Iterator[tuple[int, int | float]]:
    for bound in (lower_bound(rule), upper_bound(rule)):
        if bound is None:
            continue
        edge = bound[0]
        if floats or isinstance(edge, float):
            edge_float = float(edge) if math.isfinite(float(edge)) else 0.0
            yield 2, edge
            yield 2, math.nextafter(edge_float, math.inf)
            yield 2, math.nextafter(edge_float, -math.inf)
        if isinstance(edge, int) or float(edge).is_integer():
            whole = int(edge)
            for number in (whole, whole - 1, whole + 1):
                yield 2, number
    for number in (0, 1, -1):
        yield 2, number
    if rule.multiple_of is not None:
        step = rule.multiple_of
        yield 2, step
        yield 2, -step
        yield 3, step * 3
        if floats or step > 1:
            yield 3, step / 2 if floats else int(step) + 1
    for number in MAGIC_INTEGERS:
        yield 3, number
    if floats:
        for number_float in MAGIC_FLOATS:
            yield 3, number_float
