"""Containment of the server fuzzgate starts: its scope, the throwaway workspace it runs on, and
the sandbox around it where Linux namespaces allow one.

`sandbox = "auto"` (the default) jails the server when the jail works here and otherwise runs it
unconfined on a copy of its scope, saying why in the report; `"required"` refuses to run without
the jail; `"off"` never jails. In every case the server works on a throwaway copy (or overlay) of
its scope, so the user's files are never changed, and the directory outside the scope where the
canaries lie is watched call by call (`workspace.Layer.changes`). A jailed server with its own
loopback also gets the SSRF listener there (`listener.py`); the containment line says when a
server gets none (`NO_LISTENER`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from fuzzgate.config.model import SandboxMode, TargetConfig, TargetKind
from fuzzgate.model.errors import TargetError
from fuzzgate.model.findings import Kind
from fuzzgate.sandbox import resident
from fuzzgate.sandbox._jail_spec import Relay
from fuzzgate.sandbox.jail import OFFLINE_ENV, jailed, sandbox_unavailable
from fuzzgate.sandbox.listener import Listener, ListenerLog
from fuzzgate.sandbox.owned_process import LaunchSpec
from fuzzgate.sandbox.relay import RelayDir, address_of
from fuzzgate.sandbox.scope import infer_scope
from fuzzgate.sandbox.workspace import Layer, Workspace

NOT_OBSERVED = (
    "the network is not contained (the server can reach the internet and the runner's services); "
    "writes outside the watched directory and other processes are neither contained nor observed"
)

NO_LISTENER = (
    "no SSRF listener (the server has no loopback of its own: its 127.0.0.1 is the machine's): URL probes are not sent"
)
UNHEARD = (
    "its evidence is a request only the SSRF listener sees, and this server has none (no sandbox, or no "
    "loopback of its own: the containment line says which)"
)
UNWATCHED = (
    "its evidence is the memory watch stopping the server, and the watch is off here "
    '(memory_limit = "off", or no /proc to read)'
)


def unobserved(containment: Containment | None, memory_limit: int | None) -> dict[Kind, str]:
    """The kinds of finding whose evidence the servers `containment` starts cannot show, each with
    why: `ssrf` without the SSRF listener, `out_of_memory` without the memory watch (no limit, or
    no `/proc`). A replay of such a finding there could only show it gone, and the bug is not: it is
    not replayed, and a baseline entry of it stays known."""
    blind: dict[Kind, str] = {}
    if containment is None or containment.listener is None:
        blind[Kind.SSRF] = UNHEARD
    if memory_limit is None or not resident.AVAILABLE:
        blind[Kind.OUT_OF_MEMORY] = UNWATCHED
    return blind


UNCONTAINED_HTTP = (
    "not contained: an HTTP server fuzzgate did not start runs as it was started; its network, its "
    f"files and its processes are neither contained nor observed; {NO_LISTENER}"
)
"""The containment line of an HTTP target given by its URL alone (`contain` gives None for it)."""


@dataclass(frozen=True, slots=True)
class Containment:
    """How a run's server starts are contained: one workspace, jailed or not."""

    workspace: Workspace
    scope: tuple[Path, ...]
    jail: bool
    summary: str
    """One line for the report: what contains the server, or why not and what is then not observed."""
    unheld: str | None = "not known to hold"
    """None when the sandbox holds for every server start (jailed, its own loopback-only network,
    a throwaway layer, nothing else of the host writable), so a server can change only its layer;
    else why it does not, in a few words."""
    listener: Listener | None = None
    """The SSRF listener on each jail's loopback; None when the server has no network of its own
    (not jailed): URL probes are then not sent."""
    relay_port: int | None = None
    """The port of a jailed HTTP server on its own loopback, reached through the relay
    (`relay.py`); None for a stdio server or one not jailed."""

    def prepare(self, spec: LaunchSpec) -> tuple[LaunchSpec, Layer, ListenerLog | None]:
        """A fresh layer for one server start, the launch spec that runs the server on it, and
        what its listener reports (None without one: `listener`). The caller closes the log."""
        layer = self.workspace.layer()
        log = None
        try:
            args = layer.rewrite_args(spec.args)
            # An environment variable naming a scope directory (`NOTES_DIR=/srv/notes`) must lead to
            # the throwaway copy too, or the server would change the user's files through it.
            env = {name: layer.map_path(value) or value for name, value in spec.env.items()}
            command = spec.command
            if self.jail:
                env = {**OFFLINE_ENV, **env}
                listen = None
                if self.listener is not None:
                    self.listener.plant(layer.outside)
                    log = ListenerLog(self.listener.port)
                    listen = self.listener.jail_spec(log)
                    spec = replace(spec, pass_fds=(*spec.pass_fds, log.child_fd))
                relay = None
                if self.relay_port is not None:
                    layer.relay = RelayDir(self.workspace.root)
                    relay = Relay(str(layer.relay.path), self.relay_port)
                command, args = jailed(command, args, layer, scope=self.scope, listen=listen, relay=relay)
            return replace(spec, command=command, args=args, env=env, cwd=layer.cwd), layer, log
        except BaseException:
            if log is not None:
                log.close()
            layer.close()
            raise

    def close(self) -> None:
        self.workspace.close()


NOT_STARTED = "fuzzgate does not start this server (it only reaches it)"


def unheld_of(containment: Containment | None) -> str | None:
    """Why the sandbox does not hold for the servers `containment` starts (None: it does); for no
    containment (an HTTP target fuzzgate only reaches), that fuzzgate does not start them."""
    return NOT_STARTED if containment is None else containment.unheld


def token_for(seed: int) -> str:
    """The run's canary and probe token: the same seed gives the same probes."""
    return hashlib.sha256(f"fuzzgate-workspace\x1f{seed}".encode("ascii")).hexdigest()[:12]


def contain(target: TargetConfig, seed: int, *, labels: Sequence[str] = ()) -> Containment | None:
    """The containment for `target`'s server, None when fuzzgate does not start it (an HTTP target
    without a command). Raises `TargetError` when the sandbox is required and does not work here.
    `labels` name the scope directories in each layer (`Workspace`)."""
    if target.command is None:
        return None
    if target.cwd is not None and not target.cwd.is_dir():
        what = "is not a directory" if target.cwd.exists() else "does not exist"
        # The path is not shown: it may hold a `${VAR}` expansion, and nothing here redacts.
        raise TargetError(
            f"could not start the server: its working directory ([target] cwd) {what}",
            hint="[target] cwd names the directory the server runs in, relative to the config file",
        )
    http = target.kind is TargetKind.HTTP
    reason = None if target.sandbox is SandboxMode.OFF else sandbox_unavailable()
    if target.sandbox is SandboxMode.REQUIRED and reason is not None:
        raise TargetError(
            f'sandbox = "required", but the sandbox does not work here: {reason}',
            hint='run where Linux namespaces are allowed (see docs/sandbox.md), or set sandbox = "auto"',
        )
    jail = target.sandbox is not SandboxMode.OFF and reason is None
    scope = infer_scope(target)
    workspace = Workspace(scope, token_for(seed), isolate=jail, cwd=target.cwd, labels=labels)
    shown = ", ".join(str(d) for d in scope)
    relay_port = address_of(target.url)[1] if jail and http and target.url else None
    listener = Listener.for_token(workspace.token) if jail else None
    if listener is not None and listener.port == relay_port:
        # The server's own port on the same loopback: the listener gives way.
        listener = None
    if jail:
        net = "its own loopback only" + (" (fuzzgate reaches it through a Unix socket relay)" if http else "")
        summary = (
            f"sandboxed: scope {shown} (an overlay; your files are not changed), network {net}, "
            "the rest of the file system read-only, no host devices or Unix sockets (a minimal /dev, "
            "an empty /run), private /tmp and HOME, own processes"
        )
    elif target.sandbox is SandboxMode.OFF:
        summary = f'not sandboxed (sandbox = "off"): scope {shown} copied for the server; {NOT_OBSERVED}'
    else:
        summary = f"not sandboxed ({reason}): scope {shown} copied for the server; {NOT_OBSERVED}"
    if not any(workspace.cwd.is_relative_to(directory) for directory in workspace.scope):
        # `scope = [...]` without the working directory: the server runs in the original one
        # (read-only in the sandbox), and what it writes there is neither protected nor watched.
        summary += f"; its working directory {workspace.cwd} is outside the scope: it runs there as is"
    summary += f"; {listener.summary()}" if listener is not None else f"; {NO_LISTENER}"
    if jail:
        unheld = None
    elif target.sandbox is SandboxMode.OFF:
        unheld = 'sandbox = "off"'
    else:
        unheld = f"the sandbox does not work here: {reason}"
    return Containment(workspace, scope, jail, summary, unheld, listener, relay_port)
