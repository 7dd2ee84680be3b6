"""Structured mutation of a corpus entry's arguments: one change, at one location, per call.

JQF/Zest mutate the structure of an input that reached new code rather than its bytes; Fuchsia's
runner keeps a live corpus of such inputs and mutates them between fresh draws. `mutate` makes one
change to a kept entry's arguments, at any depth, with one of `OPERATORS`:

- `fresh`: a location takes the value the same location holds in a freshly generated case;
- `dictionary`: a field takes a dictionary value (the engine's callback over `Dictionary.offer`);
- `nudge`: a number goes to a boundary (its schema's bounds and their neighbours, exclusive ones
  included, 0, -1, 1, itself +-1 and x2, a constant the server's code compares against and its
  neighbours); a string to a length at or across its bounds, to a constant, doubled, cut in half,
  or to its enum's neighbour. Constants named like the field come first (half the time), and a
  number named like a string field gives it that length and its neighbours (`len(name) > 64`);
- `splice`: a location takes the value the same location holds in another entry of the tool;
- `grow` / `shrink`: an array gets an element duplicated or loses one, is emptied, or is resized
  to its `minItems`/`maxItems` and their neighbours, or to a constant its name is compared with
  (`len(items) == 3`, mined as ("items", 3));
- `toggle`: a boolean flips;
- `add` / `remove`: an object gains a property it lacks (from the fresh case, else the schema's
  default, example or simplest value) or loses one.

The operator is drawn among those that apply, then the location, then the variant, all with the
caller's `rng`: the same state gives the same change. Validity is the engine's to check with the
tool's generator; here a variant that keeps its location's bounds, and a removal of an optional
property, are preferred `PREFER_VALID` of the time. The origin names the operator and the
location's schema pointer, in the style of the dictionary's (`mutate:nudge:/properties/count`,
`mutate:dictionary:/properties/note_id`): after `mutate:<op>:`, a pointer as `learn.feed._placed` reads
one. Results share nothing with the input, which is never changed.

`shrink_candidates` and `cleanse_candidates` (from `_reduce`) make the smaller and the simpler
variants that corpus minimize and cleanse try.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

from fuzzgate.generate._constants import Scalar, number_variants, usable
from fuzzgate.generate._locate import (
    MISSING,
    Location,
    Path,
    Schemas,
    clone,
    same,
    value_at,
    with_value,
)
from fuzzgate.generate._model import escape_pointer
from fuzzgate.generate._reduce import (
    cleanse_candidates,
    default_value,
    integer_only,
    number_fits,
    number_rule,
    shrink_candidates,
)
from fuzzgate.generate.reserved import Confinement
from fuzzgate.generate.value_class import name_key

__all__ = ["OPERATORS", "DictionaryOffer", "cleanse_candidates", "mutate", "shrink_candidates"]

OPERATORS: Final = ("fresh", "dictionary", "nudge", "splice", "grow", "shrink", "toggle", "add", "remove")
PREFER_VALID: Final = 0.8
"""How often a variant that keeps its location's bounds is taken over any variant, when there is one."""
PREFER_NAMED: Final = 0.5
"""How often a constant named like the field is taken, when there is one."""
MAX_STRING: Final = 65_536
MAX_ITEMS: Final = 1024
"""Arrays are not grown past this many elements (a constant may be large)."""
MAX_POSITIONS: Final = 32
"""Array positions considered for duplicating or dropping an element (spread over the array)."""

DictionaryOffer: TypeAlias = Callable[[dict[str, Any]], tuple[dict[str, Any], str] | None]
Variant: TypeAlias = tuple[Any, bool]
"""A new value for a location, and whether it keeps the location's bounds."""


@dataclass(frozen=True, slots=True)
class _Site:
    """Where an operator may change the arguments: the location, and (for operators with one
    outcome) the value it would get there (`MISSING`: the key is removed)."""

    path: Path
    pointer: str
    valid: bool
    location: Location | None = None
    value: Any = MISSING


@dataclass(frozen=True, slots=True)
class _Choices:
    named: list[Variant]
    """Variants from constants named like the field: taken `PREFER_NAMED` of the time."""
    groups: list[list[Variant]]
    """The other variants, by kind: a kind is drawn, then a variant of it."""


def mutate(
    arguments: dict[str, Any],
    schema: dict[str, Any],
    rng: random.Random,
    *,
    fresh: dict[str, Any] | None = None,
    other: dict[str, Any] | None = None,
    constants: Sequence[tuple[str | None, Scalar]] = (),
    dictionary: DictionaryOffer | None = None,
) -> tuple[dict[str, Any], str] | None:
    """`arguments` with one change and its origin `mutate:<op>:<pointer>`, or None when no operator
    can change anything. `fresh` is a freshly generated case of the same tool, `other` another
    corpus entry's arguments for it, `constants` (name or None, value) pairs the server's code
    compares against (`Dictionary.constants()`), `dictionary` a callback returning new arguments
    and a `dictionary:<pointer>` origin (or None)."""
    return _confined(_mutant(arguments, schema, rng, fresh, other, constants, dictionary), schema)


def _confined(mutated: tuple[dict[str, Any], str] | None, schema: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    """The mutant with its hosts confined (`reserved`): halving or splicing a URL can make a real one."""
    if mutated is None:
        return None
    arguments, origin = mutated
    return Confinement.of(schema).apply(arguments), origin


def _mutant(
    arguments: dict[str, Any],
    schema: dict[str, Any],
    rng: random.Random,
    fresh: dict[str, Any] | None,
    other: dict[str, Any] | None,
    constants: Sequence[tuple[str | None, Scalar]],
    dictionary: DictionaryOffer | None,
) -> tuple[dict[str, Any], str] | None:
    schemas = Schemas.of(schema)
    here = schemas.locations(arguments, schema)
    names = _Names(constants)
    ops: dict[str, list[_Site]] = {}
    for op in OPERATORS:
        sites = list(_sites(op, here, schemas, fresh, other, arguments))
        if sites or (op == "dictionary" and dictionary is not None):
            ops[op] = sites
    while ops:
        op = list(ops)[rng.randrange(len(ops))]
        if op == "dictionary":
            del ops[op]
            offered = _offered(dictionary, arguments) if dictionary is not None else None
            if offered is not None:
                return offered
            continue
        sites = ops[op]
        site = _pick(rng, sites, lambda s: s.valid)
        change = _change(op, site, rng, names, schemas, fresh)
        if change is None:
            sites.remove(site)
            if not sites:
                del ops[op]
            continue
        return with_value(arguments, site.path, change[0]), f"mutate:{op}:{site.pointer}"
    return None


def _offered(dictionary: DictionaryOffer, arguments: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    # A copy: a callback that edits its argument in place must not reach the entry.
    found = dictionary(clone(arguments))
    if found is None or same(found[0], arguments):
        return None
    new, origin = found
    pointer = origin.split(":", 1)[1] if ":" in origin else origin
    return clone(new), f"mutate:dictionary:{pointer}"


def _sites(
    op: str,
    here: list[Location],
    schemas: Schemas,
    fresh: dict[str, Any] | None,
    other: dict[str, Any] | None,
    arguments: dict[str, Any],
) -> Iterator[_Site]:
    if op == "fresh" and isinstance(fresh, dict):
        for location in here[1:]:
            theirs = value_at(fresh, location.path)
            if theirs is not MISSING and not same(theirs, location.value):
                yield _Site(location.path, location.pointer, True, value=theirs)
    elif op == "splice" and isinstance(other, dict):
        for theirs in schemas.locations(other, schemas.root)[1:]:
            if _placeable(arguments, theirs.path):
                mine = value_at(arguments, theirs.path)
                if mine is MISSING or not same(mine, theirs.value):
                    yield _Site(theirs.path, theirs.pointer, True, value=theirs.value)
    elif op == "add":
        for location in here:
            yield from _additions(location, schemas, fresh)
    else:
        for location in here:
            yield from _located(op, location)


def _located(op: str, location: Location) -> Iterator[_Site]:
    value, path, pointer = location.value, location.path, location.pointer
    scalar = isinstance(value, str | int | float) and not isinstance(value, bool)
    if (op == "nudge" and scalar) or (op in ("grow", "shrink") and isinstance(value, list)):
        yield _Site(path, pointer, True, location)
    elif op == "toggle" and isinstance(value, bool):
        yield _Site(path, pointer, location.view.allows(not value), value=not value)
    elif op == "remove" and path and isinstance(path[-1], str):
        yield _Site(path, pointer, not location.required)


def _placeable(arguments: dict[str, Any], path: Path) -> bool:
    """Whether `path`'s container is in `arguments` (an element's index included)."""
    parent = value_at(arguments, path[:-1])
    key = path[-1]
    if isinstance(key, str):
        return isinstance(parent, dict)
    return isinstance(parent, list) and key < len(parent)


def _additions(location: Location, schemas: Schemas, fresh: dict[str, Any] | None) -> Iterator[_Site]:
    value = location.value
    if not isinstance(value, dict):
        return
    for key, schema in location.view.properties.items():
        if key in value:
            continue
        path = (*location.path, key)
        found = value_at(fresh, path) if isinstance(fresh, dict) else MISSING
        if found is MISSING:
            found = default_value(schemas, schemas.view(schema, MISSING))
        if found is not MISSING:
            yield _Site(path, f"{location.pointer}/properties/{escape_pointer(key)}", True, value=found)


def _change(
    op: str, site: _Site, rng: random.Random, names: _Names, schemas: Schemas, fresh: dict[str, Any] | None
) -> tuple[Any] | None:
    """The new value for `site` (in a 1-tuple: `MISSING` removes), or None when it has none."""
    location = site.location
    if location is None:
        return (site.value,)
    value = location.value
    if isinstance(value, str):
        choices = _string_choices(location, names)
    elif isinstance(value, list):
        choices = _array_choices(op, location, names, schemas, fresh)
    else:
        choices = _number_choices(location, names)
    return _choose(rng, choices, value)


def _choose(rng: random.Random, choices: _Choices, current: Any) -> tuple[Any] | None:
    named = _changed(choices.named, current)
    groups = [found for group in choices.groups if (found := _changed(group, current))]
    if named and (not groups or rng.random() < PREFER_NAMED):
        pool = named
    elif groups:
        pool = groups[rng.randrange(len(groups))]
    else:
        return None
    return (_pick(rng, pool, lambda v: v[1])[0],)


def _changed(variants: list[Variant], current: Any) -> list[Variant]:
    """`variants` that differ from `current`, each once, in order."""
    out: dict[str, Variant] = {}
    for variant in variants:
        if not same(variant[0], current):
            out.setdefault(repr(variant[0]) + type(variant[0]).__name__, variant)
    return list(out.values())


def _pick(rng: random.Random, items: list[Any], good: Callable[[Any], bool]) -> Any:
    fine = [item for item in items if good(item)]
    pool = fine if fine and rng.random() < PREFER_VALID else items
    return pool[rng.randrange(len(pool))]


class _Names:
    """The constants, by whether they are named like a field."""

    def __init__(self, constants: Sequence[tuple[str | None, Scalar]]) -> None:
        self._items = [(name_key(name), value) for name, value in constants if usable(value)]

    def strings(self, name: str) -> tuple[list[str], list[str]]:
        """(named like `name`, the others)."""
        key = name_key(name)
        named = [v for k, v in self._items if isinstance(v, str) and k and k == key]
        others = [v for k, v in self._items if isinstance(v, str) and not (k and k == key)]
        return named, others

    def numbers(self, name: str) -> tuple[list[int | float], list[int | float]]:
        key = name_key(name)
        named = [v for k, v in self._items if not isinstance(v, str) and k and k == key]
        others = [v for k, v in self._items if not isinstance(v, str) and not (k and k == key)]
        return named, others


def _number_choices(location: Location, names: _Names) -> _Choices:
    value, view = location.value, location.view
    integer = integer_only(view, value)
    rule = number_rule(view)

    def variants(numbers: Iterator[int | float] | list[int | float]) -> list[Variant]:
        out: list[Variant] = []
        for number in numbers:
            if isinstance(number, float) and not math.isfinite(number):
                continue
            if integer and isinstance(number, float) and number.is_integer():
                number = int(number)
            out.append((number, number_fits(view, number, integer=integer) and view.allows(number)))
        return out

    def around(constants: list[int | float]) -> list[int | float]:
        return [n for c in constants for n in number_variants(c, integer=integer)]

    bounds = [rule.minimum, rule.maximum, rule.exclusive_minimum, rule.exclusive_maximum]
    edges = around([b for b in bounds if b is not None])
    classic: list[int | float] = [0, -1, 1, value + 1, value - 1]
    if abs(value) < 1e300:
        classic.append(value * 2)
    if rule.multiple_of is not None:
        classic += [value + rule.multiple_of, value - rule.multiple_of]
    named, others = names.numbers(location.name)
    listed = view.enum or []
    members = [item for item in listed if isinstance(item, int | float) and not isinstance(item, bool)]
    return _Choices(
        variants(around(named)), [variants(edges), variants(classic), variants(around(others)), variants(members)]
    )


def _string_choices(location: Location, names: _Names) -> _Choices:
    value, view = location.value, location.view
    least = view.count("minLength") or 0
    most = view.count("maxLength")

    def fits(text: str) -> bool:
        return least <= len(text) and (most is None or len(text) <= most) and view.allows(text)

    def variants(texts: list[str]) -> list[Variant]:
        return [(text, fits(text)) for text in texts if len(text) <= MAX_STRING]

    lengths = [0, 1, least - 1, least] + ([most, most + 1] if most is not None else [])
    sized = [_sized(value, n) for n in lengths if 0 <= n <= MAX_STRING]
    edits = [value + value, value[: len(value) // 2]]
    members = [item for item in view.enum or [] if isinstance(item, str)]
    if value in members:
        index = members.index(value)
        neighbours = members[max(index - 1, 0) : index + 2]
    else:
        neighbours = members[:1]
    named, others = names.strings(location.name)
    # A number compared with a string field's name is mostly its length (`len(name) > 64`).
    lengths = [int(n) for c in names.numbers(location.name)[0] for n in number_variants(c, integer=True)]
    named += [_sized(value, n) for n in lengths if 0 <= n <= MAX_STRING]
    return _Choices(variants(named), [variants(sized), variants(edits), variants(neighbours), variants(others)])


def _sized(text: str, length: int) -> str:
    """`text` cut or repeated to `length` characters ("a"s when it is empty)."""
    if length <= len(text):
        return text[:length]
    base = text or "a"
    return (base * (length // len(base) + 1))[:length]


def _array_choices(
    op: str, location: Location, names: _Names, schemas: Schemas, fresh: dict[str, Any] | None
) -> _Choices:
    items, view = location.value, location.view
    least = view.count("minItems") or 0
    most = view.count("maxItems")
    unique = view.keyword("uniqueItems") is True
    sizes = [least - 1, least, least + 1] + ([most - 1, most, most + 1] if most is not None else [])
    named = [n for c in names.numbers(location.name)[0] for n in number_variants(c, integer=True)]
    named_sizes = [int(n) for n in named if 0 <= n <= MAX_ITEMS]
    count = len(items)
    positions = sorted({i * count // MAX_POSITIONS for i in range(MAX_POSITIONS)}) if count else []

    def fits(new: list[Any], *, repeats: bool = False) -> bool:
        return least <= len(new) and (most is None or len(new) <= most) and not (repeats and unique)

    def variants(lists: list[list[Any]], *, repeats: bool = False) -> list[Variant]:
        return [(new, fits(new, repeats=repeats) and view.allows(new)) for new in lists]

    if op == "grow":
        filler = _filler(location, schemas, fresh)
        duplicated = [[*items[: i + 1], items[i], *items[i + 1 :]] for i in positions]
        grown = [_resized(items, n, filler) for n in sizes if count < n <= MAX_ITEMS and filler]
        to_named = [_resized(items, n, filler) for n in named_sizes if n > count and filler]
        return _Choices(variants(to_named, repeats=True), [variants(duplicated, repeats=True), variants(grown)])
    dropped = [[*items[:i], *items[i + 1 :]] for i in positions]
    cut = [items[:n] for n in [0, *sizes] if 0 <= n < count]
    to_named = [items[:n] for n in named_sizes if n < count]
    return _Choices(variants(to_named), [variants(dropped), variants(cut)])


def _filler(location: Location, schemas: Schemas, fresh: dict[str, Any] | None) -> list[Any]:
    """What a grown array repeats: its own elements, else the fresh case's, else its item schema's
    default or simplest value."""
    if location.value:
        return list(location.value)
    theirs = value_at(fresh, location.path) if isinstance(fresh, dict) else MISSING
    if isinstance(theirs, list) and theirs:
        return theirs
    schema, _ = schemas.child(location.view, location.pointer, 0)
    found = default_value(schemas, schemas.view(schema, MISSING))
    return [] if found is MISSING else [found]


def _resized(items: list[Any], length: int, filler: list[Any]) -> list[Any]:
    if length <= len(items):
        return items[:length]
    return [*items, *(filler[i % len(filler)] for i in range(length - len(items)))]
