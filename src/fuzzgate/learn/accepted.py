"""The values each tool accepted, field by field, drawn again and changed a little (`nearby`).

A tool that takes only a pool of values refuses almost every random string; once each pooled value
was sent, and a tool is never sent the same request twice, nothing gets past its checks any more.
`AcceptedValues` keeps, per tool and field, the values of the calls the tool accepted (an OK reply to
a schema-valid case), and, for a field none went through yet, the values its schema offers
(examples, those the descriptions name, the pool of a format `hints` recognised). `offer` puts one
of them into one field of a case, as it is or as one of its `nearby` variants, so that a good share
of a tool's calls (`AROUND_EVERY`) keeps reaching the code behind its checks.

Pure and deterministic: values are kept in first-accepted order, and which field, value and variant
a case takes hashes (tool, field, k) alone.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from fuzzgate.generate.fields import Field, fields_of, put
from fuzzgate.generate.nearby import nearby, variants
from fuzzgate.model.findings import Surface

AROUND_EVERY: Final = 3
"""Case k of a tool with k % AROUND_EVERY == 1, when it is a random draw, takes an accepted value or
a variant of one."""
MAX_VALUES: Final = 64
"""Accepted values kept per field (the first ones: later ones add little to a pool already known)."""
ORIGIN: Final = "accepted"

ToolKey = tuple[Surface, str]
Value = str | int


def _scalar(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _at(arguments: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = arguments
    for name in path:
        if not isinstance(value, Mapping) or name not in value:
            return None
        value = value[name]
    return value


class AcceptedValues:
    def __init__(self) -> None:
        self._values: dict[ToolKey, dict[tuple[str, ...], list[Value]]] = {}

    def learn(self, key: ToolKey, schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> int:
        """Keep the field values of a call the tool accepted; returns how many are new."""
        kept = self._values.setdefault(key, {})
        added = 0
        for field in fields_of(schema, arguments):
            value = _at(arguments, field.path)
            if not _scalar(value):
                continue
            values = kept.setdefault(field.path, [])
            if len(values) < MAX_VALUES and not any(type(v) is type(value) and v == value for v in values):
                values.append(value)
                added += 1
        return added

    def values(self, key: ToolKey, field: Field, offered: Mapping[tuple[str, ...], Sequence[Any]]) -> list[Value]:
        """The values `field` accepted, else those the schema offers it (`offered`)."""
        accepted = self._values.get(key, {}).get(field.path)
        if accepted:
            return accepted
        return [v for v in offered.get(field.path, ()) if _scalar(v)]

    def offer(
        self,
        key: ToolKey,
        schema: Mapping[str, Any],
        arguments: Mapping[str, Any],
        k: int,
        offered: Mapping[tuple[str, ...], Sequence[Any]],
    ) -> tuple[dict[str, Any], str] | None:
        """`arguments` with one field holding an accepted value, as it is or changed a little, and
        the origin naming the change and the field (`accepted:segment:/properties/timezone`, never the
        value); None when no field has a value to take."""
        found = [(f, values) for f in fields_of(schema, arguments, key[1]) if (values := self.values(key, f, offered))]
        if not found:
            return None
        field, values = found[k % len(found)]
        material = json.dumps([key[1], field.pointer, k // len(found)], ensure_ascii=True)
        digest = int.from_bytes(hashlib.blake2b(material.encode("ascii"), digest_size=16).digest(), "big")
        value = values[digest % len(values)]
        label, changed = nearby(value, (digest >> 64) % variants(value))
        if isinstance(changed, int) and not field.types & {"integer", "number"}:
            changed = str(changed)
        if isinstance(changed, str) and "string" not in field.types:
            return None
        return put(arguments, field.path, changed), f"{ORIGIN}:{label}:{field.pointer}"
