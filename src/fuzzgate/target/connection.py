"""An MCP session with one server instance, opened through the `mcp` SDK, with fuzzgate's own
timeouts around every step, and one tool call turned into a `CallOutcome`."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel
import anyio.to_thread
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import MCP_SESSION_ID, streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter, ValidationError

from fuzzgate import __version__
from fuzzgate.check.patterns import INTERNAL_ERROR_CODES
from fuzzgate.check.patterns import SDK_UNHANDLED as _BARE_SDK_ERROR
from fuzzgate.check.patterns import TRACE_START as _TRACE_START
from fuzzgate.check.secrets import Redactor, redactor_for
from fuzzgate.config.model import TargetKind
from fuzzgate.config.views import ServerSettings
from fuzzgate.model.errors import TargetError
from fuzzgate.model.findings import Step, Surface
from fuzzgate.model.outcome import AfterTimeout, AnomalyKind, CallOutcome, OutcomeStatus, WireAnomaly
from fuzzgate.model.uri_template import expand_template
from fuzzgate.target.output import OutputChecker

if TYPE_CHECKING:
    from fuzzgate.sandbox.containment import Containment
    from fuzzgate.sandbox.workspace import Layer
from fuzzgate.coverage.plan import CollectorPlan, CoverageChannel, feedback_note, plan_collector
from fuzzgate.sandbox.jail import NESTED_SANDBOX_HINT, nested_sandbox
from fuzzgate.sandbox.owned_process import LaunchSpec, OwnedProcess, child_environment
from fuzzgate.target.client_side import ENCODING_ERRORS, ClientSide, utf8_encodable
from fuzzgate.target.http_server import ServedProcess, ServerNotReady, address_of, served_transport, where
from fuzzgate.target.stdio import ServerProcess, stdio_transport

CONNECTION_CLOSED = -32000
PROGRESS_EXTENSION_LIMIT = 6
"""Progress notifications extend a call's timeout, up to this many timeouts in all."""
STDERR_TAIL_LINES = 15
_SETTLE_S = 1.0
"""The longest wait for a traceback on stderr after an error reply."""
_FIRST_LINE_S = 0.2
"""How long an answer that says an exception happened waits for the first line of its traceback."""
_QUIET_S = 0.03
"""How long stderr must stay silent for what the server logged to count as complete."""
_DEATH_S = 2.0
"""The longest wait for a dead server's last stderr words and its exit status."""
_HTTP_EXIT_S = 0.5
"""How long a failed HTTP request waits to see whether the served process is exiting: over HTTP a
lost connection alone does not say the server died."""


_CALL_RESULT: TypeAdapter[types.CallToolResult | types.InputRequiredResult] = TypeAdapter(
    types.CallToolResult | types.InputRequiredResult
)
_LIST_PAGES = 100


class _WatchedTransport(httpx2.AsyncBaseTransport):
    """Counts HTTP requests that failed at the transport level (refused, reset, cut mid-stream), the
    evidence that an HTTP server went away, as a stdio server's exit is. It also keeps what a raw
    message (`raw.send_raw`) needs to join the SDK's session: the client, the URL and the session id
    the server gave."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, side: ClientSide | None = None) -> None:
        self._inner = inner
        self.side = side or ClientSide()
        self.failures = 0
        self.client: httpx2.AsyncClient | None = None
        self.url: str | None = None
        self.session_id: str | None = None

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            response = await self._inner.handle_async_request(request)
        except httpx2.TransportError:
            self.failures += 1
            raise
        if session_id := response.headers.get(MCP_SESSION_ID):
            self.session_id = session_id
        response.stream = _WatchedStream(response.stream, self)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


class _WatchedClient(httpx2.AsyncClient):
    """The SDK's HTTP client builds each request's body in a task of its transport. A body it cannot
    encode (a lone surrogate has no UTF-8 form) kills that task and with it the session, and every
    call then reads -32000 "Connection closed": recorded here first, as fuzzgate's own failure."""

    def __init__(self, side: ClientSide, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._side = side

    def build_request(self, *args: Any, **kwargs: Any) -> httpx2.Request:
        try:
            return super().build_request(*args, **kwargs)
        except ENCODING_ERRORS as exc:
            self._side.fail(exc, encoding=True)
            raise


class _WatchedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: Any, owner: _WatchedTransport) -> None:
        self._inner = inner
        self._owner = owner

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._inner:
                yield chunk
        except httpx2.TransportError:
            self._owner.failures += 1
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()


@dataclass(slots=True)
class Connection:
    """An initialized session. `process` is set for stdio targets, which fuzzgate owns; `http` for
    HTTP targets, and `served` for one whose command fuzzgate started. `outputs` holds the tools'
    output schemas, learnt at discovery or on first use."""

    client: Client
    transport: str
    process: ServerProcess | None
    http: _WatchedTransport | None = None
    served: ServedProcess | None = None
    outputs: OutputChecker = field(default_factory=OutputChecker)
    layer: Layer | None = None
    """The throwaway scope and the watched directory outside it that this server start sees."""
    history: list[Step] = field(default_factory=list)
    """The calls this server received since it started, oldest first (the engine appends)."""
    steps_started: int = 0
    """Calls `engine.steps.send_step` began on this connection."""
    last_snapshot: tuple[int, Any] | None = None
    """The watched directory as the last call ended, and `steps_started` then: the next call's
    "before" when no call began since (one directory walk per call instead of two)."""
    side: ClientSide = field(default_factory=ClientSide)
    """fuzzgate's own side of the connection: whether it failed (`broken`), and how."""
    coverage: CoverageChannel | None = None
    """The coverage collector's side channel, when this server runs the collector (`coverage.plan`)."""
    feedback_note: str = ""
    """Which feedback this server's calls give and why, in one line (`coverage.feedback_note`)."""

    @property
    def server(self) -> OwnedProcess | None:
        """The server process fuzzgate owns, if any: the stdio server or the one serving the URL.
        Its `stderr` is what the server logged, its `returncode` how it ended."""
        return self.process if self.process is not None else self.served

    def loss_mark(self) -> int:
        return self.http.failures if self.http is not None else 0

    def lost_since(self, mark: int) -> bool:
        """Whether the transport itself went away (the process died or its stdout ended, an HTTP
        request failed at the transport level) since `loss_mark()` returned `mark`."""
        if self.process is not None:
            process = self.process
            return process.returncode is not None or process.stdout_closed or process.stdin_closed
        if self.served is not None and self.served.returncode is not None:
            return True
        return self.http is not None and self.http.failures > mark

    @property
    def protocol_version(self) -> str:
        return self.client.protocol_version

    @property
    def server_info(self) -> types.Implementation | None:
        return self.client.server_info

    def sources(self) -> tuple[tuple[str, str], ...]:
        """Where the server's view of its scope lies and the user's directories it stands for."""
        return self.layer.sources() if self.layer is not None else ()

    def alive(self) -> bool:
        server = self.server
        return server is None or server.returncode is None

    @property
    def broken(self) -> bool:
        """Whether fuzzgate's own side of the connection failed: nothing sent on it reaches the server."""
        return self.side.broken


def describe_exception(exc: BaseException) -> str:
    """The innermost meaningful message of an exception or exception group, on one line."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, MCPError):
        return f"{exc.message} (JSON-RPC error {exc.code})"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _transport_for(
    config: ServerSettings,
    process: ServerProcess | None,
    watched: _WatchedTransport | None,
    served: ServedProcess | None,
) -> AbstractAsyncContextManager[Any]:
    target = config.target
    if process is not None:
        return stdio_transport(process)
    assert target.url is not None and watched is not None
    http = _http_transport(target.url, target.headers, watched)
    return http if served is None else served_transport(served, http)


@asynccontextmanager
async def _http_transport(url: str, headers: Mapping[str, str], watched: _WatchedTransport) -> AsyncIterator[Any]:
    http = _WatchedClient(
        watched.side, headers=dict(headers), timeout=httpx2.Timeout(30.0, read=300.0), transport=watched
    )
    watched.client, watched.url = http, url
    async with http, streamable_http_client(url, http_client=http) as streams:
        yield streams


def launch_spec(config: ServerSettings, extra_env: Mapping[str, str]) -> LaunchSpec:
    """How to start the target's server: its command line, environment (`extra_env`, then the
    user's `env`) and working directory. The one place that builds them, for a stdio server and for
    the command serving an HTTP target alike."""
    target = config.target
    assert target.command is not None
    return LaunchSpec(
        command=target.command,
        args=target.args,
        env=child_environment({**extra_env, **target.env}),
        cwd=target.cwd,
    )


def server_process(
    config: ServerSettings, extra_env: Mapping[str, str], spec: LaunchSpec | None = None
) -> ServerProcess:
    # The server's env holds the canaries as well as the user's values: all of them are secrets.
    return ServerProcess(spec or launch_spec(config, extra_env), redactor_for(config, extra_env))


def served_process(
    config: ServerSettings, extra_env: Mapping[str, str], spec: LaunchSpec | None = None
) -> ServedProcess | None:
    """The process serving an HTTP target, when the target names its command."""
    target = config.target
    if target.kind is not TargetKind.HTTP or target.command is None:
        return None
    assert target.url is not None
    launch = spec or launch_spec(config, extra_env)
    return ServedProcess(launch, address_of(target.url), redactor_for(config, extra_env))


def _startup_error(
    config: ServerSettings, process: OwnedProcess | None, reason: str, redact: Redactor, *, jailed: bool = False
) -> TargetError:
    """The exit-3 error. The command line and URL may hold `${VAR}` expansions, and the reason and
    stderr are the server's words: all are redacted (the stderr tail whole, before it is shown).
    `jailed`: the server ran in fuzzgate's sandbox, so a server that builds its own is told apart."""
    target = config.target
    if target.kind is TargetKind.STDIO or process is not None:
        what = " ".join([target.command or "", *target.args]).strip()
        tail = process.stderr.tail(STDERR_TAIL_LINES) if process else []
        detail = redact("\n".join(tail)) if tail else None
        if process is not None and process.returncode is not None:
            reason = f"{reason}; the server exited with status {process.returncode}"
        hint = "run the command by hand to see why; its last stderr lines follow" if detail else None
        if jailed and nested_sandbox(tail):
            reason = f"{reason}; it builds a sandbox of its own (namespaces), which fuzzgate's sandbox does not allow"
            hint = f"{NESTED_SANDBOX_HINT}; its last stderr lines follow"
        server = "the stdio server" if target.kind is TargetKind.STDIO else f"the HTTP server for {target.url},"
        return TargetError(
            redact.text(f"could not start {server} `{what}`: {reason}"),
            hint=hint,
            detail=detail,
        )
    return TargetError(
        redact.text(f"could not connect to the MCP server at {target.url}: {reason}"),
        hint="start the server before fuzzgate, and check the URL and headers",
    )


@asynccontextmanager
async def open_connection(
    config: ServerSettings, *, extra_env: Mapping[str, str] | None = None, containment: Containment | None = None
) -> AsyncIterator[Connection]:
    """Start (stdio) or reach (HTTP) the server and initialize a session, or raise `TargetError`.

    The SDK client lives in a task of its own: its task groups must be entered and left by one
    task, and only then can a timeout around the handshake cancel it cleanly.
    """
    redact = redactor_for(config, extra_env or {})
    spec: LaunchSpec | None = None
    layer: Layer | None = None
    if containment is not None and config.target.command is not None:
        launch = launch_spec(config, extra_env or {})
        if _missing(launch):
            # Inside the jail it would only show as the jail's exit 127: say it as plainly as unjailed.
            raise _startup_error(config, None, f"command not found ({launch.command})", redact)
        spec, layer = containment.prepare(launch)
    plan = plan_collector(config.target)
    channel: CoverageChannel | None = None
    try:
        if plan.inject:
            # After `prepare`: the measured directories are mapped to the layer, and the
            # collector's own paths (fuzzgate's installation) are not.
            channel = CoverageChannel(plan, map_path=layer.map_path if layer is not None else None)
            spec = channel.apply(spec or launch_spec(config, extra_env or {}))
        async with _opened(config, extra_env or {}, redact, spec, layer, plan, channel) as connection:
            yield connection
    finally:
        if channel is not None:
            channel.close()
        if layer is not None:
            # The server and everything it started are gone by now: its layer can go too (not
            # awaited, so a cancelled run removes it as well).
            layer.close()


@asynccontextmanager
async def _opened(
    config: ServerSettings,
    extra_env: Mapping[str, str],
    redact: Redactor,
    spec: LaunchSpec | None,
    layer: Layer | None,
    plan: CollectorPlan,
    channel: CoverageChannel | None,
) -> AsyncIterator[Connection]:
    side = ClientSide()
    process = server_process(config, extra_env, spec) if config.target.kind is TargetKind.STDIO else None
    if process is not None:
        process.side = side
    served = served_process(config, extra_env, spec)
    owned = process if process is not None else served
    watched = _WatchedTransport(httpx2.AsyncHTTPTransport(), side) if process is None else None

    async def list_roots(context: Any) -> types.ListRootsResult:
        roots = layer.roots() if layer is not None else []
        listed = [types.Root.model_validate({"uri": uri, "name": Path(uri).name or "/"}) for uri in roots]
        return types.ListRootsResult(roots=listed)

    client = Client(
        _transport_for(config, process, watched, served),
        mode=config.protocol.value,
        cache=None,
        client_info=types.Implementation(name="fuzzgate", version=__version__),
        # Declared only where fuzzgate knows the scope: the server may then restrict itself to it.
        list_roots_callback=list_roots if layer is not None else None,
    )
    ready = anyio.Event()
    release = anyio.Event()
    failure: list[BaseException] = []

    async def hold() -> None:
        try:
            async with client:
                ready.set()
                await release.wait()
        except Exception as exc:
            failure.append(exc)
            side.ended_by = describe_exception(exc)
        finally:
            # Left before `release`: the session ended under the calls (a transport task died).
            side.ended = True
            ready.set()

    timeout_s = config.startup_timeout_ms / 1000
    jailed = layer is not None and layer.isolated
    error: TargetError | None = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(hold)
        with anyio.move_on_after(timeout_s) as waiting:
            await ready.wait()
        if waiting.cancelled_caught:
            reason = f"no answer to initialize within {timeout_s:g}s"
            if served is not None and not served.ready:
                reason = f"nothing accepted connections on {where(served.address)} within {timeout_s:g}s"
            error = _startup_error(config, owned, reason, redact, jailed=jailed)
        elif failure:
            error = _startup_error(config, owned, _startup_reason(failure[0]), redact, jailed=jailed)
        if error is not None:
            tg.cancel_scope.cancel()
        else:
            try:
                connection = Connection(
                    client=client,
                    transport=config.target.kind.value,
                    process=process,
                    http=watched,
                    served=served,
                    layer=layer,
                    side=side,
                )
                if channel is not None and await channel.hello() is not None:
                    connection.coverage = channel
                info, why = (channel.info, channel.failure) if channel is not None else (None, None)
                connection.feedback_note = feedback_note(config.target, plan, info, why)
                yield connection
            finally:
                release.set()
    if error is not None:
        raise error


def _missing(spec: LaunchSpec) -> bool:
    """Whether `spec.command` names no program, as the process would look it up (PATH from its
    environment; a path relative to its working directory)."""
    command = spec.command
    if "/" in command:
        path = Path(command) if Path(command).is_absolute() or spec.cwd is None else Path(spec.cwd) / command
        return not path.exists()
    return shutil.which(command, path=spec.env.get("PATH", os.defpath)) is None


def _startup_reason(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, ServerNotReady):
        return str(exc)
    if isinstance(exc, FileNotFoundError):
        return f"command not found ({exc.filename})"
    if isinstance(exc, PermissionError):
        return f"permission denied ({exc.filename})"
    if isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED:
        return "the server closed the connection during initialization"
    return describe_exception(exc)


async def _let_stderr_catch_up(process: OwnedProcess, mark: int, exception_hinted: bool) -> None:
    """A server logs a traceback before it answers, but on another pipe, and a traceback read half
    way would give the same bug another fingerprint. So: a few turns of the event loop for what is
    already in the pipe; then, if the server has been writing (or its answer says an exception
    happened), wait until stderr has been quiet for a moment, within a bound."""
    for _ in range(3):
        await anyio.lowlevel.checkpoint()
    # Servers that log every request must not pay for the wait: only a traceback is waited for.
    if not exception_hinted and not any(_TRACE_START.search(line) for line in process.stderr.since(mark)):
        return
    with anyio.move_on_after(_SETTLE_S):
        first_line_by = anyio.current_time() + _FIRST_LINE_S
        while process.stderr.mark() == mark:
            if anyio.current_time() > first_line_by:
                return
            await anyio.sleep(0.005)
        seen = process.stderr.mark()
        quiet_since = anyio.current_time()
        while anyio.current_time() - quiet_since < _QUIET_S:
            await anyio.sleep(0.005)
            if process.stderr.mark() != seen:
                seen = process.stderr.mark()
                quiet_since = anyio.current_time()


async def _await_death(server: OwnedProcess, *, http: bool) -> None:
    """The connection is gone: wait briefly for the server's last stderr words (complete when its
    pipes close) and its exit status. Over HTTP only if the process is exiting at all."""
    with anyio.move_on_after(_DEATH_S):
        if http:
            with anyio.move_on_after(_HTTP_EXIT_S):
                while server.returncode is None:
                    await anyio.sleep(0.01)
            if server.returncode is None:
                return
        await server.stderr_closed.wait()
        while server.returncode is None:
            await anyio.sleep(0.01)


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
    session (see `_WatchedClient`) and cost a restart, so it is refused before sending."""
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


def _is_connection_loss(exc: BaseException) -> bool:
    if isinstance(exc, anyio.ClosedResourceError | anyio.BrokenResourceError | anyio.EndOfStream):
        return True
    return isinstance(exc, httpx2.TransportError)


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
        if not _is_connection_loss(exc):
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
            await _await_death(server, http=process is None)
            status = OutcomeStatus.ABORTED if server.killed_by_us else OutcomeStatus.CLOSED
            fields["exit_code"] = server.returncode
        elif status is not OutcomeStatus.OK:
            text = str(fields.get("text", "")).strip()
            hinted = fields.get("rpc_code") in INTERNAL_ERROR_CODES or _BARE_SDK_ERROR.fullmatch(text) is not None
            await _let_stderr_catch_up(server, err_mark, hinted)
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
OBSERVE_SLACK_S = FOLLOW_UP_S + _DEATH_S
"""Past its own timeout, the longest a call takes to be observed to its end: the ping after it
times out, then a dead server's last stderr words and exit status."""


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


async def follow_timeout(connection: Connection, outcome: CallOutcome, *, ping_s: float = FOLLOW_UP_S) -> CallOutcome:
    """`outcome` as it stands, or for a request that timed out, with what a ping sent right after
    it showed (`AfterTimeout`) and, if the server died, its exit and its last stderr words."""
    if outcome.status is not OutcomeStatus.TIMEOUT:
        return outcome
    process = connection.server
    err_mark = process.stderr.mark() if process else 0
    loss_mark = connection.loss_mark()
    after: AfterTimeout
    if not connection.alive():
        after = AfterTimeout.DIED
    else:
        try:
            with anyio.fail_after(ping_s):
                await connection.client.session.send_ping()
            after = AfterTimeout.ALIVE
        except TimeoutError:
            after = AfterTimeout.STUCK
        except MCPError as exc:
            # Any error reply is an answer; a closed connection is one only with the transport's evidence.
            died = exc.code == CONNECTION_CLOSED and connection.lost_since(loss_mark)
            after = AfterTimeout.DIED if died else AfterTimeout.ALIVE
        except Exception as exc:
            if not _is_connection_loss(exc):
                raise
            after = AfterTimeout.DIED
    fields: dict[str, Any] = {"after_timeout": after}
    if process is not None and (after is AfterTimeout.DIED or process.returncode is not None):
        after = fields["after_timeout"] = AfterTimeout.DIED
        await _await_death(process, http=connection.process is None)
        fields["exit_code"] = process.returncode
        more = process.stderr.since(err_mark)
        if more:
            fields["stderr"] = "\n".join(filter(None, [outcome.stderr, *more]))
    return replace(outcome, **fields)
