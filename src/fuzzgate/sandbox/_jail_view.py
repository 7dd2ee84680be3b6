"""The server's view of the machine, built by the jail's first process in its fresh mount and network
namespaces (`build_view`, steps 1 to 5 of `_jail_init`'s docstring): overlays of the scope dirs and
HOME, a private /tmp, a minimal /dev, an empty /run, the host's Unix sockets covered, every other
mount read-only and `nodev`, `lo` up; and from inside the PID namespace, its own /proc
(`mount_proc`) and the capabilities that could undo the view dropped (`drop_capabilities`). The
system calls go through libc with ctypes.

It imports only the standard library (and is imported by `_jail_init.py`, which the jail runs by
path with `-I -S`, before anything is mounted)."""

from __future__ import annotations

import _socket
import ctypes
import errno
import fcntl
import os
import stat
import struct

from fuzzgate.sandbox._jail_spec import JailError, Overlay, Spec, say
from fuzzgate.sandbox._scope_copy import MAX_SCOPE_BYTES, MAX_SCOPE_FILES, ScopeTooLarge, copy_scope

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
CLONE_NEWPID = 0x20000000
PR_SET_PDEATHSIG = 1
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


def prctl(option: int, arg: int, arg3: int = 0) -> int:
    return int(_libc().prctl(option, arg, arg3, 0, 0))


def unshare(flags: int) -> None:
    if _libc().unshare(flags) != 0:
        raise _errno_error()


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_capabilities() -> None:
    """Leave only `_KEEP_CAPS` in the bounding, ambient, inheritable, permitted and effective sets.
    For a root process exec grants the bounding set, so that is the one that counts."""
    with open("/proc/sys/kernel/cap_last_cap") as handle:
        last = int(handle.read())
    for cap in range(last + 1):
        if cap not in _KEEP_CAPS and prctl(_PR_CAPBSET_DROP, cap) != 0 and ctypes.get_errno() != errno.EINVAL:
            raise JailError(f"cannot drop capability {cap}: {os.strerror(ctypes.get_errno())}")
    prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL)
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


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


_KEYRING_CALLS = (
    # (AUDIT_ARCH_*, the mask that folds an ABI's numbers onto the table's, add_key, request_key, keyctl)
    (0xC000003E, 0xBFFFFFFF, (248, 249, 250)),  # x86_64, and x32 (the same numbers with bit 30 set)
    (0x40000003, 0xFFFFFFFF, (286, 287, 288)),  # i386, which an x86_64 process can call too
    (0xC00000B7, 0xFFFFFFFF, (217, 218, 219)),  # aarch64
    (0x40000028, 0xFFFFFFFF, (309, 310, 311)),  # arm, aarch64's compat ABI
)
_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_SECCOMP_RET_ALLOW, _SECCOMP_RET_ERRNO = 0x7FFF0000, 0x00050000
_LD_ABS, _ALU_AND, _JEQ, _RET = 0x20, 0x54, 0x15, 0x06


def deny_keyrings() -> None:
    """Make `add_key`, `request_key` and `keyctl` fail with EPERM, for this process and all it
    starts, as Docker's default seccomp profile does: the kernel's keyrings are not namespaced by
    anything the jail makes (a root server would read and write the host's user keyring).

    A seccomp filter; written by hand (a dozen BPF instructions) because libseccomp's Python binding
    is not on PyPI and this process imports only the standard library."""
    program: list[tuple[int, int, int, int]] = [(_LD_ABS, 0, 0, 4)]  # the call's architecture
    for arch, mask, numbers in _KEYRING_CALLS:
        block = [(_LD_ABS, 0, 0, 0), (_ALU_AND, 0, 0, mask)]  # the call's number
        block += [(_JEQ, -1, 0, number) for number in numbers]  # -1: to the EPERM at the end
        block.append((_RET, 0, 0, _SECCOMP_RET_ALLOW))
        program.append((_JEQ, 0, len(block), arch))
        program += block
    program += [(_RET, 0, 0, _SECCOMP_RET_ALLOW), (_RET, 0, 0, _SECCOMP_RET_ERRNO | errno.EPERM)]
    deny = len(program) - 1
    filters = (_SockFilter * len(program))(
        *(_SockFilter(op, deny - at - 1 if jt < 0 else jt, jf, k) for at, (op, jt, jf, k) in enumerate(program))
    )
    fprog = _SockFprog(len(program), filters)
    if prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(fprog)) != 0:
        raise JailError(f"cannot filter the keyring calls: {os.strerror(ctypes.get_errno())}")


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
        say(f"{reason}; copied instead")
    elif entry.on_failure == "empty":
        say(f"{reason}; it is an empty directory instead")
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
        say(f"{_overlay_refused(lower, target, exc)}; it is an empty private tmpfs instead")
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
        say(f"cannot mount a private /dev/pts: {exc.strerror}; there are no pseudo-terminals")


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
            # Sized: a tmpfs holds the host's memory (by default up to half of it).
            _mount("tmpfs", path, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=755,size=16m")
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


def relative_sockets() -> list[str]:
    """Where the Unix sockets bound by a relative path in this process's network namespace are
    (`/proc/net/unix` says `rel.sock`, not where): the path taken from the working directory of a
    process holding the socket, found by its inode among the descriptors this process may read.
    Run by fuzzgate itself (`jail.jailed`), outside any user namespace the jail makes, which could
    read no other process's descriptors; the jail hides what it names with the rest (`--hide`)."""
    try:
        with open("/proc/self/net/unix", "rb") as handle:
            lines = handle.read().splitlines()[1:]
    except OSError:
        return []
    rows = [fields for fields in (line.split(None, 7) for line in lines) if len(fields) == 8]
    wanted = {
        f"socket:[{fields[6].decode()}]": os.fsdecode(fields[7])
        for fields in rows
        if not fields[7].startswith((b"/", b"@"))
    }
    if not wanted:
        return []
    found: set[str] = set()
    for pid in (entry for entry in os.listdir("/proc") if entry.isdigit()):
        try:
            links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
            held = [wanted[link] for link in links if link in wanted]
            if held:
                cwd = os.readlink(f"/proc/{pid}/cwd")
                found.update(os.path.normpath(os.path.join(cwd, path)) for path in held)
        except OSError:
            continue
    return sorted(found)


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
    sockets = sorted({*_host_sockets(), *spec.hide})
    try:
        _private_dev(spec.stage)
        _private_run()
        _private_tmp(spec)
        # 64 MiB, Docker's default: enough for a browser, not the host's memory.
        _mount("tmpfs", "/dev/shm", "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=1777,size=64m")
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


def mount_proc() -> None:
    """From inside the PID namespace: its own /proc, with the parts that reach the whole machine
    read-only."""
    try:
        _mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
        for path in _PROC_READ_ONLY:
            if os.path.exists(path):
                _mount(path, path, None, _MS_BIND | _MS_REC)
                _restrict(path, read_only=True)
    except OSError as exc:
        raise JailError(f"cannot mount /proc: {exc.strerror}") from None
