"""A disk that fills up: `fill_after(monkeypatch, n)` lets `n` files reach the disk, and every later
file's `fsync` fails with ENOSPC, as a full disk fails a write that had been buffered."""

from __future__ import annotations

import errno
import os
import stat

import pytest


def fill_after(monkeypatch: pytest.MonkeyPatch, files: int) -> None:
    real_fsync = os.fsync
    left = [files]

    def fsync(fd: int) -> None:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            if left[0] == 0:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            left[0] -= 1
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
