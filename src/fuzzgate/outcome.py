"""What one request to the server came back with, as the oracles see it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class OutcomeStatus(StrEnum):
    OK = "ok"
    """A result with `isError: false` (and conforming structured content)."""
    TOOL_ERROR = "tool_error"
    """A result with `isError: true`: the tool declined, which is correct behaviour."""
    RPC_ERROR = "rpc_error"
    """A JSON-RPC error response."""
    OUTPUT_INVALID = "output_invalid"
    """Structured content that does not match the declared output schema."""
    TIMEOUT = "timeout"
    """No reply within the timeout."""
    CLOSED = "closed"
    """The connection closed (the process died) while the call was pending."""
    ABORTED = "aborted"
    """fuzzgate itself tore the connection down (restart after another call hung or crashed)."""
    UNSENDABLE = "unsendable"
    """The request could not be sent (e.g. this transport cannot encode a lone surrogate): not a call."""
    CLIENT_FAILED = "client_failed"
    """fuzzgate's own side of the connection had failed (a request another call could not send broke
    the session, a transport task of fuzzgate's died): the request never reached the server, or its
    reply never reached fuzzgate. Not a call, not the server's doing; the session is reopened."""
    UNSUPPORTED = "unsupported"
    """The server answered with something fuzzgate does not drive (input-required rounds, extensions)."""


NOT_SENT = frozenset({OutcomeStatus.UNSENDABLE, OutcomeStatus.CLIENT_FAILED})
"""Outcomes of requests the server never received: a run does not count them as calls."""


class AfterTimeout(StrEnum):
    """What a ping sent right after a request timed out showed about the server."""

    ALIVE = "alive"
    """The ping was answered: the server went on answering, but never this request."""
    DIED = "died"
    """The server died on the next request (the ping), or before it."""
    STUCK = "stuck"
    """The ping was not answered either: the whole server is stuck."""


class AnomalyKind(StrEnum):
    NON_JSON = "non_json"
    INVALID_MESSAGE = "invalid_message"
    WRONG_ID = "wrong_id"
    OVERSIZED = "oversized"


@dataclass(frozen=True, slots=True)
class WireAnomaly:
    """Something on the wire that is not valid JSON-RPC for this conversation."""

    kind: AnomalyKind
    excerpt: str


@dataclass(frozen=True, slots=True)
class CallOutcome:
    status: OutcomeStatus
    duration_s: float
    text: str = ""
    """The result's text content, or the error message, whichever the server sent."""
    payload: str = ""
    """Everything the server sent back, serialized, for the secret scan."""
    rpc_code: int | None = None
    error: str | None = None
    schema_path: str | None = None
    """For OUTPUT_INVALID: where in the output schema the structured content failed."""
    stderr: str = ""
    """What the server wrote to stderr while the call was pending."""
    anomalies: tuple[WireAnomaly, ...] = ()
    exit_code: int | None = None
    concurrent: int = 1
    """How many calls were in flight at once, which makes attribution of process-wide symptoms uncertain."""
    after_timeout: AfterTimeout | None = None
    """For TIMEOUT: what the ping sent next showed (None when none was sent)."""
