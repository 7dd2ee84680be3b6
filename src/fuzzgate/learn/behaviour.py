"""What a call's outcome shows of the server's behaviour, with the payload taken out, and whether a
tool is still showing anything new.

A behaviour key is the outcome's status and error code, its text with ids, quoted values, paths
and numbers abstracted (`check.normalize`; JSON text by its shape), the shape of its structured
content (keys and value types, not values, nor how many items a list holds), the types of its
content items, and, when the server logged a traceback during the call, the templates of what it
wrote to stderr. Timing is no part of it: it must not depend on load. That is why other stderr lines
stay out: a line written just before the reply may be read just after it, depending on which of
fuzzgate's readers ran first (two runs with the same seed sent different requests); a traceback is
waited for until stderr goes quiet (`target.connection`), so what it holds does not depend on that.
The scheduler charges a tool that stopped showing new keys more for its time, so the
budget goes where behaviour is still being found (as coverage-guided fuzzers favour inputs that
reach new code, with the reply standing in for coverage).
"""

from __future__ import annotations

import json
import re
from typing import Any

from fuzzgate.check.normalize import argument_strings, normalize_message, normalize_schema_path
from fuzzgate.check.patterns import TRACE_START
from fuzzgate.model.outcome import CallOutcome

MAX_KEYS_PER_TOOL = 4096
"""Keys remembered per tool: past this, every key counts as seen (a tool with that many behaviours
has had its share of novelty)."""
_MAX_DEPTH = 6
_MAX_PROPERTIES = 50
_MAX_ITEM_SHAPES = 8
_MAX_TEXT = 2000
_MAX_STDERR_TEMPLATES = 8
_MAX_STDERR = 8000
_MAX_ECHO = 20_000
"""How much of a reply the argument values are taken out of (before it is cut to `_MAX_TEXT`): a
long value echoed whole must go whole."""
_MIN_TAKEN_OUT = 4
"""Argument values at least this long are taken out of a reply wherever they stand, in any case;
shorter ones only as whole words (`normalize_message`), or a value like "not" would cut up text."""


def shape(value: Any, depth: int = 0) -> Any:
    """The structure of a JSON value without its values: objects by their keys, lists by the set
    of their items' shapes, scalars by their type."""
    if depth > _MAX_DEPTH:
        return "..."
    if isinstance(value, dict):
        return {str(k): shape(v, depth + 1) for k, v in sorted(value.items())[:_MAX_PROPERTIES]}
    if isinstance(value, list):
        shapes: list[str] = []
        for item in value:
            text = json.dumps(shape(item, depth + 1), sort_keys=True)
            if text not in shapes:
                shapes.append(text)
            if len(shapes) >= _MAX_ITEM_SHAPES:
                break
        return sorted(shapes)
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "null"


def _json(text: str) -> Any:
    stripped = text.strip()
    if stripped[:1] not in ("{", "["):
        return None
    try:
        return json.loads(stripped)
    except ValueError:
        return None


def _content_types(payload: Any) -> list[str]:
    content = payload.get("content") if isinstance(payload, dict) else None
    if not isinstance(content, list):
        return []
    return sorted({str(item.get("type")) for item in content[: _MAX_ITEM_SHAPES * 4] if isinstance(item, dict)})


def stderr_templates(stderr: str) -> list[str]:
    """The distinct lines of `stderr` with their payload abstracted, in order, a few at most; none
    unless it holds a traceback (see the module docstring)."""
    if not any(TRACE_START.search(line) for line in stderr[-_MAX_STDERR:].splitlines()):
        return []
    templates: list[str] = []
    for line in stderr[-_MAX_STDERR:].splitlines():
        template = normalize_message(line[:_MAX_TEXT])
        if template and template not in templates:
            templates.append(template)
            if len(templates) >= _MAX_STDERR_TEMPLATES:
                break
    return templates


def without_arguments(text: str, arguments: Any) -> str:
    """`text` with the request's own string values taken out, as sent, upper- or lower-cased, and
    line by line: a tool that echoes its input transformed (an upper-casing echo, a value quoted
    over several lines) shows one behaviour, not one per value. Values of `_MIN_TAKEN_OUT`
    characters or more go wherever they stand, shorter ones where they stand as whole words. Without
    this an upper-casing echo tool filled its corpus share with random strings and, always "new",
    drew the scheduler's time."""
    pieces: set[str] = set()
    for value in argument_strings(arguments, multiline=True, longest=_MAX_ECHO):
        for piece in (value, *value.splitlines()):
            piece = piece.strip()
            if piece:
                pieces.update((piece, piece.upper(), piece.lower()))
    # Longest first, ties in a fixed order (a set's order varies with the interpreter's hash seed).
    for piece in sorted(pieces, key=lambda p: (-len(p), p)):
        # With the white space before it: a value sent with a leading line break would otherwise
        # leave the reply's first line (all `normalize_message` keeps) different.
        if len(piece) >= _MIN_TAKEN_OUT:
            text = re.sub(rf"\s*{re.escape(piece)}", " <arg>", text)
        else:
            text = re.sub(rf"\s*(?<!\w){re.escape(piece)}(?!\w)", " <arg>", text)
    return text


class _Last:
    """The last key worked out, with the outcome and arguments objects it is for."""

    held: tuple[CallOutcome, Any, str] | None = None


_LAST = _Last()


def behaviour_key(outcome: CallOutcome, arguments: Any = None) -> str:
    """The outcome's behaviour, the same for the same code path whatever the arguments: the
    request's own string values (`arguments`) are taken out of its text, so an echo of them is one
    behaviour, not one per value."""
    # The feedback's features and the feed's behaviours ask in turn for the same call's key
    # (outcomes are frozen, a sent case's arguments are never changed): it is worked out once.
    held = _LAST.held
    if held is not None and held[0] is outcome and held[1] is arguments:
        return held[2]
    key = _behaviour_key(outcome, arguments)
    _LAST.held = (outcome, arguments, key)
    return key


def _behaviour_key(outcome: CallOutcome, arguments: Any) -> str:
    parsed = _json(outcome.text)
    # The first line is what `normalize_message` keeps; a long one is cut first (it is the server's).
    text: Any = (
        shape(parsed)
        if parsed is not None
        else normalize_message(without_arguments(outcome.text[:_MAX_ECHO], arguments)[:_MAX_TEXT], arguments)
    )
    payload = _json(outcome.payload)
    structured = shape(payload.get("structuredContent")) if isinstance(payload, dict) else None
    after = outcome.after_timeout.value if outcome.after_timeout is not None else None
    return json.dumps(
        [
            outcome.status.value,
            outcome.rpc_code,
            text,
            structured,
            normalize_schema_path(outcome.schema_path),
            after,
            _content_types(payload),
            stderr_templates(outcome.stderr),
        ],
        sort_keys=True,
    )


class Behaviours:
    """The behaviour keys each tool has shown."""

    def __init__(self, per_tool: int = MAX_KEYS_PER_TOOL) -> None:
        self._per_tool = per_tool
        self._seen: dict[Any, set[str]] = {}

    def new(self, tool: Any, outcome: CallOutcome, arguments: Any = None) -> bool:
        """Whether `outcome` shows `tool` (any hashable key) doing something it had not done before."""
        seen = self._seen.setdefault(tool, set())
        key = behaviour_key(outcome, arguments)
        if key in seen or len(seen) >= self._per_tool:
            return False
        seen.add(key)
        return True
