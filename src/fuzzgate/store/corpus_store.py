"""The corpus on disk: one target's entries, one small reviewable JSON file each.

Layout: `<root>/<slug(target)>/<entry.key>.json`, the root being `[fuzzgate] corpus` (default
`.fuzzgate/corpus`). A file holds `CorpusEntry.to_json()` as pretty-printed JSON with sorted keys
and a trailing newline, so the same entry always gives the same bytes and a diff shows what changed.
Writes go through `DirectoryDatabase` (temporary file, fsync, rename): a killed run leaves the old
file or the new one.

Reading never fails a run. A corpus is an optimisation, so `load()` turns every problem into words
instead of an exception: a missing or unreadable directory is a cold start with the reason, and a
file that cannot be read, is not JSON, or is an entry of another format is skipped with the reason
while the rest loads. Such a file is also never deleted (it may be a newer fuzzgate's entry). A file
whose name is not its entry's key (one written by hand) is read like any other.

Writing can fail (a read-only checkout, a full disk): `CorpusWriteError` names the file. Every
change that removes entries writes what stays first and deletes afterwards (`move`, `replace`), so
an interrupted change leaves a superset of the old or the new corpus, never less than either.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fuzzgate.model.corpus import CorpusEntry, CorpusFormatError, slug
from fuzzgate.model.errors import BaselineError, FuzzgateError
from fuzzgate.model.files import read_regular
from fuzzgate.model.findings import Surface
from fuzzgate.model.json_fields import UnusableJSON, parse_json
from fuzzgate.store.database import DirectoryDatabase

MAX_ENTRIES_PER_TOOL = 256
"""The most entries `add` keeps for one tool (prompt, resource) of a target. A run keeps an input
for every new feature it reaches; without a cap, a tool whose replies vary with every input (an
echo, a counter) would fill the corpus with entries that teach nothing, and every later run would
spend its replay share on them. `merge` and `minimize` write what they chose regardless."""

MAX_ENTRY_BYTES = 1 << 20
"""A larger file is skipped unread: entries are one call's arguments, capped by `max_string`."""

_SUFFIX = DirectoryDatabase.SUFFIX


class CorpusWriteError(FuzzgateError):
    """A corpus file that cannot be written or deleted (the run notes it; corpus tools exit 2)."""

    title = "corpus error"


@dataclass(frozen=True, slots=True)
class CorpusLoad:
    """What `CorpusStore.load` found."""

    entries: tuple[CorpusEntry, ...]
    """Every readable entry, sorted by key, each key once."""
    skipped: tuple[str, ...]
    """`"<file>: <reason>"` for each file that was not loaded."""
    cold: str | None
    """Why there is nothing to start from (no directory, an unreadable one, no entries), or None."""


def entry_bytes(entry: CorpusEntry) -> bytes:
    """The canonical file content of `entry`: sorted keys, two-space indent, UTF-8, trailing newline."""
    text = json.dumps(entry.to_json(), sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    return text.encode("utf-8", "backslashreplace")


def read_entry(data: bytes) -> CorpusEntry:
    """Parse an entry file. Raises `CorpusFormatError` saying what is wrong, in words for a user."""
    if len(data) > MAX_ENTRY_BYTES:
        raise CorpusFormatError(f"larger than {MAX_ENTRY_BYTES} bytes, not an entry")
    try:
        obj = parse_json(data)
    except UnusableJSON as exc:
        raise CorpusFormatError(str(exc)) from None
    return CorpusEntry.from_json(obj)


class CorpusStore:
    """One target's corpus directory (see the module docstring).

    The store remembers which file each loaded entry came from, so that `remove` and `replace`
    also delete entries written by hand under another name. It is meant for one writer at a time:
    a run, or one of the corpus tools.
    """

    def __init__(self, root: Path, target: str) -> None:
        self.root = Path(root)
        self.target = target
        self.path = self.root / slug(target)
        self._db = DirectoryDatabase(self.path)
        self._files: dict[str, set[str]] = {}
        """Entry key -> the file stems found holding it at the last `load`."""
        self._counts: Counter[tuple[Surface, str]] | None = None
        """Entries per (surface, tool), for the cap; built on the first `add`."""

    @classmethod
    def at(cls, directory: Path) -> CorpusStore:
        """The store of the target directory `directory` itself (e.g. another machine's corpus)."""
        store = cls(directory.parent, directory.name)
        store.path = Path(directory)
        store._db = DirectoryDatabase(store.path)
        return store

    def __repr__(self) -> str:
        return f"CorpusStore({str(self.path)!r})"

    # --- reading ----------------------------------------------------------------------------------

    def load(self) -> CorpusLoad:
        """Every readable entry, sorted by key; never raises (see the module docstring)."""
        self._files = {}
        stems, cold = self._stems()
        if stems is None:
            self._counts = Counter()
            return CorpusLoad((), (), cold)
        entries: dict[str, CorpusEntry] = {}
        skipped: list[str] = []
        for stem in stems:
            file = self.path / f"{stem}{_SUFFIX}"
            try:
                entry = read_entry(_read(file))
            except (CorpusFormatError, OSError) as exc:
                skipped.append(f"{file}: {_reason(exc)}")
                continue
            entries.setdefault(entry.key, entry)
            self._files.setdefault(entry.key, set()).add(stem)
        loaded = tuple(entries[key] for key in sorted(entries))
        self._counts = Counter((e.surface, e.tool) for e in loaded)
        if loaded:
            cold = None
        elif skipped:
            cold = f"none of the {len(skipped)} file(s) in {self.path} could be read"
        else:
            cold = f"no entries in {self.path} yet"
        return CorpusLoad(loaded, tuple(skipped), cold)

    def _stems(self) -> tuple[list[str] | None, str | None]:
        """The stems of the directory's entry files, or None and why there are none to read."""
        try:
            names = sorted(os.listdir(self.path))
        except FileNotFoundError:
            return None, f"no corpus at {self.path} yet"
        except NotADirectoryError:
            return None, _in_the_way(self.path)
        except OSError as exc:
            return None, f"{self.path} cannot be listed ({exc.strerror or exc})"
        return [name.removesuffix(_SUFFIX) for name in names if _is_entry_file(name)], None

    # --- writing ----------------------------------------------------------------------------------

    def add(self, entry: CorpusEntry) -> bool:
        """Write `entry` unless an entry with its key is there already, or its tool has
        `MAX_ENTRIES_PER_TOOL` entries in this target. Returns whether it was written."""
        if self._counts is None:
            self.load()
        assert self._counts is not None
        if self._holds(entry.key):
            return False
        if self._counts[entry.surface, entry.tool] >= MAX_ENTRIES_PER_TOOL:
            return False
        self._write(entry)
        return True

    def remove(self, entry: CorpusEntry) -> None:
        """Delete `entry`'s file (and any file found holding the same entry under another name)."""
        removed = False
        for stem in sorted({entry.key, *self._files.pop(entry.key, ())}):
            removed |= self._delete(stem)
        if removed and self._counts is not None:
            self._counts[entry.surface, entry.tool] = max(0, self._counts[entry.surface, entry.tool] - 1)

    def move(self, old: CorpusEntry, new: CorpusEntry) -> None:
        """Put `new` in place of `old` (a shrunk or cleansed entry): `new` is written first, so an
        interrupted move leaves both, never neither. The cap does not apply."""
        if old.key == new.key:
            self._write(new)
            return
        self._write(new)
        self.remove(old)

    def replace(self, keep: Sequence[CorpusEntry]) -> tuple[int, int]:
        """Make the corpus exactly `keep`: write those not there yet, then delete every other entry.
        Files that are not readable entries are left alone. Returns (written, deleted).

        Every kept entry is on disk before the first deletion, so an interrupted replace leaves a
        superset of `keep` (the corpus stays whole). The cap does not apply."""
        self.load()
        wanted = {entry.key: entry for entry in keep}
        written = 0
        for key in sorted(wanted):
            if not self._holds(key):
                self._write(wanted[key])
                written += 1
        deleted = 0
        for key, stems in sorted(self._files.items()):
            # A kept entry found under another name is now also under its key: the copy goes.
            extra = stems - {key} if key in wanted else stems
            for stem in sorted(extra):
                deleted += self._delete(stem)
        self.load()
        return written, deleted

    # --- files ------------------------------------------------------------------------------------

    def _holds(self, key: str) -> bool:
        """Whether the file named `key` holds a readable entry with that key (a corrupt file in its
        place is overwritten: it was skipped on reading anyway)."""
        try:
            return read_entry(_read(self.path / f"{key}{_SUFFIX}")).key == key
        except (CorpusFormatError, OSError):
            return False

    def _write(self, entry: CorpusEntry) -> None:
        try:
            self._db.save(entry.key.encode("ascii"), entry_bytes(entry))
        except BaselineError as exc:
            raise CorpusWriteError(
                exc.message, hint=f"check that {self.path} is a writable directory (or pass --corpus DIR)"
            ) from exc
        stems = self._files.setdefault(entry.key, set())
        if not stems and self._counts is not None:
            self._counts[entry.surface, entry.tool] += 1
        stems.add(entry.key)

    def _delete(self, stem: str) -> bool:
        """Delete the file `<stem>.json`; whether there was one."""
        file = self.path / f"{stem}{_SUFFIX}"
        try:
            file.unlink()
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise CorpusWriteError(
                f"{file} cannot be deleted ({exc.strerror or exc})",
                hint=f"check that {self.path} is a writable directory (or pass --corpus DIR)",
            ) from exc
        return True


def targets(root: Path) -> list[str]:
    """The target directories under `root` holding at least one entry file, sorted; none when
    `root` is missing or unreadable (`CorpusStore.load` of a target says why)."""
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    found = []
    for name in names:
        if name.startswith("."):
            continue
        try:
            files = os.listdir(root / name)
        except OSError:
            continue
        if any(_is_entry_file(f) for f in files):
            found.append(name)
    return found


def _in_the_way(path: Path) -> str:
    """Why `path` cannot be a directory: the file at it, or at one of its parents."""
    blocking = next((p for p in (*reversed(path.parents), path) if p.exists() and not p.is_dir()), path)
    if blocking == path:
        return f"{path} is a file, not a corpus directory"
    return f"{blocking} is a file, not a directory (the corpus is to be at {path})"


def _is_entry_file(name: str) -> bool:
    # A README or the temporary file of an interrupted write is not an entry.
    return name.endswith(_SUFFIX) and not name.startswith(".")


def _read(file: Path) -> bytes:
    # One byte more than the cap tells a too-large file from one exactly at it.
    return read_regular(file, MAX_ENTRY_BYTES + 1)


def _reason(exc: CorpusFormatError | OSError) -> str:
    if isinstance(exc, IsADirectoryError):
        return "a directory, not an entry file"
    if isinstance(exc, OSError):
        return f"cannot be read ({exc.strerror or exc})"
    return str(exc)
