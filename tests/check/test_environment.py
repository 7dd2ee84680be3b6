"""Which errors the sandbox causes, by their text, and that only a jailed server's are notes."""

from __future__ import annotations

import pytest

from fuzzgate.check import CallContext, Oracles
from fuzzgate.check.environment import SandboxCause, environment_note, sandbox_cause
from fuzzgate.check.sdk import ServerFacts
from fuzzgate.check.secrets import SecretScanner
from fuzzgate.model.findings import Kind
from fuzzgate.model.outcome import CallOutcome, OutcomeStatus


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        ("ConnectionRefusedError: [Errno 111] Connection refused", SandboxCause.NETWORK),
        ("Error: connect ECONNREFUSED 127.0.0.1:5432", SandboxCause.NETWORK),
        ("OSError: [Errno 101] Network is unreachable", SandboxCause.NETWORK),
        ("socket.gaierror: [Errno -2] Name or service not known", SandboxCause.DNS),
        ("httpx.ConnectError: [Errno -3] Temporary failure in name resolution", SandboxCause.DNS),
        ("Error: getaddrinfo ENOTFOUND api.example.com", SandboxCause.DNS),
        ("Error: getaddrinfo EAI_AGAIN registry.npmjs.org", SandboxCause.DNS),
        ("OSError: [Errno 30] Read-only file system: '/etc/app.conf'", SandboxCause.READ_ONLY),
        ("Error: EROFS: read-only file system, open '/usr/share/x'", SandboxCause.READ_ONLY),
        # Node.js's fetch (undici) on any connection it could not make, as a server passes it on.
        ("fetch failed", SandboxCause.NETWORK),
        ("TypeError: fetch failed", SandboxCause.NETWORK),
        ("prefetch failed for chunk 3", None),
        ("ZeroDivisionError: division by zero", None),
        ("KeyError: 'refused'", None),
    ],
)
def test_the_cause_is_read_from_the_error_text(text: str, cause: SandboxCause | None) -> None:
    assert sandbox_cause("unhandled exception", text) is cause


def test_the_note_names_every_tool_once_in_order() -> None:
    note = environment_note(SandboxCause.NETWORK, {"post", "fetch"})
    assert "2 tool(s) (fetch, post)" in note and "loopback only" in note


REFUSED = """\
Traceback (most recent call last):
  File "/srv/app/server.py", line 12, in notify
    socket.create_connection(("127.0.0.1", 9))
ConnectionRefusedError: [Errno 111] Connection refused
"""


def _observe(jailed: bool) -> tuple[list[object], ServerFacts]:
    facts = ServerFacts(jailed=jailed)
    oracles = Oracles(slow_s=2.0, scanner=SecretScanner([], {}), server=facts)
    outcome = CallOutcome(OutcomeStatus.TOOL_ERROR, 0.05, text="Error executing tool notify", stderr=REFUSED)
    return list(oracles.observe_call(CallContext("notify", {"message": "hi"}, True, outcome))), facts


def test_only_a_jailed_servers_refused_connection_is_a_note() -> None:
    observed, facts = _observe(jailed=True)
    assert observed == [] and facts.environment == {SandboxCause.NETWORK: {"notify"}}
    observed, facts = _observe(jailed=False)
    assert [o.kind for o in observed] == [Kind.INTERNAL_ERROR] and facts.environment == {}  # type: ignore[attr-defined]


def _answer(status: OutcomeStatus, text: str, jailed: bool = True) -> tuple[list[object], ServerFacts]:
    facts = ServerFacts(jailed=jailed)
    oracles = Oracles(slow_s=2.0, scanner=SecretScanner([], {}), server=facts)
    outcome = CallOutcome(status, 0.05, text=text, rpc_code=-32000 if status is OutcomeStatus.RPC_ERROR else None)
    return list(oracles.observe_call(CallContext("create_entities", {"entities": []}, True, outcome))), facts


# What server-memory answers for every write when its memory.jsonl lies beside its code.
READ_ONLY_ANSWER = "EROFS: read-only file system, open '/srv/node_modules/server-memory/dist/memory.jsonl'"


@pytest.mark.parametrize("status", [OutcomeStatus.TOOL_ERROR, OutcomeStatus.RPC_ERROR])
def test_a_read_only_error_a_jailed_server_answered_properly_is_named_in_the_note(status: OutcomeStatus) -> None:
    observed, facts = _answer(status, READ_ONLY_ANSWER)
    assert observed == [] and facts.environment == {SandboxCause.READ_ONLY: {"create_entities"}}


def test_an_answered_error_is_no_note_without_the_jail_or_for_another_cause() -> None:
    observed, facts = _answer(OutcomeStatus.TOOL_ERROR, READ_ONLY_ANSWER, jailed=False)
    assert observed == [] and facts.environment == {}
    # A fetching tool answers so for the made-up hosts fuzzing sends, whatever network it has.
    observed, facts = _answer(OutcomeStatus.TOOL_ERROR, "Failed to fetch http://a.example/: Connection refused")
    assert observed == [] and facts.environment == {}
    observed, facts = _answer(OutcomeStatus.OK, READ_ONLY_ANSWER)
    assert facts.environment == {}
