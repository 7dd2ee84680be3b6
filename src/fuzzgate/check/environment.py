"""Errors fuzzgate's sandbox causes: inside the jail a server's network is its own loopback and the
file system outside its scope is read-only, so a tool that fetches a URL or writes outside its scope
fails there where it would not for its users. Such an error is the environment's, not the server's
bug: one note per cause naming the tools it touched (`ServerFacts.environment`, which the engine
turns into the run's notes), never a finding per tool.

Only while the jail holds the server (`ServerFacts.jailed`): without the sandbox the same errors
come from the real network or file system, where a tool that crashes on a refused connection or a
read-only directory instead of answering an error is the server's bug, and stays a finding.

The error's text decides (the exception and its message, the reply's text): errno names and the
messages of the C library, Python and Node.js for a refused, unreachable or unresolvable connection
(Node.js's `fetch failed` among them: its fetch gives no other words for a connection it could not
make) and a read-only file system.

A call that went unanswered (a hang, a protocol probe never answered) while the server logged such
a connection failure was waiting on the network the jail does not give: a client retrying a
database on the host's loopback or an API by name (`waited_on_sandbox`). That too is the note's.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import TYPE_CHECKING

from fuzzgate.model.outcome import AfterTimeout, CallOutcome, OutcomeStatus

if TYPE_CHECKING:
    from fuzzgate.check.sdk import ServerFacts


class SandboxCause(StrEnum):
    """What in the sandbox made a call fail, in words for the run's note."""

    NETWORK = "its network is loopback only: connections were refused or unreachable"
    DNS = "it resolves no host names: name lookups failed"
    READ_ONLY = "the file system outside its scope is read-only: writes there failed"


_CAUSES = (
    (
        SandboxCause.DNS,
        re.compile(
            r"Name or service not known|Temporary failure in name resolution|No address associated with hostname"
            r"|nodename nor servname|getaddrinfo (?:ENOTFOUND|EAI_AGAIN)|\bEAI_AGAIN\b|\bENOTFOUND\b"
            r"|getaddrinfo failed|\[Errno -[235]\]",
        ),
    ),
    (
        SandboxCause.NETWORK,
        re.compile(
            r"Connection refused|\bECONNREFUSED\b|Network is unreachable|\bENETUNREACH\b|No route to host"
            r"|\bEHOSTUNREACH\b|\[Errno 1(?:11|01|13)\]"
            # Node.js's fetch (undici) says only this for any failure to connect, its cause aside,
            # and a server that passes the message on drops the cause.
            r"|\bfetch failed\b"
            # What clients retrying a connection log: asyncio, httpx, urllib3, aiohttp, and the
            # bare words of a server's own retry loop (arxiv-mcp-server 0.8.2: "arXiv API request
            # connection error; retrying in 2.7s").
            r"|Connect call failed|\bConnectError\b|Failed to establish a new connection|Cannot connect to host"
            r"|\bconnection error\b",
            re.IGNORECASE,
        ),
    ),
    (SandboxCause.READ_ONLY, re.compile(r"Read-only file system|\bEROFS\b|\[Errno 30\]", re.IGNORECASE)),
)


def sandbox_cause(*texts: str) -> SandboxCause | None:
    """The sandbox cause the error `texts` name, if any."""
    for cause, pattern in _CAUSES:
        if any(pattern.search(text) for text in texts if text):
            return cause
    return None


def environment_note(cause: SandboxCause, tools: set[str]) -> str:
    """The run's note for `cause`, which touched `tools`."""
    names = ", ".join(sorted(tools))
    return (
        f"the sandbox caused errors in {len(tools)} tool(s) ({names}): {cause.value}; reported as this "
        "note, not as findings (without the sandbox the same errors are the server's to handle)"
    )


def answered_read_only(facts: ServerFacts, tool: str, outcome: CallOutcome) -> bool:
    """Whether the jailed server answered a call properly (an `isError` reply, a JSON-RPC error)
    with an error naming the read-only file system: no finding, but recorded for the run's note
    under `tool`, as an error the sandbox caused is. A server that keeps its data outside its scope
    (server-memory's `memory.jsonl` beside its own code) fails every write so, and a run that says
    nothing passes a server whose writes it never got past. Only this cause: a refused connection
    or a name that does not resolve is what a fetching tool answers for the hosts fuzzing makes up
    with any network, which the jail did not cause."""
    if not facts.jailed or outcome.status not in (OutcomeStatus.TOOL_ERROR, OutcomeStatus.RPC_ERROR):
        return False
    if sandbox_cause(outcome.text) is not SandboxCause.READ_ONLY:
        return False
    facts.environment.setdefault(SandboxCause.READ_ONLY, set()).add(tool)
    return True


def waited_on_sandbox(facts: ServerFacts, tool: str, outcome: CallOutcome) -> bool:
    """Whether a call the jailed server never answered (it lived on) was waiting on the network the
    jail does not give: its stderr during the call names a refused, unreachable or unresolvable
    connection. Recorded for the run's note under `tool`, as an error the sandbox caused is."""
    if not facts.jailed or outcome.status is not OutcomeStatus.TIMEOUT or outcome.after_timeout is AfterTimeout.DIED:
        return False
    cause = sandbox_cause(outcome.stderr)
    if cause not in (SandboxCause.NETWORK, SandboxCause.DNS):
        return False
    facts.environment.setdefault(cause, set()).add(tool)
    return True
