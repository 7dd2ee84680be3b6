"""An MCP session with one server instance, opened through the `mcp` SDK, with fuzzgate's own
timeouts around the start and the handshake: how the server is launched, the `Connection` the
other stages speak through, and the error that says why a server could not be started or reached.
One request on it is `call.py`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
import httpx2
import mcp_types as types
from mcp import Client
from mcp.shared.exceptions import MCPError

from fuzzgate import __version__
from fuzzgate.check.crash import memory_message
from fuzzgate.check.environment import SandboxCause, sandbox_cause
from fuzzgate.check.headline import printable
from fuzzgate.check.secrets import Redactor, redactor_for
from fuzzgate.config.model import TargetKind
from fuzzgate.config.views import ServerSettings
from fuzzgate.model.errors import TargetError
from fuzzgate.model.findings import Step
from fuzzgate.model.outcome import AnomalyKind
from fuzzgate.target.output import OutputChecker

if TYPE_CHECKING:
    from fuzzgate.sandbox.containment import Containment
    from fuzzgate.sandbox.listener import ListenerLog
    from fuzzgate.sandbox.workspace import Layer
from fuzzgate.coverage.channel import CoverageChannel, feedback_note
from fuzzgate.sandbox.early import Early
from fuzzgate.sandbox.jail import (
    NESTED_SANDBOX_HINT,
    NETWORK_AT_START_HINT,
    PACKAGE_RUNNER_AT_START_HINT,
    READ_ONLY_AT_START_HINT,
    installed_above,
    nested_sandbox,
    offline_miss,
    package_runner,
)
from fuzzgate.sandbox.owned_process import LaunchSpec, OwnedProcess
from fuzzgate.sandbox.relay import RelayDir, address_of
from fuzzgate.sandbox.scope import infer_scope
from fuzzgate.target.client_side import ClientSide
from fuzzgate.target.head_start import EarlyStart
from fuzzgate.target.http_server import ServedProcess, ServerNotReady, served_transport, where
from fuzzgate.target.http_transport import WatchedTransport, http_transport
from fuzzgate.target.launch import PreparedStart, launch_spec, missing, prepare_start
from fuzzgate.target.stdio import ServerProcess, stdio_transport

_UNREACHABLE = (SandboxCause.NETWORK, SandboxCause.DNS)

CONNECTION_CLOSED = -32000
STDERR_TAIL_LINES = 15


@dataclass(slots=True)
class Connection:
    """An initialized session. `process` is set for stdio targets, which fuzzgate owns; `http` for
    HTTP targets, and `served` for one whose command fuzzgate started. `outputs` holds the tools'
    output schemas, learnt at discovery or on first use."""

    client: Client
    transport: str
    process: ServerProcess | None
    http: WatchedTransport | None = None
    served: ServedProcess | None = None
    outputs: OutputChecker = field(default_factory=OutputChecker)
    layer: Layer | None = None
    """The throwaway scope and the watched directory outside it that this server start sees."""
    history: list[Step] = field(default_factory=list)
    """The calls this server received since it started, oldest first (the engine appends)."""
    steps_started: int = 0
    """Calls `engine.steps.send_step` began on this connection."""
    in_flight: int = 0
    """Fuzzing's calls on it not answered yet: a restart after a call that hung alone lets them end
    first (`engine.keeper.ServerKeeper.restart`)."""
    last_snapshot: tuple[int, Any] | None = None
    """The watched directory as the last call ended, and `steps_started` then: the next call's
    "before" when no call began since (one directory walk per call instead of two)."""
    side: ClientSide = field(default_factory=ClientSide)
    """fuzzgate's own side of the connection: whether it failed (`broken`), and how."""
    coverage: CoverageChannel | None = None
    """The coverage collector's side channel, when this server runs the collector (`coverage.channel`)."""
    feedback_note: str = ""
    """Which feedback this server's calls give and why, in one line (`coverage.feedback_note`)."""
    listener: ListenerLog | None = None
    """What the SSRF listener on this server's own loopback reports; None when it has none
    (`sandbox.listener`): canary URLs are then not sent to it."""

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
    watched: WatchedTransport | None,
    served: ServedProcess | None,
) -> AbstractAsyncContextManager[Any]:
    target = config.target
    if process is not None:
        return stdio_transport(process)
    assert target.url is not None and watched is not None
    http = http_transport(target.url, target.headers, watched)
    return http if served is None else served_transport(served, http)


def server_process(
    config: ServerSettings, extra_env: Mapping[str, str], spec: LaunchSpec | None = None
) -> ServerProcess:
    # The server's env holds the canaries as well as the user's values: all of them are secrets.
    process = ServerProcess(spec or launch_spec(config, extra_env), redactor_for(config, extra_env))
    process.memory_limit = config.memory_limit
    return process


def served_process(
    config: ServerSettings, extra_env: Mapping[str, str], spec: LaunchSpec | None = None, relay: RelayDir | None = None
) -> ServedProcess | None:
    """The process serving an HTTP target, when the target names its command; `relay`: it runs in
    the sandbox, reached through the relay's sockets there."""
    target = config.target
    if target.kind is not TargetKind.HTTP or target.command is None:
        return None
    assert target.url is not None
    launch = spec or launch_spec(config, extra_env)
    served = ServedProcess(launch, address_of(target.url), redactor_for(config, extra_env), relay)
    served.memory_limit = config.memory_limit
    return served


def _stdout_noise(process: OwnedProcess | None) -> str | None:
    """What a stdio server wrote on stdout that is not JSON-RPC before it ever answered: its logs on
    the MCP channel, the usual reason a server that works by hand never answers `initialize`."""
    if not isinstance(process, ServerProcess) or process.first_reply_mark is not None:
        return None
    lines = [a for a in process.wire.since(0) if a.kind is AnomalyKind.NON_JSON]
    if not lines:
        return None
    # The excerpt is the server's words, redacted where it was cut (`stdio._excerpt`).
    return (
        f"it wrote {len(lines)} line(s) on stdout that are not JSON-RPC (the first: '{printable(lines[0].excerpt)}'); "
        "stdout is the MCP channel: a server's logs belong on stderr"
    )


MEMORY_AT_START_HINT = (
    "raise [fuzzgate] memory_limit (--memory-limit) above what the server holds once started, or set it to off"
)


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
        noise = _stdout_noise(process)
        if noise is not None:
            reason = f"{reason}; {noise}"
        memory = process.over_memory if process is not None else None
        if memory is not None:
            # Not the server's exit: the watch's (`OwnedProcess.watch_memory`), before it ever answered.
            reason = f"{reason}; {memory_message(memory, 'as it started')}"
        elif process is not None and process.returncode is not None:
            reason = f"{reason}; the server exited with status {process.returncode}"
            if not tail:
                # `@benborla29/mcp-server-mysql` 2.0.9 without its database: exit 1 and not a word.
                reason = f"{reason} and wrote nothing on stderr"
        hint = "run the command by hand to see why; its last stderr lines follow" if detail else None
        if process is not None and process.returncode is not None and not tail:
            hint = "run the command by hand, with the same environment, to see why"
        cause = sandbox_cause(*tail)
        runner = package_runner(target.command, target.args)
        if jailed and nested_sandbox(tail):
            reason = f"{reason}; it builds a sandbox of its own (namespaces), which fuzzgate's sandbox does not allow"
            hint = f"{NESTED_SANDBOX_HINT}; its last stderr lines follow"
        above = installed_above(target.command, target.args, infer_scope(target)) if runner is not None else None
        if above is not None:
            # `npx mcp-server-everything` installed in the scope's parent: found by hand, not from the copy.
            reason = (
                f"{reason}; `{runner}` looks for the package from its working directory upward, it is installed "
                f"in {above / 'node_modules'}, above the server's scope, and fuzzgate runs the server in a copy "
                "of that scope"
            )
            hint = redact.text(f'add that directory to the scope: [target] scope = ["{above}"]') + (
                "; its last stderr lines follow" if tail else ""
            )
        elif jailed and runner is not None and (not tail or offline_miss(tail) or cause in _UNREACHABLE):
            # `npx -y @modelcontextprotocol/server-everything` with nothing cached.
            reason = (
                f"{reason}; `{runner}` fetches the package when it starts, and in the sandbox it has no network: "
                "it runs only what is installed or in your cache"
            )
            hint = PACKAGE_RUNNER_AT_START_HINT + ("; its last stderr lines follow" if tail else "")
        elif jailed and cause in _UNREACHABLE:
            reason = (
                f"{reason}; it could not reach a service it needs (in the sandbox its network is a loopback "
                "of its own: the host's services, DNS and the internet are out of its reach)"
            )
            hint = f"{NETWORK_AT_START_HINT}; its last stderr lines follow"
        elif jailed and cause is SandboxCause.READ_ONLY:
            reason = (
                f"{reason}; it could not write where it keeps its files (in the sandbox the file system "
                "outside its scope is read-only)"
            )
            hint = f"{READ_ONLY_AT_START_HINT}; its last stderr lines follow"
        if memory is not None:
            hint = MEMORY_AT_START_HINT
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
    config: ServerSettings,
    *,
    extra_env: Mapping[str, str] | None = None,
    containment: Containment | None = None,
    early: EarlyStart | None = None,
) -> AsyncIterator[Connection]:
    """Start (stdio) or reach (HTTP) the server and initialize a session, or raise `TargetError`.
    `early`: this start, prepared and started already (`head_start`), taken over instead.

    The SDK client lives in a task of its own: its task groups must be entered and left by one
    task, and only then can a timeout around the handshake cancel it cleanly.
    """
    redact = redactor_for(config, extra_env or {})
    if early is not None:
        prepared = early.prepared
    else:
        if containment is not None and config.target.command is not None:
            launch = launch_spec(config, extra_env or {})
            if missing(launch):
                # Inside the jail it would only show as the jail's exit 127: say it as plainly as unjailed.
                raise _startup_error(config, None, f"command not found ({launch.command})", redact)
        # Off the event loop: a layer is a tree of files to copy (and, in `close`, to remove), and a
        # slow disk made each server start block the calls in flight for up to 0.3 s. Shielded, so
        # a layer made is never lost to a cancellation: the `finally` below removes it.
        with anyio.CancelScope(shield=True):
            prepared = await anyio.to_thread.run_sync(prepare_start, config, extra_env or {}, containment)
    listener = prepared.listener
    try:
        async with _opened(
            config,
            extra_env or {},
            redact,
            prepared,
            early.process if early is not None else None,
        ) as connection:
            if listener is not None:
                listener.started()
                connection.listener = listener
            yield connection
    finally:
        if early is not None:
            # Killed here if the session never took it over (a failure before the start).
            early.process.discard()
        # The server and everything it started are gone by now: its layer can go too, off the
        # event loop (a tree to remove), and shielded so that a cancelled run removes it as well.
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(prepared.close)


@asynccontextmanager
async def _opened(
    config: ServerSettings,
    extra_env: Mapping[str, str],
    redact: Redactor,
    prepared: PreparedStart,
    early: Early | None,
) -> AsyncIterator[Connection]:
    spec, layer, plan, channel = prepared.spec, prepared.layer, prepared.plan, prepared.channel
    side = ClientSide()
    process = server_process(config, extra_env, spec) if config.target.kind is TargetKind.STDIO else None
    if process is not None:
        process.side = side
        process.early = early
    relay = layer.relay if layer is not None else None
    served = served_process(config, extra_env, spec, relay)
    if served is not None:
        served.early = early
    owned = process if process is not None else served
    # A server in the sandbox listens on its own loopback: every connection goes through the relay.
    inner = httpx2.AsyncHTTPTransport(uds=str(relay.socket)) if relay is not None else httpx2.AsyncHTTPTransport()
    watched = WatchedTransport(inner, side) if process is None else None

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
