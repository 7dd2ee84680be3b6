"""Values the server offered in its replies, offered back to the fields that take them.

Schema-driven values rarely name something that exists: a `note_id` drawn at random is never a
note's id, so the code behind the "not found" check is never reached. Stateful API fuzzers (RESTler,
Schemathesis' stateful testing) feed the identifiers a server returns to the operations that take
them; `Dictionary` does the same for MCP. `learn` walks a reply (a tools/call result's
`structuredContent` and text content, JSON text included, plain text for `id: 42`-style tokens,
UUIDs, paths and URIs; resource URIs from listings; root paths) and keeps each value with a class
(`ValueClass`, `value_class.py`) taken from the key it came under (`id`, `*_id`, `path`, `uri`, `name`, ...) or from its
own shape (a UUID, an absolute path, `scheme://`), and hint words (the entity: `note` from `note_id`,
from a `notes` list, from the tool `create_note`). `offer` puts one of them into a field (`fields.py`)
whose name, format and type take it.

Constants the server's own code compares against (`learn_constants`, from the coverage collector)
are offered the same way but kept apart from reply values: one named like a field (`mode` in
`if mode == "turbo"`) goes to that field, a number as `c - 1`, `c` and `c + 1`; an unnamed one to any
field of its type, every `LOOSE_EVERY`-th offer. They are not something the server handed out, so
they are never `fresh` (sequences start only from reply values) and never evict one.

Every string is kept with its hosts confined to reserved ones (`reserved`): a reply's link to a
real site, sent back, would reach it where no sandbox runs.

Pure and deterministic: values are kept in first-seen order (the oldest of a class dropped past
`PER_CLASS`) and `offer(..., k)` picks by `k` alone. Nothing here knows secret patterns (the check
stage does, and this stage may not import it); keys that name secrets are skipped, and the reports'
`Redactor` covers whatever else a value holds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import unquote, urlsplit

from fuzzgate.generate._constants import ConstantStore, Scalar, field_values
from fuzzgate.generate._reply import GENERIC_KEYS, held, parse_reply
from fuzzgate.generate._reply import Held as Held
from fuzzgate.generate.fields import Field, fields_of, put
from fuzzgate.generate.reserved import confine_text, names_host
from fuzzgate.generate.value_class import (
    ValueClass,
    name_key,
    normal_key,
    secret_key,
)

PER_CLASS = 256
"""At most this many values per class (and of values kept only by their key); the oldest go first."""
MAX_VALUE_CHARS = 512
ECHO_CHARS = 8
"""A learned string this long that is part of a request's string, or holds one, is an echo."""
LOOSE_EVERY = 4
"""When some field takes a reply value or a named constant, every this-many-th offer puts an
unnamed constant into a field of its type instead (an unnamed one fits any field, so rarely well)."""
_DIGITS = re.compile(r"-?[0-9]{1,18}")


@dataclass(frozen=True, slots=True)
class Entry:
    """One value a reply held."""

    value: str | int
    value_class: ValueClass | None
    """None: kept only for fields named exactly like `key`."""
    key: str
    """The key it came under, normalized (`noteId` and `note_id` are `noteid`); "" for a token of text."""
    hints: frozenset[str]
    """Words naming what it belongs to: from its key, the list it was in, the tool that returned it."""
    source: str


def score(field: Field, entry: Entry) -> int:
    """How well `entry` fits `field`: 3 same key, 2 same class and a shared hint word (`note_id`
    and an `id` returned by `create_note`), 1 same class, 0 not at all."""
    if entry.key and entry.key == field.key:
        return 3
    if field.value_class is None or entry.value_class is not field.value_class:
        return 0
    return 2 if entry.hints & field.hints else 1


def convert(field: Field, entry: Entry) -> str | int | None:
    """The entry's value as `field` takes it; an identifier goes as text or as a number, whichever
    the field is (`42` and `"42"` name the same object to most servers)."""
    value = entry.value
    identifier = entry.value_class is ValueClass.ID or field.value_class is ValueClass.ID
    if isinstance(value, int):
        if field.types & {"integer", "number"}:
            return value
        return str(value) if "string" in field.types and identifier else None
    if "string" in field.types:
        return value
    if identifier and field.types & {"integer", "number"} and _DIGITS.fullmatch(value):
        return int(value)
    return None


class Dictionary:
    """The values one target offered, by class, in first-seen order."""

    def __init__(self, per_class: int = PER_CLASS) -> None:
        self._per_class = per_class
        self._entries: dict[tuple[str, str], Entry] = {}
        """By (class or "", value as JSON), in first-seen order."""
        self._order: dict[tuple[str, str], int] = {}
        self._classes: dict[str, dict[tuple[str, str], None]] = {}
        """Each class's slots, oldest first (what `PER_CLASS` drops)."""
        self._keys: dict[str, dict[tuple[str, str], None]] = {}
        """Each key's slots: a field named like it takes them whatever their class."""
        self._added = 0
        self._ranked: dict[Field, list[tuple[int, Scalar]]] = {}
        """`ranked` per field, until the entries change."""
        self._constants = ConstantStore()
        self._loose: dict[Field, list[Scalar]] = {}
        """`loose` per field, until the constants change."""
        self.fresh: tuple[Entry, ...] = ()
        """The entries the last `learn` added."""
        self._sent: frozenset[str] = frozenset()

    def __len__(self) -> int:
        return len(self._entries)

    def entries(self) -> tuple[Entry, ...]:
        return tuple(self._entries.values())

    def learn(self, source: str, payload: Any, sent: Collection[str | int] = ()) -> int:
        """Keep the values `payload` (a parsed reply, a listing) holds; returns how many are new.
        `source` names where it came from (a tool's name): its words are hints for its values.
        Values of the request (`sent`) are not learned, nor (from `ECHO_CHARS` characters on) parts
        of them and values holding them: a reply echoing a random id back (`no note abc1`) or a
        path fuzzgate made up (a probe's, in this run's workspace) is not something the server offered."""
        return self.keep_held(source, held(source, payload), sent)

    def keep_held(self, source: str, found: Iterable[Held], sent: Collection[str | int] = ()) -> int:
        """`learn` for values a walk already found (`_reply.held` of the same `source`)."""
        added: list[Entry] = []
        self._sent = frozenset(str(value) for value in sent)
        try:
            for one in found:
                self._keep(one.value, one.key, one.value_class, one.hints, source, added)
        finally:
            self._sent = frozenset()
        self.fresh = tuple(added)
        return len(added)

    def learn_uris(self, source: str, uris: list[str]) -> int:
        """Resource URIs from a listing, root URIs the client offered."""
        return self.learn(source, [{"uri": uri} for uri in uris])

    def learn_constants(self, source: str, constants: Iterable[tuple[str | None, Scalar]]) -> int:
        """Keep constants the server's code compares against, as (name it is compared with or None,
        value); returns how many are new. `source` names where they came from (a file); unlike a
        reply's, its words are no hints: a constant goes by its name alone. Constants named like a
        secret, empty strings, booleans and non-finite numbers are skipped. `fresh` is left as it
        is: a constant is not a value the server handed out, so it starts no sequence."""
        del source
        added = 0
        for name, value in constants:
            if name and secret_key(name):
                continue
            if isinstance(value, str):
                value = confine_text(value, bare=bool(name) and names_host(name or ""))
            added += self._constants.add(name_key(name), value)
        if added:
            self._ranked.clear()
            self._loose.clear()
        return added

    def constants(self) -> tuple[tuple[str | None, Scalar], ...]:
        """The constants kept, as (normalized name or None, value): what `mutate` takes."""
        return self._constants.items()

    def offer(
        self, schema: Mapping[str, Any], arguments: Mapping[str, Any], k: int, tool: str = ""
    ) -> tuple[dict[str, Any], str] | None:
        """`arguments` with one field replaced by a dictionary value, and the origin naming the field
        (`dictionary:/properties/note_id`, never the value); None when no field takes any value.
        Which field and which value is `k`'s choice: fields in turn, then the best-fitting values in
        turn (every 4th time any fitting one, so an id of another kind gets tried too). Every
        `LOOSE_EVERY`-th `k` goes to the unnamed constants instead, when there are any (every `k`
        when nothing else fits)."""
        if not self._entries and not len(self._constants):
            return None
        fields = fields_of(schema, arguments, tool)
        found = [(f, ranked) for f in fields if (ranked := self.ranked(f))]
        loose = [(f, values) for f in fields if (values := self.loose(f))] if self._constants.unnamed() else []
        if loose:
            turn, place = divmod(k, LOOSE_EVERY)
            if not found or place == LOOSE_EVERY - 1:
                i = k if not found else turn
                field, values = loose[i % len(loose)]
                value: Scalar = values[i // len(loose) % len(values)]
                return put(arguments, field.path, value), f"dictionary:{field.pointer}"
            k = turn * (LOOSE_EVERY - 1) + place
        if not found:
            return None
        field, ranked = found[k % len(found)]
        j = k // len(found)
        best = ranked[0][0]
        pool = ranked if j % 4 == 3 else [r for r in ranked if r[0] == best]
        value = pool[j % len(pool)][1]
        return put(arguments, field.path, value), f"dictionary:{field.pointer}"

    def ranked(self, field: Field) -> list[tuple[int, Scalar]]:
        """The values `field` takes, best fit first, each in first-seen order, without repeats:
        reply values, then the constants named like the field (a fit of 3, as a reply value under
        the same key)."""
        cached = self._ranked.get(field)
        if cached is not None:
            return cached
        out: list[tuple[int, Scalar]] = []
        seen: set[tuple[bool, Scalar]] = set()
        slots = dict(self._classes.get(field.value_class.value, {})) if field.value_class else {}
        if field.key:
            slots.update(self._keys.get(field.key, {}))
        for slot in sorted(slots, key=self._order.__getitem__):
            entry = self._entries[slot]
            fit = score(field, entry)
            value = convert(field, entry) if fit else None
            if value is None:
                continue
            unique = (isinstance(value, str), value)
            if unique not in seen:
                seen.add(unique)
                out.append((fit, value))
        for constant in self._constants.named(field.key):
            for found in field_values(constant, field.types):
                same: tuple[bool, Scalar] = (isinstance(found, str), found)
                if same not in seen:
                    seen.add(same)
                    out.append((3, found))
        out.sort(key=lambda r: -r[0])
        self._ranked[field] = out
        return out

    def loose(self, field: Field) -> list[Scalar]:
        """The unnamed constants `field` takes, in first-seen order, without repeats."""
        cached = self._loose.get(field)
        if cached is not None:
            return cached
        out: dict[tuple[bool, Scalar], Scalar] = {}
        for constant in self._constants.unnamed():
            for found in field_values(constant, field.types):
                out.setdefault((isinstance(found, str), found), found)
        self._loose[field] = list(out.values())
        return self._loose[field]

    def _keep(
        self,
        value: str | int,
        key: str,
        value_class: ValueClass | None,
        hints: frozenset[str],
        source: str,
        added: list[Entry],
    ) -> None:
        if isinstance(value, str):
            value = confine_text(value, bare=bool(key) and names_host(key))
        text = str(value)
        if text in self._sent or (
            len(text) >= ECHO_CHARS and any(len(s) >= ECHO_CHARS and (text in s or s in text) for s in self._sent)
        ):
            return
        if isinstance(value, str):
            if not value or len(value) > MAX_VALUE_CHARS or not value.isprintable():
                return
            if value_class is ValueClass.URI and urlsplit(value).password is not None:
                return
        normal = normal_key(key)
        if normal in GENERIC_KEYS:
            normal = ""
        if value_class is None and not normal:
            return
        slot = (value_class.value if value_class else "", json.dumps(value))
        known = self._entries.get(slot)
        if known is not None:
            # Same value again: what it was called this time is a hint too (its position stays).
            if not (hints <= known.hints and (known.key or not normal)):
                self._ranked.clear()
                self._entries[slot] = replace(known, key=known.key or normal, hints=known.hints | hints)
                if not known.key and normal:
                    self._keys.setdefault(normal, {})[slot] = None
        else:
            entry = Entry(value, value_class, normal, hints, source)
            self._ranked.clear()
            self._make_room(slot[0])
            self._entries[slot] = entry
            self._order[slot] = self._added
            self._added += 1
            self._classes.setdefault(slot[0], {})[slot] = None
            if normal:
                self._keys.setdefault(normal, {})[slot] = None
            added.append(entry)
        if value_class is ValueClass.URI and isinstance(value, str) and value.startswith("file://"):
            path = unquote(urlsplit(value).path)
            if len(path) > 1:
                self._keep(path, "", ValueClass.PATH, hints, source, added)

    def _make_room(self, value_class: str) -> None:
        same = self._classes.get(value_class, {})
        while same and len(same) >= self._per_class:
            slot = next(iter(same))
            del same[slot]
            entry = self._entries.pop(slot)
            del self._order[slot]
            keyed = self._keys.get(entry.key)
            if keyed is not None:
                keyed.pop(slot, None)
                if not keyed:
                    del self._keys[entry.key]


MAX_PRODUCED = 16
"""The most values one reply is remembered to have brought, for a sequence's replay."""


def reply_values(source: str, payload: str) -> tuple[str | int, ...]:
    """The values a reply (its JSON, as `CallOutcome.payload`) brought, in the order `Dictionary`
    finds them (the first `MAX_PRODUCED`): recorded on a sequence's steps, so that a replay on a
    fresh server, which hands out other ids, can put the new ones where the old ones went."""
    return held_values(source, reply_held(source, payload))


def reply_held(source: str, payload: str) -> tuple[Held, ...]:
    """The values a reply (its JSON, as `CallOutcome.payload`) holds, parsed and walked once: for
    `Dictionary.keep_held` and `held_values` both."""
    return held(source, parse_reply(payload))


def held_values(source: str, found: Iterable[Held]) -> tuple[str | int, ...]:
    """`reply_values` of a reply already walked (`_reply.held`)."""
    fresh = Dictionary()
    fresh.keep_held(source, found)
    return tuple(entry.value for entry in fresh.fresh[:MAX_PRODUCED])
