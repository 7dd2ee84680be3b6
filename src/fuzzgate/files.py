"""Writing files so that a run killed at any moment leaves the old file or the new one, never half
of one. Reports, baseline entries and starter configs all go through here."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: bytes | str) -> None:
    """Write `data` to `path` so that readers (and a run killed half-way) see the old file or the
    new one, never a mix: temp file in the same directory, fsync, rename over. Creates the parent
    directory. Raises `OSError`; on failure nothing but the old file is left behind."""
    if isinstance(data, str):
        # A lone surrogate (fuzzed input a server echoed) cannot be UTF-8; as `\udXXX` it stays
        # readable, and in a JSON string it is the very escape that decodes back to it.
        data = data.encode("utf-8", "backslashreplace")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        # mkstemp creates 0600; reports and baseline files are meant to be read and committed.
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_directory(path.parent)


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
