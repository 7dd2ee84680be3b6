"""One request to a server turned into a `CallOutcome`: a tool call (or a prompt's `prompts/get`, a
resource's `resources/read`) with a timeout that progress restarts, classified by codes, exception
types and the transport's evidence, never the SDK's English messages; the output schema checked;
and after a timeout, a ping that tells a dropped request from a stuck or dead server."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from typing import Any

import anyio
import anyio.lowlevel
import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter, ValidationError

from fuzzgate.check.patterns import INTERNAL_ERROR_CODES
from fuzzgate.check.patterns import SDK_UNHANDLED as _BARE_SDK_ERROR
from fuzzgate.model.findings import Kind, Surface
from fuzzgate.model.outcome import AfterTimeout, AnomalyKind, CallOutcome, OutcomeStatus, WireAnomaly
from fuzzgate.model.uri_template import expand_template
from fuzzgate.sandbox.owned_process import OwnedProcess
from fuzzgate.target.client_side import utf8_encodable
from fuzzgate.target.connection import CONNECTION_CLOSED, Connection, describe_exception
from fuzzgate.target.settle import await_death, is_connection_loss, let_stderr_catch_up

PROGRESS_EXTENSION_LIMIT = 6
"""Progress notifications extend a call's timeout, up to this many timeouts in all."""

_CALL_RESULT: TypeAdapter[types.CallToolResult | types.InputRequiredResult] = TypeAdapter(
    types.CallToolResult | types.InputRequiredResult
)
_LIST_PAGES = 100


def _text_of(result: Any) -> str:
    """The text a reply carries: a tool result's text content, a prompt's messages' text, a
    resource's text contents."""
    if isinstance(result, types.CallToolResult):
        blocks: list[Any] = list(result.content)
    elif isinstance(result, types.GetPromptResult):
        blocks = [message.content for message in result.messages]
    elif isinstance(result, types.ReadResourceResult):
        blocks = list(result.contents)
    else:
        return ""
    parts = [block.text for block in blocks if isinstance(block, types.TextContent | types.TextResourceContents)]
    return "\n".join(parts)


_PROMPT_RESULT: TypeAdapter[types.GetPromptResult] = TypeAdapter(types.GetPromptResult)
_READ_RESULT: TypeAdapter[types.ReadResourceResult] = TypeAdapter(types.ReadResourceResult)


def request_for(surface: Surface, name: str, arguments: dict[str, Any]) -> tuple[Any, TypeAdapter[Any]]:
    """The request a call to `name` is on its surface, and the type its result must have: a tool's
    `tools/call`, a prompt's `prompts/get` (arguments as strings, as the specification types them),
    a resource's `resources/read` (a template expanded with the arguments, as they are)."""
    if surface is Surface.PROMPT:
        strings = {key: prompt_argument(value) for key, value in arguments.items()}
        params = types.GetPromptRequestParams(name=name, arguments=strings)
        return types.GetPromptRequest(params=params), _PROMPT_RESULT
    if surface is Surface.RESOURCE:
        uri = expand_template(name, arguments) if "{" in name else name
        return types.ReadResourceRequest(params=types.ReadResourceRequestParams(uri=uri)), _READ_RESULT
    params_ = types.CallToolRequestParams(name=name, arguments=arguments)
    return types.CallToolRequest(params=params_), _CALL_RESULT


def prompt_argument(value: Any) -> str:
    """A prompt argument as sent: prompts take strings only, so any other generated value goes as
    its JSON text."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


async def _learn_output_schemas(connection: Connection, name: str, timeout_s: float) -> None:
    """List the tools once on a connection that was not discovered (a restart, a replay), so
    output drift is checked there too. A listing that fails leaves the tool unchecked."""
    session = connection.client.session
    cursor: str | None = None
    try:
        with anyio.fail_after(timeout_s):
            for _ in range(_LIST_PAGES):
                page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor))
                for tool in page.tools:
                    connection.outputs.learn(tool.name, tool.output_schema)
                cursor = page.next_cursor
                if not cursor:
                    break
    except (TimeoutError, MCPError, ValidationError):
        pass
    if not connection.outputs.knows(name):
        connection.outputs.learn(name, None)


def _unsendable_over_http(connection: Connection, arguments: dict[str, Any]) -> bool:
    """Whether the HTTP client could not encode these arguments: sent, the request would break the
    session (see `http_transport._WatchedClient`) and cost a restart, so it is refused before sending."""
    return connection.http is not None and not utf8_encodable(arguments)


UNENCODABLE = "fuzzgate's HTTP client cannot encode the request (a lone surrogate has no UTF-8 form); not sent"


def _failed_here(connection: Connection, arguments: dict[str, Any]) -> OutcomeStatus:
    """A call fuzzgate's own side failed under: the one whose request could not be encoded could
    never be sent (UNSENDABLE); the others were stranded (CLIENT_FAILED). Neither is the server's."""
    if connection.side.unencodable and not utf8_encodable(arguments):
        return OutcomeStatus.UNSENDABLE
    return OutcomeStatus.CLIENT_FAILED


def _client_failure(connection: Connection) -> str:
    side = connection.side
    why = side.failure or side.ended_by or "its session ended"
    return f"fuzzgate's side of the connection failed ({why}); the request did not reach the server"


async def call_tool(
    connection: Connection, name: str, arguments: dict[str, Any], timeout_s: float, surface: Surface = Surface.TOOL
) -> CallOutcome:
    """Send one `tools/call` (or the request of `surface`: `request_for`) and classify what came
    back. Never raises for anything the server does."""
    process = connection.process
    server = connection.server
    err_mark = server.stderr.mark() if server else 0
    wire_mark = process.wire.mark() if process else 0
    started = time.perf_counter()
    fields: dict[str, Any] = {}
    status: OutcomeStatus
    # The spec lets a client restart its timeout on progress, within a hard limit: a long operation
    # that keeps reporting progress is working, not hung.
    hard_deadline = anyio.current_time() + timeout_s * PROGRESS_EXTENSION_LIMIT
    scope = anyio.CancelScope(deadline=anyio.current_time() + timeout_s)

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        scope.deadline = min(hard_deadline, anyio.current_time() + timeout_s)

    loss_mark = connection.loss_mark()
    if connection.broken:
        # The session is over on fuzzgate's side: the request would not reach the server.
        return CallOutcome(OutcomeStatus.CLIENT_FAILED, 0.0, error=_client_failure(connection))
    if _unsendable_over_http(connection, arguments):
        return CallOutcome(OutcomeStatus.UNSENDABLE, 0.0, error=UNENCODABLE)
    try:
        request, result_type = request_for(surface, name, arguments)
        with scope:
            # `send_request`, not `call_tool`: fuzzgate checks the output schema itself (see `output`).
            result = await connection.client.session.send_request(request, result_type, progress_callback=on_progress)
        if scope.cancelled_caught:
            raise TimeoutError
    except TimeoutError:
        status = OutcomeStatus.TIMEOUT
    except MCPError as exc:
        # -32000 is also a code servers use for their own errors: it means the connection closed
        # only when the transport says so, and fuzzgate's side failed only when that side says so.
        closed = exc.code == CONNECTION_CLOSED
        if closed:
            # The session ending under the call unwinds in other tasks: let them record why.
            for _ in range(3):
                await anyio.lowlevel.checkpoint()
        if closed and connection.side.failure is not None:
            status = _failed_here(connection, arguments)
            fields["error"] = _client_failure(connection)
        elif closed and connection.lost_since(loss_mark):
            status = OutcomeStatus.CLOSED
        elif closed and connection.side.ended:
            status = OutcomeStatus.CLIENT_FAILED
            fields["error"] = _client_failure(connection)
        else:
            status = OutcomeStatus.RPC_ERROR
            fields.update(rpc_code=exc.code, text=exc.message, payload=json.dumps(exc.error.model_dump(mode="json")))
        fields.setdefault("error", describe_exception(exc))
    except RuntimeError as exc:
        status = OutcomeStatus.UNSUPPORTED
        fields["error"] = describe_exception(exc)
    except ValidationError as exc:
        # The reply parsed as JSON-RPC but its result is not a valid CallToolResult.
        status = OutcomeStatus.UNSUPPORTED
        fields["error"] = describe_exception(exc)
        fields["extra_anomaly"] = WireAnomaly(AnomalyKind.INVALID_MESSAGE, str(exc).splitlines()[0][:300])
    except ValueError as exc:
        status = OutcomeStatus.UNSENDABLE
        fields["error"] = describe_exception(exc)
    except Exception as exc:
        if not is_connection_loss(exc):
            raise
        status = _failed_here(connection, arguments) if connection.side.failure else OutcomeStatus.CLOSED
        fields["error"] = describe_exception(exc)
    else:
        if isinstance(result, types.InputRequiredResult):
            status = OutcomeStatus.UNSUPPORTED
            fields["error"] = "the server asked for input (input-required result), which fuzzgate does not answer"
        else:
            failed = isinstance(result, types.CallToolResult) and result.is_error
            status = OutcomeStatus.TOOL_ERROR if failed else OutcomeStatus.OK
            fields["text"] = _text_of(result)
        # Not model_dump_json: a server may echo a lone surrogate back, which pydantic refuses to encode.
        fields["payload"] = json.dumps(result.model_dump(mode="json", by_alias=True, exclude_none=True))
    duration = time.perf_counter() - started
    if status is OutcomeStatus.OK and isinstance(result, types.CallToolResult):
        if not connection.outputs.knows(name):
            await _learn_output_schemas(connection, name, timeout_s)
        violation = connection.outputs.violation(name, set(result.model_fields_set), result.structured_content)
        if violation is not None:
            status = OutcomeStatus.OUTPUT_INVALID
            fields.update(schema_path=violation.path, text=f"{name}: {violation.message}")

    if server is not None:
        if status is OutcomeStatus.CLOSED or (status is OutcomeStatus.TIMEOUT and server.returncode is not None):
            await await_death(server, http=process is None)
            status = OutcomeStatus.ABORTED if server.killed_by_us else OutcomeStatus.CLOSED
            fields["exit_code"] = server.returncode
            fields["memory"] = server.over_memory
        elif status is not OutcomeStatus.OK:
            text = str(fields.get("text", "")).strip()
            hinted = fields.get("rpc_code") in INTERNAL_ERROR_CODES or _BARE_SDK_ERROR.fullmatch(text) is not None
            await let_stderr_catch_up(server, err_mark, hinted)
        else:
            # What the server logged before it answered is already in the pipe: a few turns of the
            # event loop read it, so the call's behaviour (whose key holds its stderr templates) does
            # not depend on whether the stderr reader happened to run first.
            for _ in range(3):
                await anyio.lowlevel.checkpoint()
        fields["stderr"] = "\n".join(server.stderr.since(err_mark))
    anomalies = process.wire.since(wire_mark) if process is not None else ()
    extra = fields.pop("extra_anomaly", None)
    if extra is not None:
        anomalies = (*anomalies, extra)
    return CallOutcome(status=status, duration_s=duration, anomalies=anomalies, sources=connection.sources(), **fields)


FOLLOW_UP_S = 1.0
"""How long the ping after a timed-out request may take."""
AFTER_REPLY_S = 0.5
"""How long a replay of a crash waits, after the reply, for the server to die before it pings
(`follow_reply`'s `wait_s`): a server that shuts itself down after answering (a signal it sent itself, a
promise that rejected once the reply was out) dies within milliseconds, on the client's next request."""
WATCHED_AFTER_REPLY = frozenset({Kind.CRASH, Kind.OUT_OF_MEMORY})
"""The kinds whose replays wait `AFTER_REPLY_S` after the failing call's reply (`engine.replay`)."""


async def call_and_follow(
    connection: Connection,
    name: str,
    arguments: dict[str, Any],
    timeout_s: float,
    *,
    ping_s: float = FOLLOW_UP_S,
    surface: Surface = Surface.TOOL,
) -> CallOutcome:
    """`call_tool`, and when the request times out, a ping right after it. Whether the server still
    answers tells a request it dropped from a server that is stuck, and a server that dies on that
    next request shows which request killed it: the timed-out one."""
    outcome = await call_tool(connection, name, arguments, timeout_s, surface)
    return await follow_timeout(connection, outcome, ping_s=ping_s)


async def ping(connection: Connection, within_s: float) -> AfterTimeout:
    """What a ping sent now shows of the server: it answers within `within_s` (any error reply is an
    answer: the 2026-07-28 protocol has no ping), it does not, or the connection is gone."""
    if not connection.alive():
        return AfterTimeout.DIED
    loss_mark = connection.loss_mark()
    try:
        with anyio.fail_after(within_s):
            await connection.client.session.send_ping()
        return AfterTimeout.ALIVE
    except TimeoutError:
        return AfterTimeout.STUCK
    except MCPError as exc:
        # A closed connection is one only with the transport's evidence.
        died = exc.code == CONNECTION_CLOSED and connection.lost_since(loss_mark)
        return AfterTimeout.DIED if died else AfterTimeout.ALIVE
    except Exception as exc:
        if not is_connection_loss(exc):
            raise
        return AfterTimeout.DIED


async def follow_timeout(connection: Connection, outcome: CallOutcome, *, ping_s: float = FOLLOW_UP_S) -> CallOutcome:
    """`outcome` as it stands, or for a request that timed out, with what a ping sent right after
    it showed (`AfterTimeout`) and, if the server died, its exit and its last stderr words."""
    if outcome.status is not OutcomeStatus.TIMEOUT:
        return outcome
    process = connection.server
    err_mark = process.stderr.mark() if process else 0
    after = await ping(connection, ping_s)
    fields: dict[str, Any] = {"after_timeout": after}
    if process is not None and (after is AfterTimeout.DIED or process.returncode is not None):
        after = fields["after_timeout"] = AfterTimeout.DIED
        await await_death(process, http=connection.process is None)
        fields["exit_code"] = process.returncode
        fields["memory"] = process.over_memory
        fields["stderr"] = _last_words(outcome, process, err_mark)
    return replace(outcome, **fields)


async def follow_reply(
    connection: Connection,
    outcome: CallOutcome,
    stderr_mark: int,
    *,
    wait_s: float = 0.0,
    ping_s: float = FOLLOW_UP_S,
) -> CallOutcome:
    """`outcome` as it stands, or for a request the server answered and then died after (not
    stopped by fuzzgate), with `died_after_reply`, its exit and what it wrote to stderr since
    `stderr_mark` (the mark at the reply). With `wait_s` (a replay, which sends nothing after the
    failing call) the server is given that long to die, then pinged; without, only a death that
    already happened counts (fuzzing, which is about to send its next request). Only a server
    fuzzgate started can be seen to die."""
    process = connection.server
    if process is None or outcome.status not in _ANSWERED:
        return outcome
    if wait_s > 0:
        with anyio.move_on_after(wait_s):
            while process.returncode is None:
                await anyio.sleep(0.01)
        if process.returncode is None and await ping(connection, ping_s) is not AfterTimeout.DIED:
            return outcome
    elif process.returncode is None:
        return outcome
    await await_death(process, http=connection.process is None)
    if process.returncode is None or process.killed_by_us:
        # Over HTTP a failed ping can leave the process up; a stop of fuzzgate's is no crash.
        return outcome
    stderr = _last_words(outcome, process, stderr_mark)
    return replace(
        outcome, died_after_reply=True, exit_code=process.returncode, stderr=stderr, memory=process.over_memory
    )


def _last_words(outcome: CallOutcome, process: OwnedProcess, mark: int) -> str:
    """The call's stderr, and what the server wrote after it (since `mark`) as it died."""
    return "\n".join(filter(None, [outcome.stderr, *process.stderr.since(mark)]))


_ANSWERED = frozenset(
    {
        OutcomeStatus.OK,
        OutcomeStatus.TOOL_ERROR,
        OutcomeStatus.RPC_ERROR,
        OutcomeStatus.OUTPUT_INVALID,
        OutcomeStatus.UNSUPPORTED,
    }
)
"""The outcomes of a request the server answered: only those can have a death after them."""
