"""fuzzgate's own side of one connection, and whether it failed.

When the client's side fails (the HTTP client cannot encode a request's body, a stdio pump of
fuzzgate's dies), the SDK fails every pending and later request with the same -32000 "Connection
closed" a dead server gives. The task that failed records it here first, before the session wakes
the calls it carried, so a call can tell fuzzgate's failure from the server's doing, and the
engine reopens the session instead of counting calls that never reached the server.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

ENCODING_ERRORS = (UnicodeError, ValueError, TypeError)
"""What encoding a request's body raises for a value it cannot carry (a lone surrogate in UTF-8)."""


@dataclass(slots=True)
class ClientSide:
    failure: str | None = None
    """What broke fuzzgate's side, in one line; None while it works."""
    unencodable: bool = False
    """The failure was encoding a request: that request was never sent."""
    ended: bool = False
    """The SDK session is over (its task left the client): nothing more can go out on it."""
    ended_by: str | None = None
    """The exception that ended it, if one did."""

    def fail(self, exc: BaseException, *, encoding: bool = False) -> None:
        """Record the first failure only: what came after it is its consequence."""
        if self.failure is None:
            text = str(exc).strip().splitlines()
            self.failure = f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
            self.unencodable = encoding

    @property
    def broken(self) -> bool:
        return self.failure is not None or self.ended


def utf8_encodable(arguments: Any) -> bool:
    """Whether `arguments` can travel as UTF-8 JSON, as the SDK's HTTP client encodes a request
    (`ensure_ascii=False`): a lone surrogate cannot."""
    try:
        json.dumps(arguments, ensure_ascii=False).encode("utf-8")
    except ENCODING_ERRORS:
        return False
    return True
