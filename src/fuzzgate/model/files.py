"""Writing files so that a run killed at any moment leaves the old file or the new one, never half
of one, and a set of files (a run's outputs) so that a failure leaves the old set or the new one,
never a mix. Reports, baseline entries and starter configs all go through here. Also the two checks
of a user's paths every command shares: reading only regular files (a FIFO would block the reader
forever) and, before any work starts, that an output directory can be written."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path

from fuzzgate.model.errors import UsageError


def write_atomic(path: Path, data: bytes | str) -> None:
    """Write `data` to `path` so that readers (and a run killed half-way) see the old file or the
    new one, never a mix: temp file in the same directory, fsync, rename over. Creates the parent
    directory. Raises `OSError`; on failure nothing but the old file is left behind."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _write_temporary(path, _encoded(data))
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_directory(path.parent)


def write_all(files: Mapping[Path, bytes | str]) -> None:
    """Write every file of `files` or none of them: each goes to a temp file beside it (fsynced),
    and only once all are written are they renamed over the old ones, in the mapping's order.
    A failure while writing (a full disk, a directory that cannot be written) removes the temp
    files and the directories this call created, and leaves every old file as it was; a rename
    within a directory takes no space, so it is not what a full disk stops. Raises `OSError`."""
    created: list[Path] = []
    written: dict[Path, str] = {}
    try:
        for path, data in files.items():
            created += _make_directories(path.parent)
            written[path] = _write_temporary(path, _encoded(data))
        for path, tmp in list(written.items()):
            os.replace(tmp, path)
            del written[path]
    except BaseException:
        for tmp in written.values():
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        for directory in reversed(created):
            with contextlib.suppress(OSError):
                directory.rmdir()
        raise
    for directory in dict.fromkeys(path.parent for path in files):
        _fsync_directory(directory)


def write_failed(what: str, where: Path, error: OSError, *, hint: str) -> UsageError:
    """The one line (exit 2) for `what` that could not be written to `where` after the checks
    before the work passed: the disk filled, or the directory changed since."""
    return UsageError(f"{what} could not be written to {where} ({error.strerror or error})", hint=hint)


def _encoded(data: bytes | str) -> bytes:
    # A lone surrogate (fuzzed input a server echoed) cannot be UTF-8; as `\udXXX` it stays
    # readable, and in a JSON string it is the very escape that decodes back to it.
    return data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data


def _make_directories(directory: Path) -> list[Path]:
    """Create `directory` and its missing parents; the ones created, outermost first."""
    missing: list[Path] = []
    while not os.path.lexists(directory) and directory.parent != directory:
        missing.append(directory)
        directory = directory.parent
    created: list[Path] = []
    for path in reversed(missing):
        path.mkdir(exist_ok=True)
        created.append(path)
    return created


def _write_temporary(path: Path, data: bytes) -> str:
    """A temp file beside `path` holding `data`, on disk (fsynced); removed if writing it fails. An
    `OSError` names `path` (its `filename`), not the temp file."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(path)) from exc
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        # mkstemp creates 0600; reports and baseline files are meant to be read and committed.
        os.chmod(tmp, 0o644)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise
    return tmp


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable; not every platform lets a directory be opened, so best effort."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class NotRegularFileError(OSError):
    """A path that names a FIFO, a socket or a device where a file was to be read."""


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def read_regular(path: Path, limit: int | None = None) -> bytes:
    """The bytes of the regular file at `path` (at most `limit`). Anything else raises before a
    byte is read: opening a FIFO to read blocks until a writer comes, so it is opened non-blocking
    and refused by its type. Raises `IsADirectoryError` for a directory, `NotRegularFileError`
    (its `strerror` says what the path is) for the rest, `OSError` as `open` does."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(errno.EINVAL, f"{_kind(mode)}, not a regular file", str(path))
        with os.fdopen(fd, "rb") as handle:
            fd = -1
            return handle.read() if limit is None else handle.read(limit)
    finally:
        if fd >= 0:
            os.close(fd)


def check_output_directory(path: Path, *, what: str, files: tuple[str, ...] = ()) -> None:
    """Fail before any work when the directory `path` (created later if missing) could not take
    the outputs: a file at it or above it, a directory that cannot be written, one of `files`
    already there as something other than a regular file. The check writes a temporary file and
    removes it, so it answers for root, ACLs and read-only mounts alike; it creates nothing that
    stays. Raises `UsageError` naming `path` and why."""
    existing = path
    while not os.path.lexists(existing) and existing.parent != existing:
        existing = existing.parent
    if not existing.is_dir():
        where = "" if existing == path else f" (the {what} is to be at {path})"
        raise UsageError(f"{existing} is not a directory{where}", hint=f"choose another {what} or move {existing} away")
    if existing == path:
        for name in files:
            target = path / name
            if os.path.lexists(target) and not target.is_file():
                raise UsageError(
                    f"{target} is in the way: not a regular file", hint=f"remove it or choose another {what}"
                )
    try:
        fd, probe = tempfile.mkstemp(dir=existing, prefix=".fuzzgate-probe.", suffix=".tmp")
    except OSError as exc:
        where = "" if existing == path else f" (the {what} {path} is to be created in it)"
        raise UsageError(
            f"{existing} cannot be written ({exc.strerror or exc}){where}",
            hint=f"choose another {what}, or fix its permissions",
        ) from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(probe)
