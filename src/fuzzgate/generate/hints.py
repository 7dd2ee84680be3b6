"""Values from descriptions: what a tool's author wrote in words, offered to the generator as `examples`.

A description often says what a field wants where the schema says only "string": `IANA timezone
name (e.g. 'America/New_York')`, `one of: csv, json`, `a path such as ./src`, `YYYY-MM-DD`. A value
like that gets past the tool's own checks to the code behind them, which a random string rarely
does. `enrich` reads the property's own description and the tool description's words after the
property's name, and adds what it finds to the property's `examples`, which the generator tries
first (the base value, then the rest as schema-offered values). Only values the property's own
schema accepts are added; examples are annotations, so validation is unchanged.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from jsonschema.protocols import Validator

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

_WORD_SAMPLES: Final[tuple[tuple[re.Pattern[str], tuple[Any, ...]], ...]] = (
    (
        re.compile(r"\bISO[ -]?8601\b|\bRFC[ -]?3339\b", re.IGNORECASE),
        ("2024-01-15T10:30:00Z", "2024-01-15", "2024-01-15T10:30:00+02:00"),
    ),
    (
        re.compile(r"\bIANA\b|\btime[ _-]?zones?\b|\btz ?(?:data(?:base)?|name)\b|\bOlson\b", re.IGNORECASE),
        ("America/New_York", "Europe/London", "Asia/Tokyo", "UTC"),
    ),
    (re.compile(r"\bUUID\b|\bGUID\b", re.IGNORECASE), ("123e4567-e89b-12d3-a456-426614174000",)),
    (re.compile(r"\be-?mail\b", re.IGNORECASE), ("user@example.com",)),
    (re.compile(r"\b(?:unix|epoch|posix)\b", re.IGNORECASE), (1700000000, "1700000000")),
    (re.compile(r"\bISO[ -]?639\b|\blanguage code\b", re.IGNORECASE), ("en", "fr")),
    (re.compile(r"\bISO[ -]?3166\b|\bcountry code\b", re.IGNORECASE), ("US", "FR")),
    (re.compile(r"\bISO[ -]?4217\b|\bcurrency code\b", re.IGNORECASE), ("USD", "EUR")),
    (re.compile(r"\bBCP[ -]?47\b|\blocale\b", re.IGNORECASE), ("en-US", "fr-FR")),
    (re.compile(r"\bsem(?:antic )?ver(?:sion)?\b", re.IGNORECASE), ("1.2.3",)),
    (re.compile(r"\bhex(?:adecimal)? colou?r\b", re.IGNORECASE), ("#ff0000",)),
)
"""Formats named in words, and real values of each."""


@dataclass(frozen=True, slots=True)
class _Found:
    position: int
    value: Any


def enrich(schema: dict[str, Any], description: str) -> dict[str, Any]:
    """A copy of a tool's input schema whose properties (nested ones, array items) carry the values
    their descriptions and the tool description name, as `examples` after their own.

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
        if not isinstance(existing, list) or len(existing) >= MAX_EXAMPLES:
            return
        seen = {json_key(value) for value in existing}
        added: list[Any] = []
        checker = self.validator.evolve(schema=node)
        for value in self._candidates(name, texts):
            key = json_key(value)
            if key in seen or (isinstance(value, str) and value in self.names):
                continue
            seen.add(key)
            if _accepts(checker, value):
                added.append(value)
                if len(existing) + len(added) >= MAX_EXAMPLES:
                    break
        if added:
            node["examples"] = [*existing, *added]

    def _candidates(self, name: str, texts: tuple[str, ...]) -> Iterator[Any]:
        segments = _segments(self.description, name, self.names)
        for text in (*texts, *segments):
            yield from explicit_values(text)
        own = [sample for text in texts for sample in format_samples(text)]
        yield from own
        if not own:
            # A format the property's own words name is its format: the tool description's words
            # after a name that is also a common word ("Convert time between timezones") may be
            # about something else, and a `time` field given IANA zones gets mostly wrong values.
            for text in segments:
                yield from format_samples(text)


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
    """Real values of the formats a text names in words (`ISO 8601`, `IANA timezone`, `HH:MM`)."""
    found: list[_Found] = []
    for match in _DATE_FORMAT.finditer(text):
        rendered = _render_date(match.group(0))
        found.append(_Found(match.start(), rendered))
        if re.search(r"\d\d:\d\d:\d\d$", rendered):
            # JSON Schema's `time` and `date-time` want a zone; a description seldom writes one.
            found.append(_Found(match.start(), f"{rendered}Z"))
    for pattern, samples in _WORD_SAMPLES:
        named = pattern.search(text)
        if named is not None:
            found.extend(_Found(named.start(), sample) for sample in samples)
    found.sort(key=lambda entry: entry.position)
    return [entry.value for entry in found]


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


def _render_date(pattern: str) -> str:
    """`YYYY-MM-DD` as 2024-01-15, `HH:MM` as 10:30 (MM after an hour is minutes)."""
    hour_seen = False

    def part(match: re.Match[str]) -> str:
        nonlocal hour_seen
        token = match.group(0)
        if token in ("HH", "hh"):
            hour_seen = True
            return "10"
        if token == "MM":
            return "30" if hour_seen else "01"
        return {"YYYY": "2024", "YY": "24", "DD": "15", "mm": "30", "SS": "00", "ss": "00"}[token]

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
