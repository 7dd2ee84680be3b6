"""A reply to one of the session's own requests that is no longer pending (late, or a second one) is
no anomaly; a reply with an id nothing was sent with stays a wrong id."""

from __future__ import annotations

import json
import sys

import pytest

from fuzzgate.model.outcome import AnomalyKind
from fuzzgate.target import stdio
from fuzzgate.target.stdio import SENT_IDS_KEPT, SentIds, ServerProcess, StdioSpec, id_key


def _reply(request_id: object, message: str = "Request cancelled") -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {"code": 0, "message": message}}).encode()


def _process_that_sent(*ids: int) -> ServerProcess:
    process = ServerProcess(StdioSpec(sys.executable, (), {}, None))
    for request_id in ids:
        # What `pump_stdin` does for each request the SDK writes.
        process.pending.add(request_id)
        process.sent.add(id_key(request_id))
    return process


def test_a_second_reply_to_an_answered_request_is_dropped_quietly() -> None:
    process = _process_that_sent(4)
    assert process._check_line(_reply(4, "done")) is not None  # the answer, for the SDK
    assert process._check_line(_reply(4)) is None  # the second one, for nobody
    assert process.wire.since(0) == ()


def test_an_id_nothing_was_sent_with_is_a_wrong_id() -> None:
    process = _process_that_sent(4)
    assert process._check_line(_reply(5)) is None
    assert process._check_line(_reply("4")) is None  # a string is not the number sent
    assert [a.kind for a in process.wire.since(0)] == [AnomalyKind.WRONG_ID] * 2


def test_a_raw_request_answered_twice_is_no_anomaly_either() -> None:
    process = _process_that_sent()
    waiter = process.expect_raw(-1, has_id=True)
    assert process._check_line(_reply(-1, "Invalid request id")) is None
    assert waiter.replied
    process.forget_raw(waiter)
    assert process._check_line(_reply(-1, "Invalid request id")) is None
    assert process.wire.since(0) == ()


def test_the_memory_of_sent_ids_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stdio, "SENT_IDS_KEPT", 3)
    sent = SentIds()
    for request_id in range(5):
        sent.add(id_key(request_id))
    assert [id_key(i) in sent for i in range(5)] == [False, False, True, True, True]
    assert SENT_IDS_KEPT >= 1000
