"""The sandbox's first process: it builds the server's view of the machine, then runs the server.

`jail.jailed` starts it as

    unshare --mount --propagation private [--net] [--user --map-root-user] --
        python -I -S _jail_init.py SPEC... -- COMMAND ARGS...

so it begins in fresh mount and network namespaces (and a user namespace when fuzzgate is not
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
6. makes a PID namespace: a reaper becomes its PID 1 and the server its PID 2. The server is this
   process's child, so this process learns its exact exit status and passes it on: an exit code as
   is, a death by signal N by dying of signal N itself (PID 1 of a namespace cannot do that, which
   is why the reaper, not this process, is PID 1). The server mounts the namespace's /proc, drops
   the capabilities that could undo the sandbox, enters its working directory and execs COMMAND.

When this process dies, however it dies, the reaper sees its pipe close and exits, and the kernel
kills everything left in the PID namespace.

It runs with -I -S, without fuzzgate on sys.path, so it imports only the standard library, and as
little of it as it can: it runs at every server start, and `json`, `socket`, `signal` or `typing`
would double its start-up time (hence `_signal`, `_socket` and SPEC as plain arguments). It never
writes to stdout, which is the server's MCP channel; its own messages go to stderr, prefixed
`fuzzgate-jail: `, and it exits 125 when the sandbox cannot be built, 126/127 when COMMAND cannot
be run. `copy_scope` and `measure_scope` also serve `workspace` when there is no sandbox.
"""

from __future__ import annotations

import _signal
import _socket
import ctypes
import errno
import fcntl
import os
import stat
import struct
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

MAX_SCOPE_FILES = 20_000
MAX_SCOPE_BYTES = 1 << 30
DEPENDENCY_DIRS = frozenset(
    {"node_modules", ".venv", "venv", ".tox", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
)
"""Copied as a symlink to the original: installed dependencies and caches, large and rarely the
server's to write. Writes through such a link reach the original."""

PREFIX = "fuzzgate-jail: "
SETUP_FAILED = 125

_MS_RDONLY = 1
_MS_NOSUID = 2
_MS_NODEV = 4
_MS_NOEXEC = 8
_MS_REMOUNT = 32
_MS_NOSYMFOLLOW = 256
_MS_NOATIME = 1024
_MS_NODIRATIME = 2048
_MS_BIND = 4096
_MS_MOVE = 8192
_MS_REC = 16384
_MS_RELATIME = 1 << 21
_MS_STRICTATIME = 1 << 24
_ST_RELATIME = 4096
_ST_NOSYMFOLLOW = 8192
_CLONE_NEWPID = 0x20000000
_PR_SET_PDEATHSIG = 1
_PR_CAPBSET_DROP = 24
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 1
_IFREQ = "16sH22x"

_KEEP_CAPS = frozenset({0, 1, 3, 4, 5, 6, 7, 8, 10, 13, 18, 29, 31})
"""The capabilities Docker gives a container by default, less CAP_MKNOD (27): CHOWN, DAC_OVERRIDE,
FOWNER, FSETID, KILL, SETGID, SETUID, SETPCAP, NET_BIND_SERVICE, NET_RAW, SYS_CHROOT, AUDIT_WRITE,
SETFCAP. Without CAP_SYS_ADMIN a root server cannot mount, remount or unmount anything (so it cannot
undo the read-only view); without CAP_MKNOD it cannot make a device node for the disk."""

DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
"""The host's device nodes the server's /dev holds (bound, so they work in a user namespace too)."""
_DEV_LINKS = (
    ("fd", "/proc/self/fd"),
    ("stdin", "/proc/self/fd/0"),
    ("stdout", "/proc/self/fd/1"),
    ("stderr", "/proc/self/fd/2"),
    ("ptmx", "pts/ptmx"),
)
_RUN_DIRS = ("/run", "/var/run")

_PROC_READ_ONLY = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus")
"""Parts of the new /proc that reach the whole machine (sysctls, the magic SysRq key)."""

_FATAL_SIGNALS = (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP, _signal.SIGQUIT)
_RESET_SIGNALS = (*_FATAL_SIGNALS, _signal.SIGPIPE, _signal.SIGXFSZ)
"""Python ignores SIGPIPE and SIGXFSZ at start-up, and an ignored signal stays ignored across exec."""


class JailError(Exception):
    """The sandbox could not be built; the message is one line for the server's stderr."""


class ScopeTooLarge(Exception):
    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


# What to build --------------------------------------------------------------------------------


class Overlay:
    """One overlay mount: `lower` seen at `target`, writes going to `upper`. `on_failure`: `copy`
    (copy lower into upper and bind that), `empty` (bind the empty upper, say so on stderr) or
    `fail` (the sandbox cannot be built)."""

    __slots__ = ("lower", "on_failure", "target", "upper", "work")

    def __init__(self, lower: str, upper: str, work: str, target: str, on_failure: str) -> None:
        self.lower, self.upper, self.work, self.target, self.on_failure = lower, upper, work, target, on_failure


class Spec:
    """Everything the init needs, passed as arguments (`to_args`, `parse`)."""

    __slots__ = ("chdir", "env", "layer", "network", "overlays", "stage", "tmp_upper", "tmp_work", "userns", "writable")

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
    ) -> None:
        self.writable, self.overlays, self.layer, self.stage = writable, overlays, layer, stage
        self.tmp_upper, self.tmp_work = tmp_upper, tmp_work
        self.chdir, self.env, self.network, self.userns = chdir, env, network, userns

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
        return args


def parse(args: list[str]) -> tuple[Spec, list[str]]:
    """`Spec.to_args() + ["--", COMMAND, ARGS...]` back into the spec and the command line."""
    values: dict[str, str] = {}
    writable: list[str] = []
    overlays: list[Overlay] = []
    env: dict[str, str] = {}
    flags: set[str] = set()
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
        elif option == "--overlay":
            on_failure, lower, upper, work, target = args[i + 1 : i + 6]
            overlays.append(Overlay(lower, upper, work, target, on_failure))
            i += 6
        elif option == "--env":
            env[args[i + 1]] = args[i + 2]
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
    )
    return spec, command


# Copying a scope dir (the fallback when it cannot be overlaid) --------------------------------


class _Tally:
    def __init__(self, root: str, skip: tuple[str, ...]) -> None:
        self.root = root
        self.skip = frozenset(skip)
        self.files = 0
        self.bytes = 0

    def add(self, size: int) -> None:
        self.files += 1
        self.bytes += size
        if self.files > MAX_SCOPE_FILES or self.bytes > MAX_SCOPE_BYTES:
            raise ScopeTooLarge(self.root)


def measure_scope(src: str, *, skip: tuple[str, ...] = ()) -> None:
    """Raise `ScopeTooLarge` when copying `src` would pass `MAX_SCOPE_FILES` or `MAX_SCOPE_BYTES`."""
    _walk(src, None, _Tally(src, skip))


def copy_scope(src: str, dst: str, *, skip: tuple[str, ...] = ()) -> None:
    """Copy the tree `src` into the directory `dst` (made if missing), keeping symlinks as symlinks,
    making dependency dirs (`DEPENDENCY_DIRS`) symlinks to the originals, recreating FIFOs and
    leaving out sockets, devices, what cannot be read, and the paths in `skip` (the copy itself,
    when it lies inside `src`). Raises `ScopeTooLarge` past the caps."""
    import shutil

    os.makedirs(dst, exist_ok=True)
    _walk(src, dst, _Tally(src, (*skip, dst)))
    shutil.copystat(src, dst, follow_symlinks=False)


def _walk(src: str, dst: str | None, tally: _Tally) -> None:
    import shutil

    try:
        with os.scandir(src) as it:
            entries = list(it)
    except PermissionError:
        return
    for entry in entries:
        if entry.path in tally.skip:
            continue
        target = os.path.join(dst, entry.name) if dst is not None else None
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        mode = info.st_mode
        if stat.S_ISDIR(mode):
            if entry.name in DEPENDENCY_DIRS:
                if target is not None:
                    os.symlink(entry.path, target)
                continue
            tally.add(0)
            if target is not None:
                os.mkdir(target)
            _walk(entry.path, target, tally)
            if target is not None:
                shutil.copystat(entry.path, target, follow_symlinks=False)
        elif stat.S_ISREG(mode):
            tally.add(info.st_size)
            if target is not None:
                try:
                    shutil.copy2(entry.path, target, follow_symlinks=False)
                except PermissionError:
                    continue
        elif stat.S_ISLNK(mode):
            tally.add(0)
            if target is not None:
                os.symlink(os.readlink(entry.path), target)
        elif stat.S_ISFIFO(mode):
            tally.add(0)
            if target is not None:
                os.mkfifo(target, stat.S_IMODE(mode))


# System calls ------------------------------------------------------------------------------

_LIBC: ctypes.CDLL | None = None


def _libc() -> ctypes.CDLL:
    global _LIBC
    if _LIBC is None:
        _LIBC = ctypes.CDLL(None, use_errno=True)
        _LIBC.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
        _LIBC.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    return _LIBC


def _errno_error(filename: str | None = None) -> OSError:
    code = ctypes.get_errno()
    return OSError(code, os.strerror(code), filename)


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def raw(text: str | None) -> bytes | None:
        return os.fsencode(text) if text is not None else None

    if _libc().mount(raw(source), raw(target), raw(fstype), flags, raw(data)) != 0:
        raise _errno_error(target)


def _prctl(option: int, arg: int, arg3: int = 0) -> int:
    return int(_libc().prctl(option, arg, arg3, 0, 0))


def _unshare(flags: int) -> None:
    if _libc().unshare(flags) != 0:
        raise _errno_error()


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _drop_capabilities() -> None:
    """Leave only `_KEEP_CAPS` in the bounding, ambient, inheritable, permitted and effective sets.
    For a root process exec grants the bounding set, so that is the one that counts."""
    with open("/proc/sys/kernel/cap_last_cap") as handle:
        last = int(handle.read())
    for cap in range(last + 1):
        if cap not in _KEEP_CAPS and _prctl(_PR_CAPBSET_DROP, cap) != 0 and ctypes.get_errno() != errno.EINVAL:
            raise JailError(f"cannot drop capability {cap}: {os.strerror(ctypes.get_errno())}")
    _prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL)
    libc = _libc()
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        raise JailError(f"capget: {os.strerror(ctypes.get_errno())}")
    for word in (0, 1):
        keep = sum(1 << (cap - 32 * word) for cap in _KEEP_CAPS if cap // 32 == word)
        data[word].effective &= keep
        data[word].permitted &= keep
        data[word].inheritable &= keep
    if libc.capset(ctypes.byref(header), data) != 0:
        raise JailError(f"capset: {os.strerror(ctypes.get_errno())}")


# Building the view -------------------------------------------------------------------------


def _under(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def _escape(path: str) -> str:
    """Overlay options are split at ',' and lower dirs at ':'; both may be backslash-escaped."""
    return path.replace("\\", "\\\\").replace(",", "\\,").replace(":", "\\:")


def _mount_overlay(lower: str, upper: str, work: str, target: str, flags: int, *, userns: bool) -> None:
    """Raises the OSError of the last attempt."""
    options = f"lowerdir={_escape(lower)},upperdir={_escape(upper)},workdir={_escape(work)}"
    # In a user namespace overlayfs cannot write trusted.* xattrs (whiteouts of deleted lower files);
    # `userxattr` (Linux 5.11) stores them as user.* instead.
    if userns:
        try:
            _mount("overlay", target, "overlay", flags, f"userxattr,{options}")
            return
        except OSError:
            pass
    _mount("overlay", target, "overlay", flags, options)


def _overlay_refused(lower: str, target: str, error: OSError) -> str:
    return f"overlayfs not available: mounting an overlay of {lower} on {target} failed: {error.strerror}"


def _overlay(entry: Overlay, *, userns: bool) -> None:
    for path in (entry.upper, entry.work):
        os.makedirs(path, exist_ok=True)
    try:
        _mount_overlay(entry.lower, entry.upper, entry.work, entry.target, 0, userns=userns)
        return
    except OSError as exc:
        reason = _overlay_refused(entry.lower, entry.target, exc)
    if entry.on_failure == "copy":
        try:
            copy_scope(entry.lower, entry.upper)
        except ScopeTooLarge:
            limit = f"{MAX_SCOPE_FILES} files or {MAX_SCOPE_BYTES >> 30} GiB"
            raise JailError(f"{reason}; copying it instead would pass {limit}") from None
        except OSError as exc:
            raise JailError(f"{reason}; copying it instead failed: {exc}") from None
        _say(f"{reason}; copied instead")
    elif entry.on_failure == "empty":
        _say(f"{reason}; it is an empty directory instead")
    else:
        raise JailError(reason)
    try:
        _mount(entry.upper, entry.target, None, _MS_BIND | _MS_REC)
    except OSError as exc:
        raise JailError(f"{reason}; binding {entry.upper} there instead failed too: {exc.strerror}") from None


def _private_tmp(spec: Spec) -> None:
    """Step 3's /tmp (module docstring). Paths are resolved: the mounts made so far are at real paths."""
    tmp, layer_dir = os.path.realpath("/tmp"), os.path.realpath(spec.layer)
    if not _under(layer_dir, tmp):
        _tmp_overlay(tmp, spec.tmp_upper, spec.tmp_work, tmp, userns=spec.userns)
        return
    # The stage lies outside the layer: binding the layer into a /tmp built inside it would loop.
    os.makedirs(spec.stage, exist_ok=True)
    _mount("tmpfs", spec.stage, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=700")
    root = spec.stage + "/tmp"
    os.mkdir(root)
    _tmp_overlay(tmp, spec.stage + "/upper", spec.stage + "/work", root, userns=spec.userns)
    inner = root + layer_dir[len(tmp) :]
    os.makedirs(inner, exist_ok=True)
    _mount(layer_dir, inner, None, _MS_BIND | _MS_REC)
    _mount(root, tmp, None, _MS_MOVE)


def _tmp_overlay(lower: str, upper: str, work: str, target: str, *, userns: bool) -> None:
    """An overlay of `lower` (the host's /tmp) on `target`, else an empty tmpfs there."""
    flags = _MS_NOSUID | _MS_NODEV
    for path in (upper, work):
        os.makedirs(path, exist_ok=True)
    # The overlay's root takes its mode from the upper dir: keep /tmp's (1777, sticky), so a server
    # that drops root can still write there.
    os.chmod(upper, stat.S_IMODE(os.stat(lower).st_mode))
    try:
        _mount_overlay(lower, upper, work, target, flags, userns=userns)
    except OSError as exc:
        _say(f"{_overlay_refused(lower, target, exc)}; it is an empty private tmpfs instead")
        _mount("tmpfs", target, "tmpfs", flags, "mode=1777")


def _mount_points() -> list[str]:
    with open("/proc/self/mountinfo", "rb") as handle:
        lines = handle.read().splitlines()
    points = {os.fsdecode(_unescape(fields[4])) for fields in (line.split(b" ") for line in lines) if len(fields) > 4}
    return sorted(points)


def _unescape(field: bytes) -> bytes:
    """mountinfo writes space, tab, newline and backslash as octal escapes (\\040)."""
    out = bytearray()
    i = 0
    while i < len(field):
        if field[i : i + 1] == b"\\" and field[i + 1 : i + 4].isdigit():
            out.append(int(field[i + 1 : i + 4], 8))
            i += 4
        else:
            out += field[i : i + 1]
            i += 1
    return bytes(out)


def _restrict(path: str, *, read_only: bool, nodev: bool = True) -> None:
    """Make the mount at `path` read-only and/or `nodev`, keeping the flags a user namespace may not
    change. `nodev`: a device node there cannot be opened, whatever its mode."""
    try:
        info = os.statvfs(path)
    except OSError:
        return
    want_ro = read_only and not info.f_flag & os.ST_RDONLY
    want_nodev = nodev and not info.f_flag & os.ST_NODEV
    if not want_ro and not want_nodev:
        return
    flags = _MS_REMOUNT | _MS_BIND
    if read_only or info.f_flag & os.ST_RDONLY:
        flags |= _MS_RDONLY
    if nodev:
        flags |= _MS_NODEV
    for st_flag, ms_flag in (
        (os.ST_NOSUID, _MS_NOSUID),
        (os.ST_NODEV, _MS_NODEV),
        (os.ST_NOEXEC, _MS_NOEXEC),
        (os.ST_NOATIME, _MS_NOATIME),
        (os.ST_NODIRATIME, _MS_NODIRATIME),
        (_ST_RELATIME, _MS_RELATIME),
        (_ST_NOSYMFOLLOW, _MS_NOSYMFOLLOW),
    ):
        if info.f_flag & st_flag:
            flags |= ms_flag
    if not info.f_flag & (os.ST_NOATIME | _ST_RELATIME):
        flags |= _MS_STRICTATIME
    try:
        _mount(None, path, None, flags)
    except OSError as exc:
        # EINVAL: not a mount point in this view (a mount hidden under another); ENOENT: gone.
        if exc.errno not in (errno.EINVAL, errno.ENOENT):
            raise JailError(f"cannot make {path} read-only and nodev: {exc.strerror}") from None


def _private_dev(stage: str) -> None:
    """A fresh /dev (a tmpfs built at `stage`, then moved): `DEVICES` bound from the host's, the
    usual links, an empty shm dir and a new devpts instance. Nothing else of the host's /dev (disks,
    loop devices, /dev/log) is there."""
    os.makedirs(stage, exist_ok=True)
    _mount("tmpfs", stage, "tmpfs", _MS_NOSUID | _MS_NOEXEC, "mode=755")
    for name in DEVICES:
        if os.path.exists("/dev/" + name):
            os.close(os.open(f"{stage}/{name}", os.O_CREAT | os.O_WRONLY, 0o666))
            _mount("/dev/" + name, f"{stage}/{name}", None, _MS_BIND)
    for name, target in _DEV_LINKS:
        os.symlink(target, f"{stage}/{name}")
    for name in ("pts", "shm"):
        os.mkdir(f"{stage}/{name}")
    _mount(stage, "/dev", None, _MS_MOVE)
    try:
        _mount("devpts", "/dev/pts", "devpts", _MS_NOSUID | _MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620")
    except OSError as exc:
        _say(f"cannot mount a private /dev/pts: {exc.strerror}; there are no pseudo-terminals")


def _private_run() -> None:
    """An empty private tmpfs on /run (and on /var/run when it is a directory of its own): the
    sockets of the host's services (docker.sock, the session bus under /run/user) live there. When
    /etc/resolv.conf points into /run (systemd-resolved), a copy of it is kept."""
    resolv = os.path.realpath("/etc/resolv.conf")
    kept: bytes | None = None
    if any(_under(resolv, d) for d in _RUN_DIRS) and os.path.isfile(resolv):
        try:
            with open(resolv, "rb") as handle:
                kept = handle.read()
        except OSError:
            kept = None
    for path in _RUN_DIRS:
        if os.path.isdir(path) and not os.path.islink(path):
            _mount("tmpfs", path, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=755")
    if kept is not None:
        os.makedirs(os.path.dirname(resolv), exist_ok=True)
        with open(resolv, "wb") as handle:
            handle.write(kept)


def _host_sockets() -> list[str]:
    """The paths of the Unix sockets bound in the network namespace fuzzgate runs in (this
    process's parent: this process is already in its own)."""
    try:
        with open(f"/proc/{os.getppid()}/net/unix", "rb") as handle:
            lines = handle.read().splitlines()[1:]
    except OSError:
        return []
    paths = {os.fsdecode(fields[7]) for fields in (line.split(None, 7) for line in lines) if len(fields) == 8}
    return sorted(p for p in paths if p.startswith("/"))


def _hide_sockets(paths: list[str]) -> None:
    """Bind an empty file over every socket in `paths` the server would still see: a read-only
    mount does not stop connect(). Private /tmp, /run and /dev hide most already."""
    blank = "/dev/.fuzzgate-blank"
    os.close(os.open(blank, os.O_CREAT | os.O_WRONLY, 0o444))
    try:
        for path in paths:
            try:
                if not stat.S_ISSOCK(os.lstat(path).st_mode):
                    continue
            except OSError:
                continue
            try:
                _mount(blank, path, None, _MS_BIND)
            except OSError as exc:
                raise JailError(f"cannot hide the host socket {path}: {exc.strerror}") from None
    finally:
        os.unlink(blank)


def _loopback_up() -> None:
    sock = _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM)
    try:
        request = struct.pack(_IFREQ, b"lo", 0)
        flags = struct.unpack(_IFREQ, fcntl.ioctl(sock.fileno(), _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock.fileno(), _SIOCSIFFLAGS, struct.pack(_IFREQ, b"lo", flags | _IFF_UP))
    finally:
        sock.close()


def build_view(spec: Spec) -> None:
    """Steps 1-5 of the module docstring, in this process's new mount and network namespaces."""
    writable = set(spec.writable)
    for path in spec.writable:
        try:
            _mount(path, path, None, _MS_BIND | _MS_REC)
        except OSError as exc:
            raise JailError(f"cannot bind-mount {path}: {exc.strerror}") from None
    for entry in spec.overlays:
        _overlay(entry, userns=spec.userns)
        writable.add(entry.target)
    sockets = _host_sockets()
    try:
        _private_dev(spec.stage)
        _private_run()
        _private_tmp(spec)
        _mount("tmpfs", "/dev/shm", "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=1777")
    except OSError as exc:
        raise JailError(f"cannot mount a private {exc.filename}: {exc.strerror}") from None
    _hide_sockets(sockets)
    writable.update({"/tmp", "/dev/shm", "/dev/pts", *_RUN_DIRS})
    devices = {"/dev/" + name for name in DEVICES}
    for point in _mount_points():
        if _under(point, "/proc"):
            continue
        # The allowed devices and the new devpts stay devices; every other mount is nodev.
        _restrict(point, read_only=point not in writable, nodev=point not in devices and point != "/dev/pts")
    if not spec.network:
        try:
            _loopback_up()
        except OSError as exc:
            raise JailError(f"cannot bring up the loopback interface: {exc.strerror}") from None


# Processes ---------------------------------------------------------------------------------


def _say(message: str) -> None:
    os.write(2, f"{PREFIX}{message}\n".encode("utf-8", "replace"))


def _null_stdio(fds: tuple[int, ...]) -> None:
    null = os.open(os.devnull, os.O_RDWR)
    for fd in fds:
        os.dup2(null, fd)
    os.close(null)


def _reaper(pipe_read: int) -> NoReturn:
    """PID 1 of the namespace: reap orphans until the outer process is gone, then exit, which makes
    the kernel kill whatever is left in the namespace."""
    try:
        _prctl(_PR_SET_PDEATHSIG, _signal.SIGKILL)
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
    """PID 2: finish the view from inside the PID namespace, give up the powers to undo it, exec."""
    try:
        try:
            _mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
            for path in _PROC_READ_ONLY:
                if os.path.exists(path):
                    _mount(path, path, None, _MS_BIND | _MS_REC)
                    _restrict(path, read_only=True)
        except OSError as exc:
            raise JailError(f"cannot mount /proc: {exc.strerror}") from None
        try:
            os.chdir(spec.chdir)
        except OSError as exc:
            raise JailError(f"cannot enter the working directory {spec.chdir}: {exc.strerror}") from None
        _drop_capabilities()
        for signum in _RESET_SIGNALS:
            _signal.signal(signum, _signal.SIG_DFL)
    except JailError as exc:
        _say(str(exc))
        os._exit(SETUP_FAILED)
    env = {**os.environ, **spec.env}
    try:
        os.execvpe(argv[0], argv, env)
    except FileNotFoundError:
        _say(f"cannot run {argv[0]!r}: not found")
        os._exit(127)
    except OSError as exc:
        _say(f"cannot run {argv[0]!r}: {exc.strerror}")
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


def run(spec: Spec, argv: list[str]) -> NoReturn:
    # The server gets its group's signals itself; this process only waits for it.
    for signum in _FATAL_SIGNALS:
        _signal.signal(signum, _signal.SIG_IGN)
    try:
        build_view(spec)
        _unshare(_CLONE_NEWPID)
    except JailError as exc:
        _say(str(exc))
        os._exit(SETUP_FAILED)
    except OSError as exc:
        _say(f"cannot build the sandbox: {exc.strerror} ({exc.filename or 'unshare'})")
        os._exit(SETUP_FAILED)
    pipe_read, pipe_write = os.pipe()
    reaper = os.fork()
    if reaper == 0:
        os.close(pipe_write)
        _reaper(pipe_read)
    os.close(pipe_read)
    server = os.fork()
    if server == 0:
        _server(spec, argv)
    # Only the server holds the MCP pipes now, so they end when it does.
    _null_stdio((0, 1))
    status = os.waitpid(server, 0)[1]
    os.close(pipe_write)
    _wait_briefly(reaper, 2.0)
    _pass_on(status)


def main(args: list[str]) -> NoReturn:
    try:
        spec, argv = parse(args)
    except (JailError, IndexError, KeyError, ValueError) as exc:
        _say(f"bad arguments: {exc}")
        os._exit(2)
    run(spec, argv)


if __name__ == "__main__":
    main(sys.argv[1:])
