"""Anchored draws: a random valid value whose documented fields hold documented values.

A random string rarely gets past a tool's own checks (an IANA timezone, a known id, an `HH:MM`
time), so a wholly random draw seldom reaches the code behind them. An anchored draw keeps the
random values of the other fields and puts into every field whose schema has `examples` (the
schema author's own, those `hints.enrich` read from the descriptions, a template variable's hostile
ones) or a pool (`POOL_KEYWORD`: the rest of the real values of a format `hints` recognised)
one of those values. Each field goes through all its values once every so many draws, in an order
that hashes (seed, tool, field, round), so that a tool never sent the same request twice gets every
value before any comes back, and the combinations of several fields vary from one round to the
next. Fields are found through `properties` only, following local `$ref`s and `allOf` on the way:
under a union or an array, which branch or element a value is in is not simple.

Sizes stay bounded: a value holding a string longer than `max_string` is never used (no random
draw holds one either), a field keeps at most `MAX_EXAMPLES` examples and `MAX_POOL` pool values,
at most `MAX_FIELDS` fields are anchored, and the values one draw takes add at most `DRAW_TEXT`
characters of JSON.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from jsonschema.protocols import Validator

from fuzzgate.generate._model import escape_pointer, json_key
from fuzzgate.generate.reserved import Confinement

POOL_KEYWORD: Final = "x-fuzzgate-pool"
"""The annotation holding a field's pool in an enriched schema (fuzzgate's own copy, never sent
anywhere): JSON Schema validators ignore keywords they do not know, so validity is unchanged."""
MAX_FIELDS: Final = 64
MAX_EXAMPLES: Final = 32
MAX_POOL: Final = 128
"""Pool values per field beyond its examples, in `hints`' output and in anchored draws."""
MAX_DEPTH: Final = 4
"""Objects nested deeper than this below the arguments are not searched for fields."""
DRAW_TEXT: Final = 1_000_000
"""Characters of JSON the examples of one draw may add; fields past it keep their random value."""
_MAX_PARTS: Final = 32


@dataclass(frozen=True, slots=True)
class AnchoredField:
    """A field of the arguments whose schema offers examples or a pool."""

    path: tuple[str, ...]
    """Property names from the arguments object down to the field."""
    pointer: str
    """The field's schema location, `/properties/a/properties/b`: names it in hashes and origins."""
    examples: tuple[str, ...]
    """The JSON text of each usable example, in the schema's order, then of each usable pool value."""


class Anchors:
    """The anchored fields of one input schema, and the anchoring of a draw."""

    def __init__(self, schema: Any, validator: Validator, *, max_string: int, salt: str) -> None:
        self.fields = tuple(_Finder(schema, validator, max_string).fields())
        self._salt = salt

    def anchor(self, arguments: dict[str, Any], draw: int, is_valid: Callable[[Any], bool]) -> dict[str, Any] | None:
        """`arguments` (a valid draw) with every anchored field set to one of its examples, or None
        when that changes nothing. Fields whose example the whole would not validate with are left
        as drawn, one at a time in field order, so the result always validates."""
        chosen: list[tuple[AnchoredField, Any]] = []
        spent = 0
        for field in self.fields:
            text = field.examples[self._pick(field, draw)]
            if spent + len(text) > DRAW_TEXT:
                continue
            spent += len(text)
            chosen.append((field, json.loads(text)))
        anchored = arguments
        for field, value in chosen:
            anchored = _placed(anchored, field.path, value)
        if _same(anchored, arguments):
            return None
        if is_valid(anchored):
            return anchored
        # The examples disagree with each other or with a drawn field (a `maxProperties`, an
        # example the enclosing object does not allow): keep those that validate, in order.
        kept = arguments
        for field, value in chosen:
            trial = _placed(kept, field.path, value)
            if not _same(trial, kept) and is_valid(trial):
                kept = trial
        return None if _same(kept, arguments) else kept

    def _pick(self, field: AnchoredField, draw: int) -> int:
        """Draws n*r to n*r+n-1 (round r, n values) take each value once: position p takes value
        (start + stride * p) mod n, with start and a stride prime to n hashed from the round."""
        count = len(field.examples)
        if count == 1:
            return 0
        round_, position = divmod(draw, count)
        material = json.dumps([self._salt, round_, field.pointer], ensure_ascii=True).encode("ascii")
        digest = int.from_bytes(hashlib.blake2b(material, digest_size=16).digest(), "big")
        start = digest % count
        stride = 1 + (digest >> 64) % (count - 1)
        while math.gcd(stride, count) != 1:
            stride += 1
        return (start + stride * position) % count


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON text: Python's `==` calls `true` and `1` equal."""
    return a is b or json.dumps(a, ensure_ascii=True) == json.dumps(b, ensure_ascii=True)


def _placed(arguments: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    """A copy of `arguments` with `value` at `path`; `arguments` itself when the enclosing object
    is absent or not an object (an optional parent the draw left out stays out)."""
    head, rest = path[0], path[1:]
    if not rest:
        return {**arguments, head: value}
    inner = arguments.get(head)
    if not isinstance(inner, dict):
        return arguments
    placed = _placed(inner, rest, value)
    return arguments if placed is inner else {**arguments, head: placed}


class _Finder:
    def __init__(self, root: Any, validator: Validator, max_string: int) -> None:
        self.root = root
        self.validator = validator
        self.max_string = max_string
        self.found: dict[tuple[str, ...], AnchoredField] = {}
        self.confinement = Confinement.of(root)

    def fields(self) -> Iterator[AnchoredField]:
        self._object(self.root, (), "", 0)
        return iter(self.found.values())

    def _object(self, node: Any, path: tuple[str, ...], pointer: str, depth: int) -> None:
        for part in self._parts(node):
            properties = part.get("properties")
            if not isinstance(properties, Mapping):
                continue
            for key, sub in properties.items():
                if len(self.found) >= MAX_FIELDS:
                    return
                name = str(key)
                where = (*path, name)
                if where in self.found:
                    continue
                at = f"{pointer}/properties/{escape_pointer(name)}"
                examples = self._examples(sub, name)
                if examples:
                    self.found[where] = AnchoredField(where, at, examples)
                elif depth + 1 < MAX_DEPTH:
                    self._object(sub, where, at, depth + 1)

    def _parts(self, node: Any) -> Iterator[Mapping[str, Any]]:
        """The schemas that together describe one location: the node, then its `$ref` targets and
        the members of its `allOf`s, nearest first (at most `_MAX_PARTS`: references may cycle)."""
        pending = deque([node])
        seen = 0
        while pending and seen < _MAX_PARTS:
            part = pending.popleft()
            seen += 1
            if not isinstance(part, Mapping):
                continue
            yield part
            target = self._target(part.get("$ref"))
            if target is not None:
                pending.append(target)
            members = part.get("allOf")
            if isinstance(members, list):
                pending.extend(members)

    def _target(self, ref: Any) -> Any:
        return local_ref(self.root, ref)

    def _examples(self, node: Any, name: str) -> tuple[str, ...]:
        """The usable examples of the nearest part that has some, then the usable values of the
        nearest part that has a pool, their hosts confined (`reserved`)."""
        offered = self._nearest(node, "examples")
        pooled = self._nearest(node, POOL_KEYWORD)
        if not offered and not pooled:
            return ()
        try:
            checker = self.validator.evolve(schema=node)
        except Exception:
            return ()
        usable: dict[str, str] = {}
        for values, limit in ((offered, MAX_EXAMPLES), (pooled, MAX_POOL)):
            taken = 0
            for offered in values:
                value = self.confinement.apply(offered, name)
                key = json_key(value)
                if key in usable or not _short_strings(value, self.max_string) or not _accepts(checker, value):
                    continue
                usable[key] = json.dumps(value, ensure_ascii=True, allow_nan=False)
                taken += 1
                if taken >= limit:
                    break
        return tuple(usable.values())

    def _nearest(self, node: Any, keyword: str) -> list[Any]:
        for part in self._parts(node):
            offered = part.get(keyword)
            if isinstance(offered, list) and offered:
                return offered
        return []


def _short_strings(value: Any, limit: int) -> bool:
    """Whether every string in `value` (object keys included) is at most `limit` long."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if len(item) > limit:
                return False
        elif isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
    return True


def _accepts(checker: Validator, value: Any) -> bool:
    try:
        return bool(checker.is_valid(value))
    except Exception:
        # A pattern past its time limit, an unresolvable reference: not a value to anchor on.
        return False


def local_ref(root: Any, ref: Any) -> Any:
    """The part of `root` a local `$ref` (`#/$defs/Item`) points at; None for any other reference
    or a pointer that leads nowhere."""
    if not isinstance(ref, str) or not ref.startswith("#"):
        return None
    node: Any = root
    for token in ref[1:].split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node
