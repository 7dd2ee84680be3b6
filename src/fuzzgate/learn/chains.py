"""Sequences of calls on one object, as stateful API fuzzers run them (RESTler's producer-consumer
sequences, Schemathesis' stateful links): once a tool's reply brings a new value (a created note's
id), the tools that take such a value read it, update it, delete it, delete it again and read it
after the delete; and once a second object can be made, the two are interleaved (make B, delete A,
read B, read A). Bugs live there: a use after delete, a double delete, an index that deleting one
object corrupts for another.

What a tool does is read from its name, then from its description (`verb_of`); which tools take
the value is the dictionary's matching (`fuzzgate.generate.dictionary`). Only tools the plan
selected take part, so the destructive guard holds for every step: a delete step exists only when
the user allowlisted the delete tool.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from enum import StrEnum

from fuzzgate.plan.safety import name_words


class Verb(StrEnum):
    CREATE = "create"
    """Makes an object; in a sequence, the producer making the second object of an interleaving."""
    READ = "read"
    UPDATE = "update"
    DELETE = "delete"


_VERBS: tuple[tuple[Verb, frozenset[str]], ...] = (
    (Verb.CREATE, frozenset({"create", "new", "make", "insert", "post", "register", "upload", "init", "generate"})),
    (Verb.READ, frozenset({"get", "read", "show", "view", "describe", "list", "search", "fetch", "find", "query",
                           "inspect", "lookup", "info", "load", "download", "open", "export"})),
    (Verb.UPDATE, frozenset({"update", "set", "edit", "rename", "append", "add", "modify", "patch", "put", "write",
                             "move", "replace", "change", "tag", "save", "mark", "assign", "attach", "upsert"})),
    (Verb.DELETE, frozenset({"delete", "remove", "drop", "destroy", "clear", "close", "archive", "unlink", "erase",
                             "purge", "rm", "del", "trash", "revoke", "cancel", "discard", "detach"})),
)  # fmt: skip
DESCRIPTION_WORDS = 12
"""A description names what the tool does in its first words (`Removes a note by id.`)."""


def _verb_in(words: list[str]) -> Verb | None:
    for word in words:
        for verb, known in _VERBS:
            # `removes`, `deleted`, `reads`: the description's verbs come inflected.
            if word in known or (len(word) > 3 and (word.rstrip("sd") in known or word.removesuffix("es") in known)):
                return verb
    return None


def verb_of(name: str, description: str = "") -> Verb | None:
    """What a tool does to the object it takes: its name's first verb word, else its description's."""
    return _verb_in(name_words(name)) or _verb_in(name_words(description)[:DESCRIPTION_WORDS])


@dataclass(frozen=True, slots=True)
class Role:
    """One step of a sequence: what it does, to which of the two objects (`a` made by the call
    that started the sequence, `b` by the sequence's own producer step), and its name in origins."""

    verb: Verb
    label: str
    target: str = "a"


SINGLE: tuple[Role, ...] = (
    Role(Verb.READ, "first"),
    Role(Verb.UPDATE, "first"),
    Role(Verb.DELETE, "first"),
    Role(Verb.DELETE, "again"),
    Role(Verb.READ, "after-delete"),
)
"""create (already done) → read → update → delete → delete again → read after delete."""
INTERLEAVED: tuple[Role, ...] = (
    Role(Verb.CREATE, "second", "b"),
    Role(Verb.DELETE, "first-of-two"),
    Role(Verb.READ, "other", "b"),
    Role(Verb.READ, "after-delete"),
)
"""create A (already done), create B, delete A, read B, read A."""


def roles(template: tuple[Role, ...], verbs: Collection[Verb]) -> list[Role]:
    """The roles of `template` that the tools at hand can play (`verbs`: those some consumer of the
    value does; the producer always can). A read after a delete needs the delete; an interleaving
    needs a delete and a read, or it shows nothing a single sequence does not."""
    if template is INTERLEAVED and not {Verb.DELETE, Verb.READ} <= set(verbs):
        return []
    kept = [role for role in template if role.verb is Verb.CREATE or role.verb in verbs]
    if Verb.DELETE not in verbs:
        kept = [role for role in kept if role.label != "after-delete"]
    return kept
