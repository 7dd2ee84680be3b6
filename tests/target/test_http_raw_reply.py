"""A raw message's answer over streamable HTTP (`target.raw`), read from real `httpx` responses: the
SSE stream a server answers a POST with, priming events included."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx2

from fuzzgate.check.protocol_probes import judge
from fuzzgate.check.secrets import Redactor
from fuzzgate.model.outcome import SSE_NOT_JSON, AnomalyKind, CallOutcome, OutcomeStatus
from fuzzgate.target.raw import _http_reply

REQUEST = {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}}
ANSWER = {"jsonrpc": "2.0", "id": 7, "result": {"tools": []}}


def _answer(stream: str) -> tuple[OutcomeStatus, dict[str, Any], tuple[Any, ...]]:
    response = httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=stream.encode())
    return anyio.run(_http_reply, response, REQUEST, True)


def test_a_priming_event_is_no_message() -> None:
    # The TypeScript SDK with an event store starts each stream so (`id`, optional `retry`, empty
    # `data`) for clients of protocol 2025-11-25; the SDK's own client skips it.
    for priming in ("id: s1_0\ndata: \n\n", "id: s1_0\nretry: 1000\ndata:\n\n", "id: s1_0\n\n"):
        status, fields, anomalies = _answer(priming + f"event: message\nid: s1_1\ndata: {json.dumps(ANSWER)}\n\n")
        assert (status, anomalies) == (OutcomeStatus.OK, ()), (priming, fields)


def test_an_event_that_is_not_json_is_still_an_anomaly() -> None:
    status, fields, anomalies = _answer("id: s1_0\ndata: \n\nevent: message\ndata: hello\n\n")
    assert status is OutcomeStatus.UNSUPPORTED
    assert [(a.kind, a.excerpt) for a in anomalies] == [(AnomalyKind.NON_JSON, SSE_NOT_JSON)]
    outcome = CallOutcome(status=status, duration_s=0.01, anomalies=anomalies, **fields)
    [observation] = judge("unknown-method", outcome, Redactor(()))
    # Over HTTP the server's stdout is its log: the words name what it answered with.
    assert observation.message.startswith("sent an SSE event that is not JSON while handling"), observation.message
    assert "stdout" not in observation.message
