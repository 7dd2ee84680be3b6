"""Values from descriptions: what a tool's author wrote in words, offered to the generator as `examples`.

A description often says what a field wants where the schema says only "string": `IANA timezone
name (e.g. 'America/New_York')`, `one of: csv, json`, `a path such as ./src`, `YYYY-MM-DD`. A value
like that gets past the tool's own checks to the code behind them, which a random string rarely
does. `enrich` reads the property's own description and the tool description's words after the
property's name, and adds what it finds to the property's `examples`, which the generator tries
first (the base value, then the rest as schema-offered values). Only values the property's own
schema accepts are added; examples are annotations, so validation is unchanged.

A format named in words (or by a name like `timezone`) has a fixed pool of real values (`_pools`):
its first few become examples; the rest, and named values past `MAX_EXAMPLES`, go under
`POOL_KEYWORD`, where only anchored draws look. A tool never sent the same request twice needs many
distinct valid values, while every example is a fixed candidate tried once, early.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from jsonschema.protocols import Validator

from fuzzgate.generate import _pools
from fuzzgate.generate._anchor import MAX_POOL, POOL_KEYWORD
from fuzzgate.generate._keywords import build_validator
from fuzzgate.generate._model import UnsupportedSchema, json_key

MAX_EXAMPLES: Final = 8
"""Per property, the schema's own examples included (they stay first and are never dropped)."""
_MAX_TEXT: Final = 20_000
"""Characters of a description read: descriptions come from the server."""
_MAX_VALUE: Final = 200
_MAX_SEGMENT: Final = 400
_MAX_DEPTH: Final = 32

_MARKER = re.compile(
    r"\b(?:e\.\s?g\.?|eg\.|for example|for instance|such as|examples?:|one of|either|"
    r"(?:possible|allowed|valid|supported|accepted) values(?: are)?|options(?: are)?|choices(?: are)?)[:,]?\s*",
    re.IGNORECASE,
)
"""Words after which a description lists values."""
_LIST_END = re.compile(r"[);\n]|\.(?:\s|$)")
_ITEM_SPLIT = re.compile(r"\s*,\s*(?:or\s+|and\s+)?|\s+(?:or|and)\s+|\s*\|\s*")
_QUOTED = re.compile(
    r"(?<![\w'])'([^'\n]{1,200})'(?![\w'])"
    r'|(?<![\w"])"([^"\n]{1,200})"(?![\w"])'
    r"|`([^`\n]{1,200})`"
    r"|\u2018([^\u2019\n]{1,200})\u2019"
    r"|\u201c([^\u201d\n]{1,200})\u201d"
)
_JSON_LITERAL = re.compile(r"\{[^{}\n]{0,200}\}|\[[^\[\]\n]{0,200}\]")
_URL = re.compile(r"\bhttps?://[^\s'\"`<>()\[\]{}]{1,200}")
_PATH = re.compile(r"(?<![\w:/.~\\-])(?:~|\.{1,2})?/[\w.~+@%-]+(?:/[\w.~+@%-]+)*/?")
_PIPE_LIST = re.compile(r"(?<![\w|])[\w.-]{1,40}(?:\|[\w.-]{1,40}){1,15}(?![\w|])")
_NUMBER = re.compile(r"(?<![\w.])-?\d{1,15}(?:\.\d{1,15})?(?:[eE][+-]?\d{1,3})?(?!\.?\w)")
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)(?<!\beg)(?<!\bvs)\.\s+(?=[A-Z])|\n")
_DATE_FORMAT = re.compile(
    r"(?<![A-Za-z])(?:YYYY|DD|MM|HH|hh)(?:[-/:.T ]?(?:YYYY|YY|MM|DD|HH|hh|mm|SS|ss|Z)){1,6}(?![A-Za-z])"
)
_DATE_PART = re.compile(r"YYYY|YY|MM|DD|HH|hh|mm|SS|ss")
_STOP_WORDS: Final = frozenset({"a", "an", "the", "etc", "and", "or", "of", "to", "is", "be", "any", "e", "g", "eg"})


@dataclass(frozen=True, slots=True)
class _Format:
    """A format named in words: the values a field's `examples` get, then the rest of its pool."""

    samples: tuple[Any, ...]
    pool: tuple[Any, ...]


def _split(values: tuple[Any, ...], samples: int) -> _Format:
    return _Format(values[:samples], values[samples:])


_ZONES: Final = _split(_pools.TIMEZONES, 4)
_LANGUAGES: Final = _split(_pools.LANGUAGES, 2)
_COUNTRIES: Final = _split(_pools.COUNTRIES, 2)
_CURRENCIES: Final = _split(_pools.CURRENCIES, 2)
_LOCALES: Final = _split(_pools.LOCALES, 2)

_WORD_FORMATS: Final[tuple[tuple[re.Pattern[str], _Format], ...]] = (
    (re.compile(r"\bISO[ -]?8601\b|\bRFC[ -]?3339\b", re.IGNORECASE), _split(_pools.ISO_8601, 3)),
    (re.compile(r"\bIANA\b|\btime[ _-]?zones?\b|\btz ?(?:data(?:base)?|name)\b|\bOlson\b", re.IGNORECASE), _ZONES),
    (re.compile(r"\bUUID\b|\bGUID\b", re.IGNORECASE), _split(_pools.UUIDS, 1)),
    (re.compile(r"\be-?mail\b", re.IGNORECASE), _split(_pools.EMAILS, 1)),
    (re.compile(r"\b(?:unix|epoch|posix)\b", re.IGNORECASE), _split(_pools.EPOCHS, 2)),
    (re.compile(r"\bISO[ -]?639\b|\blanguage code\b", re.IGNORECASE), _LANGUAGES),
    (re.compile(r"\bISO[ -]?3166\b|\bcountry code\b", re.IGNORECASE), _COUNTRIES),
    (re.compile(r"\bISO[ -]?4217\b|\bcurrency code\b", re.IGNORECASE), _CURRENCIES),
    (re.compile(r"\bBCP[ -]?47\b|\blocale\b", re.IGNORECASE), _LOCALES),
    (re.compile(r"\bsem(?:antic )?ver(?:sion)?\b", re.IGNORECASE), _split(_pools.SEMVERS, 1)),
    (re.compile(r"\bhex(?:adecimal)? colou?r\b", re.IGNORECASE), _split(_pools.HEX_COLOURS, 1)),
)
"""Formats named in words, and real values of each."""

_NAME_FORMATS: Final[tuple[tuple[re.Pattern[str], _Format], ...]] = (
    (re.compile(r"(?:^|_)(?:tz|time_?zones?)$"), _ZONES),
    (re.compile(r"(?:^|_)locales?$"), _LOCALES),
    (re.compile(r"(?:^|_)(?:lang|lang_code|language_code)$"), _LANGUAGES),
    (re.compile(r"(?:^|_)country_code$"), _COUNTRIES),
    (re.compile(r"(?:^|_)currency(?:_code)?$"), _CURRENCIES),
)
"""Formats a property's name says (snake_case, camelCase as snake_case), for one whose own
description names none: `timezone`, `source_timezone`, `tz`, `locale`, `currency_code`. Only names
with one common meaning: a `language` may be a programming language, a `country` a country's name."""


@dataclass(frozen=True, slots=True)
class _Found:
    position: int
    value: Any


def enrich(schema: dict[str, Any], description: str) -> dict[str, Any]:
    """A copy of a tool's input schema whose properties (nested ones, array items) carry the values
    their descriptions and the tool description name, as `examples` after their own, and the rest
    of the pools of the formats they name under `POOL_KEYWORD` (at most `MAX_POOL`).

    Pure: the same schema and description give the same result. A schema the validator refuses is
    returned as it is (the generator reports it).
    """
    enriched = copy.deepcopy(schema)
    if not isinstance(enriched, dict):
        return enriched
    try:
        validator = build_validator(schema, bounded_patterns=True)
    except UnsupportedSchema:
        return enriched
    names = frozenset(_property_names(enriched))
    _Enricher(validator, description[:_MAX_TEXT], names).walk(enriched, None, (), 0)
    return enriched


class _Enricher:
    def __init__(self, validator: Validator, description: str, names: frozenset[str]) -> None:
        self.validator = validator
        self.description = description
        self.names = names

    def walk(self, node: Any, name: str | None, inherited: tuple[str, ...], depth: int) -> None:
        if not isinstance(node, dict) or depth > _MAX_DEPTH:
            return
        own = node.get("description")
        texts = ((own[:_MAX_TEXT],) if isinstance(own, str) else ()) + inherited
        if name is not None:
            self._enrich(node, name, texts)
        properties = node.get("properties")
        if isinstance(properties, dict):
            for key, sub in properties.items():
                self.walk(sub, str(key), (), depth + 1)
        items = node.get("items")
        # Array items inherit the array's name and words: "tags, e.g. 'urgent'" names item values.
        for sub in items if isinstance(items, list) else [items]:
            self.walk(sub, name, texts, depth + 1)
        prefix = node.get("prefixItems")
        for sub in prefix if isinstance(prefix, list) else []:
            self.walk(sub, name, texts, depth + 1)
        for keyword in ("anyOf", "oneOf", "allOf"):
            members = node.get(keyword)
            for sub in members if isinstance(members, list) else []:
                self.walk(sub, None, (), depth + 1)
        self.walk(node.get("additionalProperties"), None, (), depth + 1)
        for keyword in ("$defs", "definitions"):
            defined = node.get(keyword)
            for sub in defined.values() if isinstance(defined, dict) else []:
                self.walk(sub, None, (), depth + 1)

    def _enrich(self, node: dict[str, Any], name: str, texts: tuple[str, ...]) -> None:
        if "enum" in node or "const" in node:
            return
        existing = node.get("examples", [])
        if not isinstance(existing, list):
            return
        seen = {json_key(value) for value in existing}
        added: list[Any] = []
        pooled: list[Any] = []
        checker = self.validator.evolve(schema=node)
        for value, pool_only in self._candidates(name, texts):
            key = json_key(value)
            if key in seen or (isinstance(value, str) and value in self.names):
                continue
            seen.add(key)
            if not _accepts(checker, value):
                continue
            # `examples` become fixed candidates, each tried once early: they stay few. The rest
            # (a format's pool, values past the cap) is for anchored draws only.
            if not pool_only and len(existing) + len(added) < MAX_EXAMPLES:
                added.append(value)
            else:
                pooled.append(value)
                if len(pooled) >= MAX_POOL:
                    break
        if added:
            node["examples"] = [*existing, *added]
        if pooled:
            node[POOL_KEYWORD] = pooled

    def _candidates(self, name: str, texts: tuple[str, ...]) -> Iterator[tuple[Any, bool]]:
        """Values for the property, and whether each is for its pool only."""
        segments = _segments(self.description, name, self.names)
        for text in (*texts, *segments):
            for value in explicit_values(text):
                yield value, False
        formats = _field_formats(name, texts, segments)
        for found in formats:
            for value in found.samples:
                yield value, False
        for found in formats:
            for value in found.pool:
                yield value, True


def explicit_values(text: str) -> list[Any]:
    """The values a text names, in reading order: quoted and backticked values, JSON literals, URLs,
    paths, the items of lists after "e.g.", "such as", "one of" and the like, `a|b|c`, numbers."""
    found: list[_Found] = []
    literal_spans: list[tuple[int, int]] = []
    for match in _JSON_LITERAL.finditer(text):
        try:
            value = json.loads(match.group(0))
        except ValueError:
            continue
        found.append(_Found(match.start(), value))
        literal_spans.append(match.span())

    def inside_literal(position: int) -> bool:
        return any(start <= position < end for start, end in literal_spans)

    for match in _QUOTED.finditer(text):
        if not inside_literal(match.start()):
            quoted = next(group for group in match.groups() if group is not None)
            found.append(_Found(match.start(), quoted))
    for pattern in (_URL, _PATH, _NUMBER):
        for match in pattern.finditer(text):
            if not inside_literal(match.start()):
                found.append(_Found(match.start(), _typed(match.group(0).rstrip(".,:;"))))
    for match in _PIPE_LIST.finditer(text):
        for offset, item in enumerate(match.group(0).split("|")):
            found.append(_Found(match.start() + offset, item))
    for match in _MARKER.finditer(text):
        for offset, item in enumerate(_list_items(text, match.end())):
            found.append(_Found(match.end() + offset, item))
    found.sort(key=lambda entry: entry.position)
    values: list[Any] = []
    for entry in found:
        values.append(entry.value)
        if isinstance(entry.value, str) and _NUMBER.fullmatch(entry.value):
            values.append(_typed(entry.value))
    return values


def format_samples(text: str) -> list[Any]:
    """Real values of the formats a text names in words (`ISO 8601`, `IANA timezone`, `HH:MM`):
    the few that go to `examples` (`_pools` holds more of each, for anchored draws)."""
    return [sample for found in _formats_in(text) for sample in found.samples]


def _field_formats(name: str, texts: tuple[str, ...], segments: list[str]) -> list[_Format]:
    """The formats of a property: those its own words name, else the one its name says, else those
    the tool description's words after its name name."""
    own = [found for text in texts for found in _formats_in(text)]
    if own:
        return own
    # A format the property's own words name is its format: the tool description's words after a
    # name that is also a common word ("Convert time between timezones") may be about something
    # else, and a `time` field given IANA zones gets mostly wrong values. A name like
    # `source_timezone` is the property's own, and says more than the tool's words.
    normal = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower().replace("-", "_")
    named = [found for pattern, found in _NAME_FORMATS if pattern.search(normal)]
    if named:
        return named
    return [found for text in segments for found in _formats_in(text)]


def _formats_in(text: str) -> list[_Format]:
    """The formats a text names, in reading order."""
    found: list[tuple[int, _Format]] = []
    for match in _DATE_FORMAT.finditer(text):
        found.append((match.start(), _date_format(match.group(0))))
    for pattern, named in _WORD_FORMATS:
        where = pattern.search(text)
        if where is not None:
            found.append((where.start(), named))
    found.sort(key=lambda entry: entry[0])
    return [entry[1] for entry in found]


def _date_format(pattern: str) -> _Format:
    """`YYYY-MM-DD` rendered at each of `_pools.MOMENTS`: the first as the sample."""
    rendered: list[str] = []
    for moment in _pools.MOMENTS:
        text = _render_date(pattern, moment)
        rendered.append(text)
        if re.search(r"\d\d:\d\d:\d\d$", text):
            # JSON Schema's `time` and `date-time` want a zone; a description seldom writes one.
            rendered.append(f"{text}Z")
    distinct = tuple(dict.fromkeys(rendered))
    first = 2 if distinct[1:2] == (f"{distinct[0]}Z",) else 1
    return _split(distinct, first)


def _list_items(text: str, start: int) -> list[str]:
    """The bare items of the list starting at `start` (quoted ones are found on their own)."""
    tail = text[start : start + _MAX_SEGMENT]
    end = _LIST_END.search(tail)
    if end is not None:
        tail = tail[: end.start()]
    items = []
    for raw in _ITEM_SPLIT.split(tail):
        item = raw.strip().strip("'\"`\u2018\u2019\u201c\u201d").rstrip(".,:;!?")
        if item and not any(c.isspace() for c in item) and item.lower() not in _STOP_WORDS and item != "...":
            items.append(item[:_MAX_VALUE])
    return items


def _segments(description: str, name: str, names: frozenset[str]) -> list[str]:
    """The words of the tool description after each mention of `name`, up to the end of its
    sentence or line, or the next mention of another property."""
    if not description or len(name) < 2:
        return []
    # A whole word, not part of a path or a dotted name ("/path/to", "args.path").
    mention = re.compile(rf"(?<![\w./-]){re.escape(name)}(?![\w/-]|\.\w)", re.IGNORECASE)
    others = [other for other in names if other != name and len(other) >= 2]
    other_mention = (
        re.compile(
            r"(?<![\w./-])(?:"
            + "|".join(re.escape(o) for o in sorted(others, key=len, reverse=True))
            + r")(?![\w/-]|\.\w)",
            re.IGNORECASE,
        )
        if others
        else None
    )
    segments = []
    for match in mention.finditer(description):
        segment = description[match.end() : match.end() + _MAX_SEGMENT]
        ends = [found.start() for found in (_SENTENCE_END.search(segment),) if found is not None]
        if other_mention is not None:
            ends += [found.start() for found in (other_mention.search(segment),) if found is not None]
        segments.append(segment[: min(ends, default=len(segment))])
    return segments


def _render_date(pattern: str, moment: tuple[int, int, int, int, int, int]) -> str:
    """`YYYY-MM-DD` at (2024, 1, 15, 10, 30, 0) as 2024-01-15, `HH:MM` as 10:30 (MM after an hour
    is minutes; `hh` is a 12-hour clock)."""
    year, month, day, hour, minute, second = moment
    hour_seen = False

    def part(match: re.Match[str]) -> str:
        nonlocal hour_seen
        token = match.group(0)
        if token in ("HH", "hh"):
            hour_seen = True
            return f"{hour if token == 'HH' else (hour % 12 or 12):02d}"
        if token == "MM":
            return f"{minute if hour_seen else month:02d}"
        number = {"YYYY": year, "YY": year % 100, "DD": day, "mm": minute, "SS": second, "ss": second}[token]
        return f"{number:0{4 if token == 'YYYY' else 2}d}"

    return _DATE_PART.sub(part, pattern)


def _typed(text: str) -> Any:
    """A number where the text is one, else the text."""
    if _NUMBER.fullmatch(text):
        number = float(text)
        if number.is_integer() and re.fullmatch(r"-?\d+", text):
            return int(text)
        return number
    return text[:_MAX_VALUE]


def _accepts(checker: Validator, value: Any) -> bool:
    try:
        return bool(checker.is_valid(value))
    except Exception:
        # A pattern past its time limit, an unresolvable reference: not a value worth offering.
        return False


def _property_names(node: Any, depth: int = 0) -> Iterator[str]:
    if depth > _MAX_DEPTH:
        return
    if isinstance(node, Mapping):
        properties = node.get("properties")
        if isinstance(properties, Mapping):
            yield from (str(key) for key in properties)
        for value in node.values():
            yield from _property_names(value, depth + 1)
    elif isinstance(node, list):
        for value in node:
            yield from _property_names(value, depth + 1)
