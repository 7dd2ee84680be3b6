"""The sandbox's first process: it builds the server's view of the machine, then runs the server.

`jail.jailed` starts it as

    unshare --mount --propagation private --ipc [--net] [--user --map-root-user] --
        python -I -S _jail_init.py SPEC... -- COMMAND ARGS...

so it begins in fresh mount, IPC and network namespaces (and a user namespace when fuzzgate is not
root). SPEC is `Spec.to_args()`. In order, it:

1. bind-mounts each writable dir (the layer's watched `outside`) onto itself, so it stays writable;
2. mounts an overlay for each scope dir (lower: the original, upper/work: the layer's own dirs) at
   the path the server sees, and one of the real HOME at the layer's home; if an overlay cannot be
   mounted, a scope dir is copied into its upper dir and that is bind-mounted instead;
3. mounts an overlay of the host's /tmp on /tmp: the server reads what is there (a command or a
   virtualenv under /tmp runs), and its writes go to an upper dir of its own, thrown away with the
   layer and seen by no other server (mounts under the host's /tmp are not part of it). The upper
   and work dirs are the layer's (`--tmp`); when the layer itself lives under /tmp they would lie
   inside their own lower dir, which overlayfs refuses, so they are made in a tmpfs at the stage
   instead, the new /tmp is built there with the layer's dir (and the mounts made inside it so far)
   re-attached at its path, and moved onto /tmp. If the overlay cannot be mounted (overlays stacked
   too deep: the host's /tmp is already an overlay of an overlay), /tmp is an empty private tmpfs
   instead, said on stderr. /dev is a fresh tmpfs holding only `DEVICES` (bound from the host's),
   the usual links, a new devpts instance and a private /dev/shm; /run (and /var/run when it is a
   directory of its own) is an empty private tmpfs, with a copy of resolv.conf when /etc/resolv.conf
   points there;
4. covers every Unix socket bound in fuzzgate's network namespace that the server would still see
   (read from the parent's /proc/PID/net/unix) with an empty file: a read-only mount does not stop
   connect();
5. remounts every other mount read-only, and every mount but the allowed devices and devpts
   `nodev`, so no other device node anywhere can be opened; brings up `lo` in the new network
   namespace;
6. makes a PID namespace: a reaper becomes its PID 1, then the helpers asked for start, each without
   the capabilities that could undo the sandbox: the relay to an HTTP server's port (`--relay`,
   `_relay.py`: its Unix sockets are bound in the host's directory before step 1, so they are the
   host's files fuzzgate connects to) and the SSRF listener (`--listen`: its sockets are bound on
   the new loopback before the PID namespace is made, and it reports on the pipe fuzzgate passed
   down, which the server never holds); the server comes last (PID 2 without helpers). The server is
   this process's child, so this process learns its exact exit status and passes it on: an exit code
   as is, a death by signal N by dying of signal N itself (PID 1 of a namespace cannot do that,
   which is why the reaper, not this process, is PID 1). The server mounts the namespace's /proc,
   drops the capabilities that could undo the sandbox, enters its working directory and execs
   COMMAND.

When this process dies, however it dies, the reaper sees its pipe close and exits, and the kernel
kills everything left in the PID namespace.

This module is the processes (steps 6 and the exec); the view is built by `_jail_view.py`, the
spec and the messages are `_jail_spec.py`'s, and a scope dir that cannot be overlaid is copied by
`_scope_copy.py` (which also serves `workspace` when there is no sandbox).

It runs with -I -S, without fuzzgate on sys.path: it appends the directory that holds the package,
and imports from it only those three modules (and `_listener.py` or `_relay.py` when asked for),
which import only the standard library, and as little of it as they can: it runs at every server
start, and `json`, `socket`, `signal` or `typing` would double its start-up time (hence `_signal`,
`_socket` and SPEC as plain arguments). It never writes to stdout, which is the server's MCP
channel; its own messages go to stderr, prefixed `fuzzgate-jail: `, and it exits 125 when the
sandbox cannot be built, 126/127 when COMMAND cannot be run.
"""

from __future__ import annotations

import _signal
import os
import sys
import time

if not __package__:
    # Run by path with -I -S (`jail.jailed`): the directory holding the fuzzgate package is not on
    # sys.path. Appended, so the standard library comes first; only stdlib-only modules of this
    # package are imported from it, all here, before anything is mounted.
    sys.path.append(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from fuzzgate.sandbox._jail_spec import SETUP_FAILED, JailError, Listen, Relay, Spec, parse, say
from fuzzgate.sandbox._jail_view import (
    CLONE_NEWPID,
    PR_SET_PDEATHSIG,
    build_view,
    deny_keyrings,
    drop_capabilities,
    mount_proc,
    prctl,
    unshare,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn


_PR_SET_DUMPABLE = 4
_FATAL_SIGNALS = (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP, _signal.SIGQUIT)
_RESET_SIGNALS = (*_FATAL_SIGNALS, _signal.SIGPIPE, _signal.SIGXFSZ)
"""Python ignores SIGPIPE and SIGXFSZ at start-up, and an ignored signal stays ignored across exec."""


def _null_stdio(fds: tuple[int, ...]) -> None:
    null = os.open(os.devnull, os.O_RDWR)
    for fd in fds:
        os.dup2(null, fd)
    os.close(null)


def _reaper(pipe_read: int) -> NoReturn:
    """PID 1 of the namespace: reap orphans until the outer process is gone, then exit, which makes
    the kernel kill whatever is left in the namespace."""
    try:
        prctl(PR_SET_PDEATHSIG, _signal.SIGKILL)
        _null_stdio((0, 1, 2))

        def reap(_signum: int, _frame: object) -> None:
            while True:
                try:
                    pid, _status = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    return
                if pid == 0:
                    return

        _signal.signal(_signal.SIGCHLD, reap)
        while os.read(pipe_read, 1):
            pass
    finally:
        os._exit(0)


def _server(spec: Spec, argv: list[str]) -> NoReturn:
    """The server's process (PID 2 without helpers): finish the view from inside the PID namespace,
    give up the powers to undo it, exec."""
    try:
        mount_proc()
        try:
            os.chdir(spec.chdir)
        except OSError as exc:
            raise JailError(f"cannot enter the working directory {spec.chdir}: {exc.strerror}") from None
        deny_keyrings()
        drop_capabilities()
        for signum in _RESET_SIGNALS:
            _signal.signal(signum, _signal.SIG_DFL)
    except JailError as exc:
        say(str(exc))
        os._exit(SETUP_FAILED)
    env = {**os.environ, **spec.env}
    try:
        os.execvpe(argv[0], argv, env)
    except FileNotFoundError:
        say(f"cannot run {argv[0]!r}: not found")
        os._exit(127)
    except OSError as exc:
        say(f"cannot run {argv[0]!r}: {exc.strerror}")
        os._exit(126)


def _pass_on(status: int) -> NoReturn:
    code = os.waitstatus_to_exitcode(status)
    if code >= 0:
        os._exit(code)
    signum = -code
    if signum not in (_signal.SIGKILL, _signal.SIGSTOP):
        _signal.signal(signum, _signal.SIG_DFL)
    import resource

    # Dying of SIGSEGV or SIGABRT here must not leave a second core dump.
    resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)


def _wait_briefly(pid: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and os.waitpid(pid, os.WNOHANG)[0] == 0:
        time.sleep(0.001)


def _listener(listen: Listen, log_fd: int, sockets: list[Any]) -> NoReturn:
    """The SSRF listener's process (`_listener.py`): in the jail's PID namespace, so it dies with
    the jail, without the powers to undo the sandbox, and deaf to the MCP pipes."""
    try:
        prctl(PR_SET_PDEATHSIG, _signal.SIGKILL)
        # Not dumpable: the server, the same user without CAP_SYS_PTRACE, cannot ptrace it to forge
        # or hide what it reports.
        prctl(_PR_SET_DUMPABLE, 0)
        _null_stdio((0, 1, 2))
        drop_capabilities()
        from fuzzgate.sandbox._listener import serve

        serve(sockets, log_fd, listen.port)
    finally:
        os._exit(0)


def _relay(relay: Relay, sockets: list[Any]) -> NoReturn:
    """The relay's process (`_relay.py`): in the jail's PID namespace and network, so it dies with
    the jail and reaches only the jail's loopback, without the powers to undo the sandbox."""
    try:
        prctl(PR_SET_PDEATHSIG, _signal.SIGKILL)
        prctl(_PR_SET_DUMPABLE, 0)
        _null_stdio((0, 1, 2))
        drop_capabilities()
        from fuzzgate.sandbox._relay import serve

        serve(sockets, relay.port)
    finally:
        os._exit(0)


def _release(sockets: list[Any], log_fd: int) -> None:
    """Close the listener's sockets and log: only its own process keeps them."""
    for sock in sockets:
        sock.close()
    if log_fd >= 0:
        os.close(log_fd)


def run(spec: Spec, argv: list[str]) -> NoReturn:
    # The server gets its group's signals itself; this process only waits for it.
    for signum in _FATAL_SIGNALS:
        _signal.signal(signum, _signal.SIG_IGN)
    log_fd, sockets, relayed = -1, [], []
    try:
        if spec.relay is not None:
            from fuzzgate.sandbox._relay import bind as bind_relay

            # In the host's directory, before the view makes it read-only or hides it: fuzzgate
            # connects to these files from outside the jail.
            try:
                relayed = bind_relay(spec.relay.directory)
            except OSError as exc:
                raise JailError(f"cannot bind the relay's sockets in {spec.relay.directory}: {exc.strerror}") from None
        if spec.listen is not None:
            # Imported (as the other modules) before anything is mounted, and only when asked for:
            # `_socket` and `select` cost start-up time.
            from fuzzgate.sandbox._listener import bind

            # Only the listener keeps the pipe: the server's exec closes it.
            log_fd = spec.listen.fd
            os.set_inheritable(log_fd, False)
        build_view(spec)
        if spec.listen is not None:
            # Bound once `lo` is up and before the server exists: its first request finds them.
            sockets = bind(spec.listen.port)
        unshare(CLONE_NEWPID)
    except JailError as exc:
        say(str(exc))
        os._exit(SETUP_FAILED)
    except OSError as exc:
        say(f"cannot build the sandbox: {exc.strerror} ({exc.filename or 'unshare'})")
        os._exit(SETUP_FAILED)
    pipe_read, pipe_write = os.pipe()
    reaper = os.fork()
    if reaper == 0:
        os.close(pipe_write)
        _release([*sockets, *relayed], log_fd)
        _reaper(pipe_read)
    os.close(pipe_read)
    relay = spec.relay
    relayer = os.fork() if relay is not None else -1
    if relayer == 0 and relay is not None:
        os.close(pipe_write)
        _release(sockets, log_fd)
        _relay(relay, relayed)
    _release(relayed, -1)
    listen = spec.listen
    listener = os.fork() if listen is not None and sockets else -1
    if listener == 0 and listen is not None:
        os.close(pipe_write)
        _listener(listen, log_fd, sockets)
    _release(sockets, log_fd)
    server = os.fork()
    if server == 0:
        _server(spec, argv)
    # Only the server holds the MCP pipes now, so they end when it does.
    _null_stdio((0, 1))
    status = os.waitpid(server, 0)[1]
    for helper in (listener, relayer):
        if helper > 0:
            # Reaped here, before the reaper goes: the namespace's PID 1 cannot finish exiting while
            # a process of the namespace (this one's child) is left unreaped.
            os.kill(helper, _signal.SIGKILL)
            os.waitpid(helper, 0)
    os.close(pipe_write)
    _wait_briefly(reaper, 2.0)
    _pass_on(status)


def main(args: list[str]) -> NoReturn:
    try:
        spec, argv = parse(args)
    except (JailError, IndexError, KeyError, ValueError) as exc:
        say(f"bad arguments: {exc}")
        os._exit(2)
    run(spec, argv)


if __name__ == "__main__":
    main(sys.argv[1:])
