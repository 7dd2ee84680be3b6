"""What the jail's first process is asked to build, and how it says it could not: the `Spec` passed
to it as plain arguments (`Spec.to_args` on fuzzgate's side, `parse` in the jail), `JailError`, and
its one-line messages on stderr, prefixed `fuzzgate-jail: ` (`say`); `SETUP_FAILED` is its exit
status when the sandbox cannot be built.

It imports only the standard library (and is imported by `_jail_init.py`, which the jail runs by
path with `-I -S`, before anything is mounted)."""

from __future__ import annotations

import os

PREFIX = "fuzzgate-jail: "
SETUP_FAILED = 125


class JailError(Exception):
    """The sandbox could not be built; the message is one line for the server's stderr."""


class Overlay:
    """One overlay mount: `lower` seen at `target`, writes going to `upper`. `on_failure`: `copy`
    (copy lower into upper and bind that), `empty` (bind the empty upper, say so on stderr) or
    `fail` (the sandbox cannot be built)."""

    __slots__ = ("lower", "on_failure", "target", "upper", "work")

    def __init__(self, lower: str, upper: str, work: str, target: str, on_failure: str) -> None:
        self.lower, self.upper, self.work, self.target, self.on_failure = lower, upper, work, target, on_failure


class Listen:
    """The SSRF listener (`_listener.py`): its port on the jail's loopback, and the inherited write
    end of the pipe it reports requests on (fuzzgate reads the other end)."""

    __slots__ = ("fd", "port")

    def __init__(self, port: int, fd: int) -> None:
        self.port, self.fd = port, fd


class Relay:
    """The relay (`_relay.py`): the host directory its Unix sockets are bound in, and the server's
    port on the jail's loopback that it passes connections on to."""

    __slots__ = ("directory", "port")

    def __init__(self, directory: str, port: int) -> None:
        self.directory, self.port = directory, port


class Spec:
    """Everything the init needs, passed as arguments (`to_args`, `parse`)."""

    __slots__ = (
        "chdir", "env", "hide", "layer", "listen", "network", "overlays", "relay", "stage", "tmp_upper",
        "tmp_work", "userns", "writable",
    )  # fmt: skip

    def __init__(
        self,
        *,
        writable: list[str],
        overlays: list[Overlay],
        layer: str,
        stage: str,
        tmp_upper: str,
        tmp_work: str,
        chdir: str,
        env: dict[str, str],
        network: bool,
        userns: bool,
        listen: Listen | None = None,
        relay: Relay | None = None,
        hide: list[str] | None = None,
    ) -> None:
        self.writable, self.overlays, self.layer, self.stage = writable, overlays, layer, stage
        self.tmp_upper, self.tmp_work = tmp_upper, tmp_work
        self.chdir, self.env, self.network, self.userns = chdir, env, network, userns
        self.listen, self.relay = listen, relay
        # Host sockets to hide besides those /proc/net/unix names by their full path: those bound
        # by a relative one, which fuzzgate found where they are (`_jail_view.relative_sockets`).
        self.hide = hide or []

    def to_args(self) -> list[str]:
        args = ["--layer", self.layer, "--stage", self.stage, "--tmp", self.tmp_upper, self.tmp_work]
        args += ["--chdir", self.chdir]
        for path in self.writable:
            args += ["--writable", path]
        for o in self.overlays:
            args += ["--overlay", o.on_failure, o.lower, o.upper, o.work, o.target]
        for name, value in self.env.items():
            args += ["--env", name, value]
        if self.network:
            args.append("--network")
        if self.userns:
            args.append("--userns")
        if self.listen is not None:
            args += ["--listen", str(self.listen.port), str(self.listen.fd)]
        if self.relay is not None:
            args += ["--relay", self.relay.directory, str(self.relay.port)]
        for path in self.hide:
            args += ["--hide", path]
        return args


def parse(args: list[str]) -> tuple[Spec, list[str]]:
    """`Spec.to_args() + ["--", COMMAND, ARGS...]` back into the spec and the command line."""
    values: dict[str, str] = {}
    writable: list[str] = []
    hide: list[str] = []
    overlays: list[Overlay] = []
    env: dict[str, str] = {}
    flags: set[str] = set()
    listen: Listen | None = None
    relay: Relay | None = None
    i = 0
    while i < len(args) and args[i] != "--":
        option = args[i]
        if option in ("--layer", "--stage", "--chdir"):
            values[option], i = args[i + 1], i + 2
        elif option == "--tmp":
            values["--tmp-upper"], values["--tmp-work"] = args[i + 1 : i + 3]
            i += 3
        elif option == "--writable":
            writable.append(args[i + 1])
            i += 2
        elif option == "--hide":
            hide.append(args[i + 1])
            i += 2
        elif option == "--overlay":
            on_failure, lower, upper, work, target = args[i + 1 : i + 6]
            overlays.append(Overlay(lower, upper, work, target, on_failure))
            i += 6
        elif option == "--env":
            env[args[i + 1]] = args[i + 2]
            i += 3
        elif option == "--listen":
            listen = Listen(int(args[i + 1]), int(args[i + 2]))
            i += 3
        elif option == "--relay":
            relay = Relay(args[i + 1], int(args[i + 2]))
            i += 3
        elif option in ("--network", "--userns"):
            flags.add(option)
            i += 1
        else:
            raise JailError(f"unknown argument {option!r}")
    command = args[i + 1 :]
    if not command:
        raise JailError("usage: _jail_init.py SPEC... -- COMMAND [ARGS...]")
    spec = Spec(
        writable=writable,
        overlays=overlays,
        layer=values["--layer"],
        stage=values["--stage"],
        tmp_upper=values["--tmp-upper"],
        tmp_work=values["--tmp-work"],
        chdir=values["--chdir"],
        env=env,
        network="--network" in flags,
        userns="--userns" in flags,
        listen=listen,
        relay=relay,
        hide=hide,
    )
    return spec, command


def say(message: str) -> None:
    os.write(2, f"{PREFIX}{message}\n".encode("utf-8", "replace"))
