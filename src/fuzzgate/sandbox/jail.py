"""The sandbox a server fuzzgate starts runs in, built from Linux namespaces with util-linux `unshare`.

`jailed` turns a command line into one that runs it, for one `workspace.Layer`, with:

- **network**: a network namespace of its own with only `lo`, brought up: the server can use its
  own loopback, and connecting anywhere else fails at once with ENETUNREACH (DNS too).
  `network=True` keeps the host's network (no server fuzzgate fuzzes gets it: an HTTP server is
  reached through the relay instead).
- **files**: every scope dir is an overlay of the original at the path the layer maps it to
  (writes land in the layer, the user's files never change; if overlayfs refuses a dir, that dir is
  copied instead); the layer's `outside` (the watched area with the canaries) is writable at its
  own path; /tmp is an overlay of the host's /tmp, so a command, virtualenv or file under /tmp is
  there to run and read, and writes go to the layer (to memory when the layer itself lives under
  /tmp), never to the host or another server (an empty private tmpfs when overlayfs refuses it);
  /dev/shm is a private tmpfs; HOME is an overlay of the real HOME at `layer.home` (caches of npx,
  uv and the like are read, and writes are thrown away); /run is an empty private tmpfs; everything
  else is read-only (EROFS). Reading is not restricted: the server can read what its user can, the
  real HOME's secrets included.
- **devices and sockets**: /dev holds only null, zero, full, random, urandom, tty and a new devpts;
  every other mount is `nodev`; the Unix sockets bound on the host (docker.sock, the session bus)
  are hidden under /run or covered, since a read-only mount stops neither connect() nor opening a
  device for writing.
- **a listener**: with `listen`, the SSRF listener (`_listener.py`) answers on the jail's loopback,
  reachable from inside the jail only, and dies with it.
- **a relay**: with `relay`, an HTTP server on the jail's loopback is reached from the host through
  two Unix sockets in a host directory (`_relay.py`, `relay.py`), so that the server keeps a
  network of its own and fuzzgate still reaches it.
- **processes**: a PID namespace with its own /proc; the server sees only its own processes, and
  all of them die with the jail's main process.
- **powers**: the server keeps the capabilities a Docker container has by default, less MKNOD;
  without CAP_SYS_ADMIN it cannot remount or unmount anything.

It needs root, or unprivileged user namespaces (then `unshare --user --map-root-user` is added and
the server is root of its own user namespace). It fails in a Docker container without
CAP_SYS_ADMIN (a GitHub Docker action) and for non-root users on Ubuntu 24.04, where AppArmor
restricts unprivileged user namespaces (`kernel.apparmor_restrict_unprivileged_userns=1`):
`sandbox_unavailable` then says why, in one line.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from fuzzgate.model.errors import TargetError
from fuzzgate.sandbox import _jail_init, _jail_spec
from fuzzgate.sandbox._jail_spec import Listen, Overlay, Relay, Spec
from fuzzgate.sandbox._jail_view import relative_sockets
from fuzzgate.sandbox.removal import remove_tree
from fuzzgate.sandbox.workspace import Layer, overlay_upper, workdir_base

INIT = Path(_jail_init.__file__)
"""Run by path with `-I -S`: it needs only the standard library (and the stdlib-only modules of
this package it puts on its path), and starts faster without site."""
SETUP_FAILED = _jail_spec.SETUP_FAILED
"""The exit status of a jail that could not be built; its reason is on stderr, after `PREFIX`."""
PREFIX = _jail_spec.PREFIX
_PROBE_TIMEOUT_S = 10.0

_NESTED_TOOL = re.compile(
    r"\b(unshare|bwrap|bubblewrap|nsjail|firejail|minijail0?)\b.*"
    r"(failed|not permitted|permission denied|no permissions|cannot)",
    re.IGNORECASE,
)
_NAMESPACE_CALL = re.compile(r"\b(unshare|clone3?|setns)\(.*(EPERM|Operation not permitted)|CLONE_NEW\w+.*failed")

NESTED_SANDBOX_HINT = (
    'set sandbox = "off" for this server (`--sandbox off`), or run fuzzgate itself inside that other sandbox'
)
NETWORK_AT_START_HINT = (
    'a server that needs a service to start needs sandbox = "off" (`--sandbox off`), best under a network '
    'jail of your own that lets it reach only that service (docs/sandbox.md, "Servers that need the network")'
)


READ_ONLY_AT_START_HINT = (
    "a server that must write outside its scope to start can be given the directory instead: fuzzgate's scope holds "
    "its working directory and the directories its arguments name, and its HOME and /tmp are its own "
    '(docs/sandbox.md, "What the server can write")'
)


OFFLINE_ENV = {"npm_config_offline": "true", "UV_OFFLINE": "1", "YARN_ENABLE_OFFLINE_MODE": "1", "PIP_NO_INDEX": "1"}
"""Set for a server in the jail, under the target's own `env`: package managers (npm and npx, uv and
uvx, yarn, pip) use what is installed or cached at once. Told nothing, npx retries a registry the
jail's loopback cannot reach for a minute, and the server's start times out without a word."""

PACKAGE_RUNNER_AT_START_HINT = (
    "run the command once outside the sandbox so that your cache holds the package (the sandbox reads "
    "your HOME's caches), or install it where the sandbox can read it (`npm install PACKAGE` in the "
    'directory fuzzgate runs from, `uv tool install PACKAGE`), or set sandbox = "off" (`--sandbox off`) '
    'under a network jail of your own (docs/sandbox.md, "Servers started by npx or uvx")'
)

_OFFLINE_MISS = re.compile(
    r"ENOTCACHED|only-if-cached|network (?:connectivity )?(?:is|was) disabled|not found in the cache|offline mode"
    r"|No matching distribution",
    re.IGNORECASE,
)
"""What npm, uv, yarn and pip say when the package is in no cache and they may not fetch it."""

_RUNNERS = {"npx": (), "pnpx": (), "bunx": (), "uvx": (), "pipx": ("run",), "npm": ("exec",), "pnpm": ("dlx",),
            "yarn": ("dlx",), "bun": ("x",), "uv": ("tool", "run")}  # fmt: skip
"""Launchers that fetch and install a package when they start, and the words after the command
that make them do it (`pipx run`, `npm exec`, `uv tool run`)."""


def package_runner(command: str | None, args: Sequence[str]) -> str | None:
    """The launcher `command args` starts the server with when it is one that fetches the package at
    start (`npx -y PACKAGE`, `uvx PACKAGE`, `pipx run PACKAGE`), as the user wrote it; else None.
    In the jail it reaches no registry: it runs what is installed or in the caches the HOME overlay
    shows (`OFFLINE_ENV`), and a start that failed there is said to be the launcher's."""
    if command is None:
        return None
    name = os.path.basename(command)
    words = _RUNNERS.get(name)
    if words is None or tuple(args[: len(words)]) != words:
        return None
    return " ".join((name, *words))


_NODE_RUNNERS = frozenset({"npx", "pnpx", "bunx", "npm", "pnpm", "yarn", "bun"})


def installed_above(command: str | None, args: Sequence[str], scope: Sequence[Path]) -> Path | None:
    """The directory above the scope whose `node_modules` holds the package a Node launcher runs
    (`npx mcp-server-everything` with it installed in the scope's parent), or None. The launcher
    looks for it from its working directory upward, and the server runs in fuzzgate's copy of the
    scope, which has none of the user's directories above it: it then fetches the package, which
    fails offline, and "install it" is no advice for what is installed."""
    runner = package_runner(command, args)
    if runner is None or runner.split()[0] not in _NODE_RUNNERS:
        return None
    words = [a for a in args[len(runner.split()) - 1 :] if not a.startswith("-")]
    if not words:
        return None
    package = words[0][:1] + words[0][1:].partition("@")[0]  # `@scope/name@1.2` is `@scope/name`
    for top in scope:
        for above in top.parents:
            modules = above / "node_modules"
            if (modules / ".bin" / Path(package).name).exists() or (modules / package / "package.json").is_file():
                return above
    return None


def offline_miss(stderr: Sequence[str]) -> bool:
    """Whether a package manager told to stay offline in the jail (`OFFLINE_ENV`) said the package
    it was to run is in no cache."""
    return any(_OFFLINE_MISS.search(line) for line in stderr)


def nested_sandbox(stderr: Sequence[str]) -> bool:
    """Whether a server that failed to start in the jail said it could not build namespaces of its
    own (bubblewrap, nsjail, `unshare`): the jail drops the powers to do that, and nesting cannot
    be fixed from the server's side."""
    return any(_NESTED_TOOL.search(line) or _NAMESPACE_CALL.search(line) for line in stderr)


def sandbox_unavailable() -> str | None:
    """None when the sandbox works on this machine, else a one-line reason.

    The first call per process really starts a jail (overlay, HOME, /tmp, /proc, no network) around
    `true`; its answer is kept for the rest of the process."""
    if not sys.platform.startswith("linux"):
        return f"the sandbox needs Linux namespaces, not available on {sys.platform}"
    unshare = shutil.which("unshare")
    if unshare is None:
        return "unshare not found on PATH (util-linux)"
    return _probe(unshare, os.geteuid() != 0, os.environ.get("HOME", ""))


def jailed(
    command: str,
    args: Sequence[str],
    layer: Layer,
    *,
    scope: Sequence[Path],
    network: bool = False,
    userns: bool | None = None,
    listen: Listen | None = None,
    relay: Relay | None = None,
) -> tuple[str, tuple[str, ...]]:
    """The command line running `command args` in the sandbox for `layer` (module docstring).

    `scope` are original scope dirs, each a key of `layer.scope_map`. The environment and the
    pipes are the caller's, passed through untouched; in the jail HOME is `layer.home` and TMPDIR
    /tmp. The server runs in `layer.cwd`: the jail enters it after mounting, so the process may be
    started in any existing directory (`layer.cwd` exists on the host too). Its exit status is the
    server's, a death by signal included; a jail that could not be built exits `SETUP_FAILED`
    (125), a command that cannot be run 127 or 126, each with a line on stderr starting `PREFIX`.
    `userns` forces a user namespace (default: when not root). `listen` starts the SSRF listener
    (`listener.py`) on the jail's loopback, `relay` the relay to an HTTP server's port there
    (`relay.py`); each only without `network`."""
    unshare = shutil.which("unshare")
    if unshare is None:
        raise TargetError("the sandbox needs unshare (util-linux), not found on PATH", hint='set sandbox = "off"')
    missing = [str(d) for d in scope if d not in layer.scope_map]
    if missing:
        raise ValueError(f"not in the layer's scope: {', '.join(missing)}")
    use_userns = os.geteuid() != 0 if userns is None else userns
    if (listen is not None or relay is not None) and network:
        raise ValueError("a listener or relay on the jail's loopback needs the jail's own network")
    spec = _spec(layer, scope, network=network, userns=use_userns, home=os.environ.get("HOME", ""), probe=False)
    spec.listen, spec.relay = listen, relay
    return unshare, _unshare_args(spec, [command, *args])


class _LayerPaths(Protocol):
    """What the jail needs of a layer (`workspace.Layer`, or the probe's own)."""

    dir: Path
    isolated: bool
    outside: Path
    home: Path
    cwd: Path
    scope_map: dict[Path, Path]


def _unshare_args(spec: Spec, argv: list[str]) -> tuple[str, ...]:
    # --ipc: System V IPC and POSIX message queues are the host's otherwise (a root server read,
    # overwrote and deleted the host's shared memory and queues, and left its own behind).
    namespaces = ["--mount", "--propagation", "private", "--ipc"]
    if not spec.network:
        namespaces.append("--net")
    if spec.userns:
        namespaces += ["--user", "--map-root-user"]
    return (*namespaces, "--", sys.executable, "-I", "-S", str(INIT), *spec.to_args(), "--", *argv)


def _spec(layer: _LayerPaths, scope: Sequence[Path], *, network: bool, userns: bool, home: str, probe: bool) -> Spec:
    private = layer.dir / "jail"
    overlays: list[Overlay] = []
    if layer.isolated:
        for index, original in enumerate(scope):
            upper, work = overlay_upper(layer.dir, index), private / f"work-{index}"
            target = layer.scope_map[original]
            overlays.append(Overlay(str(original), str(upper), str(work), str(target), "fail" if probe else "copy"))
    writable = [str(layer.outside)]
    real_home = Path(home).resolve() if home else None
    if real_home is not None and real_home.is_dir() and real_home != Path("/"):
        upper, work = private / "home-upper", private / "home-work"
        # Fuzzing works with an empty HOME too, so even the probe does not require this overlay.
        overlays.append(Overlay(str(real_home), str(upper), str(work), str(layer.home), "empty"))
    else:
        writable.append(str(layer.home))
    return Spec(
        writable=writable,
        overlays=overlays,
        layer=str(layer.dir),
        # Outside the layer, so a new /tmp can be built there when the layer lives under /tmp.
        stage=str(layer.dir.parent / "stage"),
        tmp_upper=str(private / "tmp-upper"),
        tmp_work=str(private / "tmp-work"),
        chdir=str(layer.cwd),
        env={"HOME": str(layer.home), "TMPDIR": "/tmp"},
        network=network,
        userns=userns,
        hide=relative_sockets(),
    )


@functools.cache
def _probe(unshare: str, userns: bool, home: str) -> str | None:
    base = workdir_base()
    try:
        base.mkdir(parents=True, exist_ok=True)
        root = Path(tempfile.mkdtemp(prefix="fuzzgate-probe-", dir=base))
    except OSError as exc:
        return f"cannot make a work directory under {base}: {exc.strerror}"
    try:
        layer = _ProbeLayer(root)
        spec = _spec(layer, [layer.lower], network=False, userns=userns, home=home, probe=True)
        true = shutil.which("true") or "/bin/true"
        argv = [unshare, *_unshare_args(spec, [true])]
        try:
            done = subprocess.run(
                argv,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=_PROBE_TIMEOUT_S,
                cwd=root,
                start_new_session=True,
            )
        except subprocess.TimeoutExpired:
            return f"the sandbox did not start within {_PROBE_TIMEOUT_S:.0f} s"
        except OSError as exc:
            return f"cannot run unshare: {exc.strerror}"
        if done.returncode == 0 and not done.stdout:
            return None
        if done.stdout:
            return "the sandbox wrote to stdout (it must not: it is the server's MCP channel)"
        lines = [line for line in done.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
        reason = lines[-1].strip() if lines else f"the sandbox exited with status {done.returncode}"
        return _explained(reason.removeprefix(PREFIX)[:300], userns=userns)
    finally:
        remove_tree(root)


_APPARMOR_USERNS = Path("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")


def _explained(reason: str, *, userns: bool) -> str:
    """`reason`, with the usual cause when namespaces were refused."""
    if "Operation not permitted" not in reason and "Permission denied" not in reason:
        return reason
    try:
        restricted = userns and _APPARMOR_USERNS.read_text().strip() == "1"
    except OSError:
        restricted = False
    if restricted:
        return f"{reason} (AppArmor restricts unprivileged user namespaces: {_APPARMOR_USERNS.name}=1)"
    if not userns and Path("/.dockerenv").exists():
        return f"{reason} (a container without CAP_SYS_ADMIN)"
    return reason


class _ProbeLayer:
    """The parts of a `Layer` the probe's jail needs, without canaries (`git` costs time)."""

    def __init__(self, root: Path) -> None:
        self.dir = root / "s1"
        self.isolated = True
        self.outside = self.dir / "outside"
        self.home = self.dir / "home"
        self.lower = root / "scope"
        self.cwd = self.outside / "scope" / "0-scope"
        self.scope_map = {self.lower: self.cwd}
        for path in (self.lower, self.cwd, self.home):
            path.mkdir(parents=True)
        (self.lower / "file").write_text("probe\n")
