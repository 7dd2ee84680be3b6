"""How configuration messages show what the user wrote and what they may have meant."""

from __future__ import annotations

import datetime
import difflib
from collections.abc import Iterable


def describe(value: object, *, secret: bool = False) -> str:
    """A short rendering of a value the user wrote, for "got ..." in error messages.

    With `secret`, only the value's type is named: env and header values never reach a message.
    """
    if isinstance(value, bool):
        return "a boolean" if secret else ("true" if value else "false")
    if isinstance(value, int):
        return "an integer" if secret else repr(value)
    if isinstance(value, float):
        return "a number" if secret else repr(value)
    if isinstance(value, str):
        if secret:
            return "a string"
        shown = value if len(value) <= 40 else value[:37] + "..."
        return '"' + shown.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if value is None:
        return "nothing (null)"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, datetime.date | datetime.time):
        return "a date or time"
    return f"a {type(value).__name__}"


def closest(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate `name` is most likely a misspelling of, if any is close enough."""
    matches = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    return matches[0] if matches else None


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """ " (did you mean 'budget'?)" or "" when nothing is close."""
    match = closest(name, candidates)
    return f" (did you mean '{match}'?)" if match else ""
