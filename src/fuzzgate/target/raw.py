"""One JSON-RPC message fuzzgate builds itself, sent past the SDK's models, and what came back.

The SDK only sends what its models allow; a protocol probe (`arguments: null`, an id of 2**63, a
notification nobody expects) must go as written. Over stdio the message goes straight onto the
server's stdin, between the SDK's own, and its reply is taken off stdout by id before the SDK's
session could see it (`stdio.ServerProcess.write_raw`); over streamable HTTP it is POSTed with the
session's headers, and the reply is the POST's JSON or SSE answer.

The reply is classified like `call_tool`'s outcome, with one more duty: a reply that is not valid
JSON-RPC 2.0 is an `INVALID_MESSAGE` anomaly of the outcome, since no SDK validated it.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import suppress
from typing import Any

import anyio
import httpx2
from mcp.client.streamable_http import MCP_SESSION_ID
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER

from fuzzgate.check.patterns import INTERNAL_ERROR_CODES, SDK_UNHANDLED
from fuzzgate.model.outcome import BODY_NOT_JSON, SSE_NOT_JSON, AnomalyKind, CallOutcome, OutcomeStatus, WireAnomaly
from fuzzgate.target.call import follow_timeout
from fuzzgate.target.connection import Connection
from fuzzgate.target.settle import await_death, is_connection_loss, let_stderr_catch_up
from fuzzgate.target.stdio import id_key

__all__ = ["NO_REPLY_WAIT_S", "RawMessage", "carries_raw", "expects_reply", "jsonrpc_problem", "send_raw", "stamped"]

RawMessage = dict[str, Any] | list[Any] | str
"""A message as fuzzgate writes it: a JSON object or array, or a line of text sent as it is."""

NO_REPLY_WAIT_S = 0.2
"""How long a message that expects no reply (a notification) waits for one anyway, or for a death."""

_SETTLE_GRACE_S = 0.02
"""How long a settling wait goes on after the ping's answer, for a reply already on its way."""
_HTTP_ACCEPT = "application/json, text/event-stream"
_EXCERPT_CHARS = 200


def expects_reply(message: RawMessage) -> bool:
    """Whether `message` is a request, which JSON-RPC must answer: an object with a method and an id."""
    return isinstance(message, dict) and "method" in message and "id" in message


def carries_raw(connection: Connection) -> bool:
    """Whether `send_raw` can reach the server: a stdio server fuzzgate owns, or streamable HTTP
    (not the in-memory connector tests use)."""
    return connection.process is not None or (connection.http is not None and connection.http.client is not None)


def stamped(connection: Connection, message: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """`message` with the envelope this session's era puts on every message (a 2026-07-28 request
    carries its protocol version and the client's identity in `params._meta`), and the HTTP
    headers the SDK would send with it. A message the SDK could not stamp (its params are not an
    object, it has no method) goes as it is, with no headers."""
    data = copy.deepcopy(message)
    options: dict[str, Any] = {}
    # The session's stamp is the one place the SDK spells the era's envelope; fuzzgate's probes
    # must wear it, or a 2026-07-28 server rejects every one of them at the envelope.
    stamp = getattr(connection.client.session, "_stamp", None)
    if stamp is None or not isinstance(data.get("method"), str) or not isinstance(data.get("params", {}), dict):
        return message, _version_header(connection)
    try:
        stamp(data, options)
    except Exception:
        # Arguments the SDK cannot read its per-argument headers from (a string, an array).
        return message, _version_header(connection)
    headers = options.get("headers") or {}
    return data, {str(k).lower(): str(v) for k, v in headers.items()}


def _version_header(connection: Connection) -> dict[str, str]:
    version = connection.protocol_version
    return {MCP_PROTOCOL_VERSION_HEADER: version} if version else {}


def jsonrpc_problem(reply: Any) -> str | None:
    """Why `reply` is not a valid JSON-RPC 2.0 response (MCP's: a result is an object), or None."""
    if not isinstance(reply, dict):
        return f"a reply that is a JSON {type(reply).__name__}, not an object"
    if reply.get("jsonrpc") != "2.0":
        return 'a reply whose "jsonrpc" is not "2.0"'
    if "result" in reply and "error" in reply:
        return 'a reply with both "result" and "error"'
    if "result" not in reply and "error" not in reply:
        return 'a reply with neither "result" nor "error"'
    if "id" not in reply:
        return 'a reply without "id"'
    reply_id = reply["id"]
    if isinstance(reply_id, bool) or not isinstance(reply_id, str | int | float | None):
        return 'a reply whose "id" is neither a string, a number nor null'
    if "error" in reply:
        error = reply["error"]
        if not isinstance(error, dict):
            return 'a reply whose "error" is not an object'
        code = error.get("code")
        if isinstance(code, bool) or not isinstance(code, int):
            return 'an error without an integer "code"'
        if not isinstance(error.get("message"), str):
            return 'an error without a string "message"'
        return None
    if reply_id is None:
        return 'a result with a null "id"'
    if not isinstance(reply["result"], dict):
        return 'a reply whose "result" is not an object'
    return None


def _encode(message: RawMessage) -> bytes:
    # ASCII escapes: a lone surrogate in a probe must reach the server as JSON allows it.
    text = message if isinstance(message, str) else json.dumps(message, ensure_ascii=True, separators=(",", ":"))
    return text.encode("utf-8", "surrogatepass")


def _text_of(result: dict[str, Any]) -> str:
    content = result.get("content")
    if not isinstance(content, list):
        return ""
    texts = [block.get("text") for block in content if isinstance(block, dict) and block.get("type") == "text"]
    return "\n".join(t for t in texts if isinstance(t, str))


def _classify(reply: Any, sent: RawMessage) -> tuple[OutcomeStatus, dict[str, Any], tuple[WireAnomaly, ...]]:
    """A reply as an outcome's status, fields and anomalies (the payload is the reply as sent back)."""
    fields: dict[str, Any] = {"payload": json.dumps(reply, ensure_ascii=True)}
    anomalies: list[WireAnomaly] = []
    problem = jsonrpc_problem(reply)
    if problem is not None:
        anomalies.append(WireAnomaly(AnomalyKind.INVALID_MESSAGE, problem))
    elif expects_reply(sent) and isinstance(sent, dict):
        reply_id = reply.get("id")
        if reply_id is not None and id_key(reply_id) != id_key(sent.get("id")):
            # Over HTTP the reply is the POST's, whatever id it names (stdio matched it by id).
            anomalies.append(WireAnomaly(AnomalyKind.WRONG_ID, f"a reply with id {json.dumps(reply_id)[:80]}"))
    if isinstance(reply, dict) and isinstance(reply.get("error"), dict):
        error = reply["error"]
        code = error.get("code")
        message = error.get("message")
        fields["rpc_code"] = code if isinstance(code, int) and not isinstance(code, bool) else None
        fields["text"] = message if isinstance(message, str) else ""
        fields["error"] = f"{fields['text'][:_EXCERPT_CHARS]} (JSON-RPC error {fields['rpc_code']})"
        return OutcomeStatus.RPC_ERROR, fields, tuple(anomalies)
    if isinstance(reply, dict) and "result" in reply:
        result = reply["result"]
        if isinstance(result, dict):
            fields["text"] = _text_of(result)
            if result.get("isError") is True:
                return OutcomeStatus.TOOL_ERROR, fields, tuple(anomalies)
        return OutcomeStatus.OK, fields, tuple(anomalies)
    fields["error"] = "the reply is neither a result nor an error"
    return OutcomeStatus.UNSUPPORTED, fields, tuple(anomalies)


async def send_raw(
    connection: Connection, message: RawMessage, timeout_s: float, *, settle: bool = False
) -> CallOutcome:
    """Send `message` as it is and classify what came back. Never raises for anything the server does.

    A request (an object with a method and an id) waits up to `timeout_s` for its reply, and after
    a timeout pings like `call_and_follow` (`after_timeout`). Anything else (a notification, a
    response to nothing, an array, a line of text) expects no reply: it waits `NO_REPLY_WAIT_S` at
    most (or `timeout_s`, if shorter) for one or for the server's death, and is OK with an empty
    `payload` when nothing came back, as it should. An HTTP error status for such a message is the
    transport's "not accepted", which the specification allows: not a reply either.

    `settle`: stop waiting once a ping sent right after the message is answered (and a moment
    more): for a message the server may leave unanswered, a server that answers the next request
    has shown what it would do with this one, and the full wait would be spent on every healthy
    server. Never for a request that must be answered: a slow answer is no silence.
    """
    server = connection.server
    process = connection.process
    err_mark = server.stderr.mark() if server else 0
    wire_mark = process.wire.mark() if process else 0
    loss_mark = connection.loss_mark()
    wait_s = timeout_s if expects_reply(message) else min(timeout_s, NO_REPLY_WAIT_S)
    started = time.perf_counter()
    deadline = anyio.current_time() + wait_s
    if process is not None:
        status, fields, extra = await _send_stdio(connection, message, deadline, settle)
    elif carries_raw(connection):
        status, fields, extra = await _send_http(connection, message, wait_s)
    else:
        status, fields, extra = (
            OutcomeStatus.UNSUPPORTED,
            {"error": "raw messages need a stdio or streamable HTTP connection"},
            (),
        )
    unanswered = status not in (OutcomeStatus.CLOSED, OutcomeStatus.UNSUPPORTED) and not fields.get("payload")
    if unanswered and not expects_reply(message):
        # An HTTP server answers a notification at once (202): a death right after it is its doing too.

        async def death() -> None:
            while connection.alive() and not connection.lost_since(loss_mark):
                await anyio.sleep(0.01)

        await _wait(connection, death, deadline, settle)
    duration = time.perf_counter() - started
    if status is not OutcomeStatus.UNSUPPORTED and not fields.get("payload") and connection.lost_since(loss_mark):
        # Nothing came back and the transport is gone: the message's death, not a silence.
        status = OutcomeStatus.CLOSED
    if server is not None:
        if status is OutcomeStatus.CLOSED:
            await await_death(server, http=process is None)
            status = OutcomeStatus.ABORTED if server.killed_by_us else OutcomeStatus.CLOSED
            fields["exit_code"] = server.returncode
            fields["memory"] = server.over_memory
        elif status in (OutcomeStatus.RPC_ERROR, OutcomeStatus.TOOL_ERROR):
            text = str(fields.get("text", "")).strip()
            hinted = fields.get("rpc_code") in INTERNAL_ERROR_CODES or SDK_UNHANDLED.fullmatch(text) is not None
            await let_stderr_catch_up(server, err_mark, hinted)
        fields["stderr"] = "\n".join(server.stderr.since(err_mark))
    anomalies = (*(process.wire.since(wire_mark) if process is not None else ()), *extra)
    outcome = CallOutcome(
        status=status, duration_s=duration, anomalies=anomalies, sources=connection.sources(), **fields
    )
    return await follow_timeout(connection, outcome)


_Sent = tuple[OutcomeStatus, dict[str, Any], tuple[WireAnomaly, ...]]


async def _wait(connection: Connection, until: Callable[[], Awaitable[None]], deadline: float, settle: bool) -> None:
    """Wait for `until()` up to `deadline`; with `settle`, only until a ping sent now is answered
    (or refused, or fails), and `_SETTLE_GRACE_S` more."""
    with anyio.move_on_at(deadline):
        async with anyio.create_task_group() as tg:

            async def waited() -> None:
                await until()
                tg.cancel_scope.cancel()

            async def pinged() -> None:
                # Any answer will do (2026-07-28 has no ping: -32601), and so will a failure.
                with suppress(Exception):
                    await connection.client.session.send_ping()
                await anyio.sleep(_SETTLE_GRACE_S)
                tg.cancel_scope.cancel()

            tg.start_soon(waited)
            if settle:
                tg.start_soon(pinged)


async def _send_stdio(connection: Connection, message: RawMessage, deadline: float, settle: bool) -> _Sent:
    process = connection.process
    assert process is not None
    request = expects_reply(message)
    # A response to nothing has an id too: a reply naming it is the server answering it.
    has_id = isinstance(message, dict) and "id" in message
    waiter = process.expect_raw(message.get("id") if isinstance(message, dict) else None, has_id=has_id)
    try:
        try:
            await process.write_raw(_encode(message) + b"\n")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError) as exc:
            return OutcomeStatus.CLOSED, {"error": f"writing to the server failed: {type(exc).__name__}"}, ()
        await _wait(connection, waiter.done.wait, deadline, settle)
    finally:
        process.forget_raw(waiter)
    if waiter.replied:
        return _classify(waiter.reply, message)
    if process.stdout_closed or process.returncode is not None:
        return OutcomeStatus.CLOSED, {"error": "the server's stdout ended"}, ()
    if request:
        return OutcomeStatus.TIMEOUT, {}, ()
    return OutcomeStatus.OK, {}, ()


async def _send_http(connection: Connection, message: RawMessage, wait_s: float) -> _Sent:
    watched = connection.http
    assert watched is not None and watched.client is not None and watched.url is not None
    headers = {"accept": _HTTP_ACCEPT, "content-type": "application/json"}
    headers.update(stamped(connection, message)[1] if isinstance(message, dict) else _version_header(connection))
    if watched.session_id is not None:
        headers[MCP_SESSION_ID] = watched.session_id
    request = expects_reply(message)
    result: list[_Sent] = []
    try:
        body = _encode(message)
        with anyio.move_on_after(wait_s):
            async with watched.client.stream("POST", watched.url, content=body, headers=headers) as response:
                result.append(await _http_reply(response, message, request))
    except Exception as exc:
        if not is_connection_loss(exc):
            raise
        return OutcomeStatus.CLOSED, {"error": f"the HTTP request failed: {type(exc).__name__}"}, ()
    if result:
        return result[0]
    if request:
        return OutcomeStatus.TIMEOUT, {}, ()
    return OutcomeStatus.OK, {}, ()


async def _http_reply(response: httpx2.Response, message: RawMessage, request: bool) -> _Sent:
    """The answer to a POST: the JSON-RPC message in its JSON body or SSE stream; for a status
    without one, an error in the words the SDK's client uses (4xx: the request was refused; 5xx: an
    internal error)."""
    status_code = response.status_code
    content_type = response.headers.get("content-type", "").lower()
    reply: Any = None
    found = False
    if content_type.startswith("text/event-stream") and status_code < 300:
        async for data in _sse_messages(response):
            try:
                parsed = json.loads(data)
            except ValueError:
                return (
                    OutcomeStatus.UNSUPPORTED,
                    {"error": SSE_NOT_JSON},
                    (WireAnomaly(AnomalyKind.NON_JSON, SSE_NOT_JSON),),
                )
            # Requests and notifications the server sends on the way are not the answer.
            if isinstance(parsed, dict) and "method" in parsed:
                continue
            reply, found = parsed, True
            break
    else:
        body = await response.aread()
        if body.strip():
            try:
                reply, found = json.loads(body), True
            except ValueError:
                if status_code < 300:
                    return (
                        OutcomeStatus.UNSUPPORTED,
                        {"error": f"HTTP {status_code} with a body that is not JSON"},
                        (WireAnomaly(AnomalyKind.NON_JSON, BODY_NOT_JSON),),
                    )
    if status_code >= 400 and not request:
        # "The server cannot accept the input": the transport's answer to a notification, not a reply.
        return OutcomeStatus.RPC_ERROR, {"error": f"HTTP {status_code}"}, ()
    if found:
        return _classify(reply, message)
    if status_code >= 400:
        code = -32603 if status_code >= 500 else -32600
        text = f"HTTP {status_code}"
        return OutcomeStatus.RPC_ERROR, {"rpc_code": code, "text": text, "error": f"{text} without a JSON-RPC body"}, ()
    if request:
        return OutcomeStatus.TIMEOUT, {"error": f"HTTP {status_code} without a reply to the request"}, ()
    return OutcomeStatus.OK, {}, ()


async def _sse_messages(response: httpx2.Response) -> AsyncIterator[str]:
    """The data of each `message` event of an SSE stream that holds some. An event with empty data
    is no message: a server with an event store starts each stream with one (a priming event, an id
    to resume from, for clients of protocol 2025-11-25), and the SDK's client skips it too."""
    event, data = "message", list[str]()
    async for line in response.aiter_lines():
        if not line:
            if event == "message" and (joined := "\n".join(data)):
                yield joined
            event, data = "message", []
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    if event == "message" and (joined := "\n".join(data)):
        yield joined
