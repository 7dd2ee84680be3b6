"""Cost probes: values cheap to send and costly to evaluate, once per field that looks like it evaluates.

A calculator that evaluates `9**9**9`, a search that compiles `(a+)+$` and runs it on a long input,
a glob walker given `**/**/**/**/**/**/**/**/*`, a tool that allocates `count` items: each hangs or
runs out of memory on one request, and no random value gets there. Which fields get which values
is read from their names and descriptions (a field is an expression, a regex, a query, a glob or a
size); the tool's own name and description count too when it has one free string field (a
`calculate(input)` tool). A probe goes into a valid base case, only where the field's schema
accepts it, and shows its bug through the hang and crash oracles; nothing here checks an outcome.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

from fuzzgate.generate._keywords import build_validator
from fuzzgate.generate._model import UnsupportedSchema
from fuzzgate.generate.probes import Probe, ProbeCase, ProbeClass, string_fields

HUGE_COUNT: Final = 10**12
DEEP_PARENTHESES: Final = 5000
LONG_INPUT: Final = 4096
"""Characters of the input a catastrophic regex is matched against: exponential backtracking needs
a few dozen, a polynomial one needs the length."""


class Kind(Enum):
    """What a field looks like it is, by its words."""

    EXPRESSION = "expression"
    REGEX = "regex"
    QUERY = "query"
    GLOB = "glob"
    SIZE = "size"


@dataclass(frozen=True, slots=True)
class _Value:
    label: str
    """Which probe, in words that never hold the payload."""
    value: str
    input: str | None = None
    """What goes to the tool's input string, for a regex matched against it."""


_NESTED_QUANTIFIER = _Value("nested quantifier regex", "(a+)+$", "a" * LONG_INPUT + "!")
_OVERLAPPING_QUANTIFIER = _Value("overlapping quantifier regex", "(x+x+)+y", "x" * LONG_INPUT)
_DEEP_PARENTHESES = _Value("deep parentheses", "(" * DEEP_PARENTHESES + "1" + ")" * DEEP_PARENTHESES)
_HUGE_RANGE = _Value("huge range", "range(10**12)")
_HUGE_REPEAT = _Value("huge repeat", "'a'*10**10")

VALUES: Final[Mapping[Kind, tuple[_Value, ...]]] = {
    Kind.EXPRESSION: (
        _Value("power tower", "9**9**9"),
        _Value("tall power tower", "10**10**10**10"),
        _Value("caret power tower", "9^9^9"),
        _Value("huge power", "2**99999999"),
        _Value("huge factorial", "factorial(100000)"),
        _Value("sum of a huge range", "sum(range(10**12))"),
        _HUGE_REPEAT,
        _DEEP_PARENTHESES,
    ),
    Kind.REGEX: (_NESTED_QUANTIFIER, _OVERLAPPING_QUANTIFIER),
    Kind.QUERY: (
        _Value("recursive SQL", "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) SELECT count(*) FROM r"),
        _NESTED_QUANTIFIER,
        _DEEP_PARENTHESES,
    ),
    Kind.GLOB: (
        _Value("recursive glob", "**/**/**/**/**/**/**/**/*"),
        _Value("brace expansion", "{a,b}" * 20),
    ),
    Kind.SIZE: (
        _Value("huge number", "1e12"),
        _Value("huge integer", str(HUGE_COUNT)),
        _HUGE_RANGE,
        _HUGE_REPEAT,
    ),
}

_NAME_WORDS: Final[Mapping[Kind, frozenset[str]]] = {
    Kind.EXPRESSION: frozenset(
        {"expr", "expression", "formula", "math", "calc", "calculate", "equation", "eval", "evaluate", "arithmetic"}
    ),
    Kind.REGEX: frozenset({"regex", "regexp", "re", "pattern", "grep"}),
    Kind.QUERY: frozenset({"query", "sql", "filter", "where", "jq", "jsonpath", "xpath"}),
    Kind.GLOB: frozenset({"glob", "wildcard", "fnmatch"}),
    Kind.SIZE: frozenset({"size", "count", "repeat", "range", "times", "limit", "depth", "n", "num", "length"}),
}
"""Words of a field's name (split at `_`, `-` and case changes) that say what it is."""
_TEXT_WORDS: Final[Mapping[Kind, frozenset[str]]] = {
    Kind.EXPRESSION: frozenset(
        {
            "expression",
            "expressions",
            "formula",
            "formulas",
            "equation",
            "equations",
            "arithmetic",
            "calculator",
            "calculate",
            "evaluate",
            "eval",
            "math",
            "mathematical",
        }
    ),
    Kind.REGEX: frozenset({"regex", "regexp", "regexes", "pattern", "grep"}),
    Kind.QUERY: frozenset({"query", "sql", "jq", "jsonpath", "xpath"}),
    Kind.GLOB: frozenset({"glob", "globs", "wildcard", "wildcards", "fnmatch"}),
    Kind.SIZE: frozenset({"repeat", "repetitions"}),
}
"""Words of a description that say what a field is: fewer than for names, since common words
("where", "filter", "range", "times") say little in prose."""
_SIZE_NAMES: Final = frozenset(
    {"size", "count", "repeat", "times", "limit", "depth", "n", "num", "length", "iterations", "width", "height"}
)
"""Words of a number field's name that make it a count."""
_FILE_WORDS: Final = frozenset({"file", "files", "path", "paths", "filename", "filenames"})
"""With "pattern", words that make it a glob as much as a regex."""
_INPUT_NAMES: Final = ("text", "input", "string", "content", "data", "subject", "value", "haystack", "source", "body")
"""Names of the string a regex is matched against, most likely first."""
_NEEDS_THE_BASE: Final = frozenset({"required", "minProperties", "dependentRequired", "dependencies"})
"""Keywords a probe's fields alone may fail that the base it rides on satisfies."""
_NAME_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_TEXT_WORD = re.compile(r"[a-z]+")
_MAX_TEXT: Final = 4000


def cost_probes(
    tool: str, schema: Mapping[str, Any], base: Mapping[str, Any], description: str = ""
) -> list[ProbeCase]:
    """The cost probes of `tool`, each in a copy of `base` (`{}`: the fields it sets alone, as the
    engine plans them to ride on a call the tool accepted), field by field in schema order; only
    those the schema accepts, read without what the base would bring (`required`, `minProperties`,
    dependencies). Pure: the same inputs give the same probes."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    relaxed = {key: value for key, value in schema.items() if key not in _NEEDS_THE_BASE}
    try:
        validator = build_validator(relaxed, bounded_patterns=True)
    except UnsupportedSchema:
        return []

    def accepted(arguments: dict[str, Any]) -> bool:
        try:
            return bool(validator.is_valid(arguments))
        except Exception:
            # A pattern past its time limit, a reference that does not resolve: the schema comes
            # from the server, and a probe it cannot judge is not worth a case.
            return False

    strings = _free_strings(schema, properties)
    cases: list[ProbeCase] = []
    for field, sub in properties.items():
        name = str(field)
        for probe, arguments in _field_probes(tool, name, sub, strings, base, description):
            if accepted(arguments):
                cases.append(ProbeCase(arguments, probe))
    return cases


def kinds(name: str, description: str = "", context: str = "") -> list[Kind]:
    """What a string field looks like, from its name, its description and `context` (the tool's
    name and description, for a tool with one free string field)."""
    named = _name_words(name)
    text = f"{description[:_MAX_TEXT]} {context[:_MAX_TEXT]}".lower()
    # "regular expression" names a regex, not an arithmetic expression.
    words = set(_TEXT_WORD.findall(text.replace("regular expression", "regex")))
    found = [kind for kind in Kind if named & _NAME_WORDS[kind] or words & _TEXT_WORDS[kind]]
    if Kind.GLOB not in found and {"pattern", "patterns"} & (named | words) and _FILE_WORDS & (named | words):
        found.append(Kind.GLOB)
    return found


def _name_words(name: str) -> set[str]:
    return {word.lower() for word in _NAME_WORD.findall(name)}


def _field_probes(
    tool: str, name: str, sub: Any, strings: list[str], base: Mapping[str, Any], description: str
) -> Iterator[tuple[Probe, dict[str, Any]]]:
    if not isinstance(sub, Mapping):
        return
    if name in strings:
        own = sub.get("description")
        context = f"{tool} {description}" if len(strings) == 1 else ""
        labels: set[str] = set()
        for kind in kinds(name, own if isinstance(own, str) else "", context):
            for value in VALUES[kind]:
                if value.label in labels:
                    continue
                labels.add(value.label)
                arguments = {**base, name: value.value}
                target = _input_field(name, strings) if value.input is not None else None
                if target is not None and value.input is not None:
                    arguments[target] = value.input
                label = value.label if target is None else f"{value.label} on a long input"
                yield Probe(tool, name, ProbeClass.COST, label, value.value), arguments
    elif _takes_number(sub) and _name_words(name) & _SIZE_NAMES:
        yield Probe(tool, name, ProbeClass.COST, "huge count", HUGE_COUNT), {**base, name: HUGE_COUNT}


def _free_strings(schema: Mapping[str, Any], properties: Mapping[str, Any]) -> list[str]:
    """The top-level fields a free string may go to: `probes.string_fields`, and the optional
    strings pydantic writes as `anyOf: [{type: string}, {type: null}]`."""
    plain = set(string_fields(schema))
    return [str(name) for name, sub in properties.items() if str(name) in plain or _optional_string(sub)]


def _optional_string(sub: Any) -> bool:
    if not isinstance(sub, Mapping) or "enum" in sub or "const" in sub:
        return False
    members = sub.get("anyOf", sub.get("oneOf"))
    return isinstance(members, list) and any(
        isinstance(m, Mapping) and m.get("type") == "string" and not {"enum", "const", "format"} & m.keys()
        for m in members
    )


def _input_field(regex_field: str, strings: list[str]) -> str | None:
    """The other free string field a regex is likely matched against, if the tool has one."""
    others = [field for field in strings if field != regex_field]
    for wanted in _INPUT_NAMES:
        for field in others:
            if wanted in _name_words(field):
                return field
    return others[0] if others else None


def _takes_number(sub: Mapping[str, Any]) -> bool:
    kind = sub.get("type")
    kinds_declared = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else []
    if any(k in ("integer", "number") for k in kinds_declared):
        return True
    # pydantic's Optional[int]: anyOf [{type: integer}, {type: null}].
    members = sub.get("anyOf", sub.get("oneOf"))
    return isinstance(members, list) and any(isinstance(m, Mapping) and _takes_number(m) for m in members)
