"""Whether anything changed in a layer's watched directory since it was last walked.

A walk of the watched directory (`Layer.snapshot`) before and after every call cost about half a
millisecond per call, a tenth of fuzzgate's own time per call on a fast server, while almost every
call changes nothing there. `Watch` keeps an inotify watch on each directory the last walk saw: a
walk is needed again only when the kernel reported an event since. The walk stays the truth (what
changed is always read from two walks); the watch only says when a walk would find nothing new.

inotify through `inotify_simple` (a thin wrapper over the system calls, Linux only). Where it is
missing or refuses (another system, the per-user instance or watch limit reached), `open_watch`
gives None and the layer walks before and after every call as before.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

try:
    import inotify_simple
except ImportError:  # not Linux: every call walks
    inotify_simple = None

_MASK = 0
if inotify_simple is not None:
    flags = inotify_simple.flags
    # Everything that changes an entry a walk records (kind, size, mtime, inode, mode), seen from
    # the directory holding it; the directory's own removal or move too.
    _MASK = (
        flags.MODIFY
        | flags.ATTRIB
        | flags.CLOSE_WRITE
        | flags.CREATE
        | flags.DELETE
        | flags.MOVED_FROM
        | flags.MOVED_TO
        | flags.DELETE_SELF
        | flags.MOVE_SELF
        | flags.DONT_FOLLOW
        | flags.ONLYDIR
    )


class Watch:
    """An inotify instance watching directories; `changed` drains its events."""

    def __init__(self, inotify: Any) -> None:
        self._inotify = inotify
        self._watched: set[str] = set()
        self._dirty = True
        """Until every directory of the first walk is watched, nothing can be vouched for."""

    def cover(self, directories: Iterable[str]) -> None:
        """Watch each of `directories` (the ones the last walk descended into). A directory that
        cannot be watched leaves the watch dirty for good: every call walks again."""
        for directory in directories:
            if directory in self._watched:
                continue
            try:
                self._inotify.add_watch(directory, _MASK)
            except OSError:
                self._dirty = True
                self._watched.clear()
                return
            self._watched.add(directory)
        self._dirty = False

    def changed(self) -> bool:
        """True when an event arrived since the last call (or the watch cannot vouch): drained, so
        the next call says what happens after this one. A queue overflow counts as a change."""
        try:
            events = self._inotify.read(timeout=0)
        except OSError:
            events, self._dirty = [], True
        if events:
            # A directory that was removed or moved is watched again when a walk sees it again.
            self._watched.clear()
            return True
        return self._dirty

    def close(self) -> None:
        self._inotify.close()


def open_watch() -> Watch | None:
    """A new watch, or None where inotify is missing or refuses (the module docstring)."""
    if inotify_simple is None:
        return None
    try:
        return Watch(inotify_simple.INotify(nonblocking=True))
    except OSError:
        return None
