"""What one request to the server came back with, as the oracles see it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
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


SSE_NOT_JSON = "an SSE event that is not JSON"
BODY_NOT_JSON = "a response body that is not JSON"
"""The excerpts of a `NON_JSON` anomaly over streamable HTTP (`target.raw`), where the server's
stdout is its log and never the protocol."""


@dataclass(frozen=True, slots=True)
class MemoryExceeded:
    """The server's processes held more resident memory than the limit, and fuzzgate stopped them."""

    held: int
    """Bytes resident in the server's process tree at the reading that passed the limit."""
    limit: int
    """`[fuzzgate] memory_limit` in bytes."""


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
    died_after_reply: bool = False
    """The server answered, then died before the next request was answered (`target.call.follow_reply`:
    watched on replays of a crash only; `exit_code` and `stderr` then say how)."""
    memory: MemoryExceeded | None = None
    """For a server that died during the call (or right after it): fuzzgate stopped it because its
    processes held more memory than the limit (`OwnedProcess.watch_memory`)."""
    sources: tuple[tuple[str, str], ...] = ()
    """Each scope directory as the server saw it (its throwaway layer) and the user's directory it
    stands for: a path in the server's traceback is reported as the user's (`source_path`)."""

    def source_path(self, path: str) -> str:
        """`path` as the server named it (plain or a `file://` URL), in the user's directory when it
        lies in the server's layer of one; else as it is. Only the directory changes, never the
        file name, so a fingerprint (which keeps file names only) is the same either way."""
        scheme = "file://" if path.startswith("file://") else ""
        bare = path[len(scheme) :]
        for seen, original in sorted(self.sources, key=lambda pair: -len(pair[0])):
            seen = seen.rstrip("/")
            if bare == seen or bare.startswith(seen + "/"):
                return scheme + ((original.rstrip("/") + bare[len(seen) :]) or "/")
        return path

    def in_user_paths(self, text: str) -> str:
        """`text` (the server's stderr or error message) with every path inside the server's layer of
        a scope directory written in the user's directory instead, as `source_path` does for one."""
        for seen, original in sorted(self.sources, key=lambda pair: -len(pair[0])):
            text = text.replace(seen.rstrip("/") + "/", original.rstrip("/") + "/")
        return text


ERRORS = (OutcomeStatus.TOOL_ERROR, OutcomeStatus.RPC_ERROR)
SHOWN_ERROR_CHARS = 120


def uniform_error(replies: Iterable[tuple[str, Sequence[CallOutcome]]]) -> str | None:
    """The error text, quoted, when the replies of two or more subjects (a subject's name, its calls'
    outcomes) are all errors with that same text: a server answering every tool alike is degraded (a
    missing variable or config file, every call "not configured"), and what it answers says nothing
    about a call's own behaviour. None otherwise. Callers redact it."""
    subjects: set[str] = set()
    texts: set[str] = set()
    for subject, outcomes in replies:
        for outcome in outcomes:
            if outcome.status not in ERRORS or not outcome.text.strip():
                return None
            # The SDK names the tool in its error text (`Error executing tool NAME: ...`).
            texts.add(outcome.text.strip().replace(subject, "<tool>"))
            subjects.add(subject)
        if len(texts) > 1:
            return None
    if len(subjects) < 2 or len(texts) != 1:
        return None
    text = texts.pop()
    shown = text if len(text) <= SHOWN_ERROR_CHARS else text[: SHOWN_ERROR_CHARS - 3] + "..."
    return repr(shown)
