"""Where findings are kept between runs: a small key/value-set store shaped like Hypothesis's
`ExampleDatabase`.

The contract every `CorpusDatabase` keeps:

- It maps `bytes` keys to sets of `bytes` values. Order within a set carries no meaning.
- `save(key, value)` is idempotent: saving a value that is already there does nothing.
- `fetch(key)` yields the values saved under `key`, or nothing; it never creates anything.
- `delete(key, value)` removes that one value; deleting an absent value does nothing.
- `save_all(items)` saves several values at once, all or none where the backend can.
- `move(src, dest, value)` leaves `value` under `dest` and not under `src`, whether or not it was
  under `src` before.
- `keys()` lists the keys that hold at least one value.

Backends are interchangeable (a directory, memory, later a shared server), and wrappers compose
them: `ReadOnlyDatabase` turns writes into silent no-ops, `MultiplexedDatabase` reads the union of
several and writes to all. The engine only ever sees a `CorpusDatabase`.
"""

from __future__ import annotations

import os
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from fuzzgate.model.errors import BaselineError
from fuzzgate.model.files import read_regular, write_all, write_atomic


class CorpusDatabase(ABC):
    """An abstract store mapping `bytes` keys to sets of `bytes` values (see the module docstring)."""

    @abstractmethod
    def save(self, key: bytes, value: bytes) -> None:
        """Store `value` under `key`. Saving a value that is already there does nothing."""

    def save_all(self, items: Mapping[bytes, bytes]) -> None:
        """`save` each value under its key, all or none where the backend can stage its writes
        (`DirectoryDatabase`): a failure part-way leaves the database as it was. Elsewhere the
        values are saved in turn, and a failure leaves those saved before it."""
        for key, value in items.items():
            self.save(key, value)

    @abstractmethod
    def fetch(self, key: bytes) -> Iterable[bytes]:
        """The values stored under `key`; nothing if there are none."""

    @abstractmethod
    def delete(self, key: bytes, value: bytes) -> None:
        """Remove `value` from `key`. Removing a value that is not there does nothing."""

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        """Leave `value` under `dest` and not under `src`, whether or not `src` held it.

        Saves before deleting, so an interrupted move leaves the value in both places, never in
        neither.
        """
        if src == dest:
            self.save(dest, value)
            return
        self.save(dest, value)
        self.delete(src, value)

    @abstractmethod
    def keys(self) -> Iterable[bytes]:
        """The keys that hold at least one value."""

    def describe(self, key: bytes) -> str:
        """Where `key` lives, for error messages (a file path for the directory backend)."""
        return f"{type(self).__name__}[{key.decode('utf-8', 'backslashreplace')}]"


class InMemoryDatabase(CorpusDatabase):
    """A `CorpusDatabase` held in a dict; for tests and for runs that must not touch the disk."""

    def __init__(self) -> None:
        self._data: dict[bytes, set[bytes]] = {}

    def save(self, key: bytes, value: bytes) -> None:
        self._data.setdefault(key, set()).add(value)

    def fetch(self, key: bytes) -> Iterable[bytes]:
        return sorted(self._data.get(key, ()))

    def delete(self, key: bytes, value: bytes) -> None:
        values = self._data.get(key)
        if values is None:
            return
        values.discard(value)
        if not values:
            del self._data[key]

    def keys(self) -> Iterable[bytes]:
        return sorted(self._data)

    def __repr__(self) -> str:
        return f"InMemoryDatabase({len(self._data)} keys)"


_SAFE_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")


class DirectoryDatabase(CorpusDatabase):
    """A `CorpusDatabase` in one directory, laid out for people reviewing it in a pull request.

    Key `k` is the file `<path>/k.json` and its value is the file's bytes, written verbatim. This
    backend is specialized to hold **at most one value per key**: saving a different value under
    a key replaces the one there (a set of one). `Baseline` relies on exactly that, one reviewable
    file per fingerprint; a caller that needs several values per key uses another backend.

    Keys must be safe file names (letters, digits, `_`, `.`, `-`; not starting with a dot):
    fingerprints are. Files that do not end in `.json`, dotfiles and subdirectories not named
    `*.json` are not keys, so a README can sit in the directory.

    The directory is created on the first write, never by a read; a missing directory is an empty
    database. Every write goes to a temporary file in the same directory, is flushed to disk and
    then renamed over the target, so a killed run leaves either the old file or the new one.
    Errors reading or writing a file raise `BaselineError` naming the file.
    """

    SUFFIX = ".json"

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"DirectoryDatabase({str(self.path)!r})"

    def _file(self, key: bytes) -> Path:
        name = key.decode("ascii", "replace")
        if not _SAFE_KEY.fullmatch(name):
            raise ValueError(f"{key!r} is not usable as a file name in {self.path}")
        return self.path / f"{name}{self.SUFFIX}"

    def describe(self, key: bytes) -> str:
        return str(self._file(key))

    def _read(self, key: bytes) -> bytes | None:
        file = self._file(key)
        try:
            return read_regular(file)
        except FileNotFoundError:
            # A link to nothing is an entry someone meant to be there: named, never "no entry".
            if file.is_symlink():
                raise _unreadable(file, "is a symbolic link to a missing file") from None
            return None
        except IsADirectoryError:
            raise _unreadable(file, "is a directory, not a file") from None
        except OSError as exc:
            raise _unreadable(file, f"cannot be read ({exc.strerror or exc})") from exc

    def save(self, key: bytes, value: bytes) -> None:
        file = self._file(key)
        if self._read(key) == value:
            return
        try:
            write_atomic(file, value)
        except OSError as exc:
            raise BaselineError(
                f"{file} cannot be written ({exc.strerror or exc})",
                hint=f"check that {self.path} is a writable directory",
            ) from exc

    def save_all(self, items: Mapping[bytes, bytes]) -> None:
        files = {self._file(key): value for key, value in items.items() if self._read(key) != value}
        try:
            write_all(files)
        except OSError as exc:
            raise BaselineError(
                f"{exc.filename} cannot be written ({exc.strerror or exc}); none of the {len(files)} files was written",
                hint=f"check that {self.path} is a writable directory with room for them",
            ) from exc

    def fetch(self, key: bytes) -> Iterable[bytes]:
        value = self._read(key)
        return [] if value is None else [value]

    def delete(self, key: bytes, value: bytes) -> None:
        file = self._file(key)
        if self._read(key) != value:
            return
        try:
            file.unlink(missing_ok=True)
        except OSError as exc:
            raise BaselineError(f"{file} cannot be deleted ({exc.strerror or exc})") from exc

    def keys(self) -> Iterable[bytes]:
        try:
            names = sorted(os.listdir(self.path))
        except FileNotFoundError:
            return []
        except NotADirectoryError:
            raise BaselineError(
                f"{self.path} is a file, not a directory",
                hint="the baseline is a directory of JSON files; move the file out of the way",
            ) from None
        except OSError as exc:
            raise BaselineError(f"{self.path} cannot be listed ({exc.strerror or exc})") from exc
        stems = (name.removesuffix(self.SUFFIX) for name in names if name.endswith(self.SUFFIX))
        return [stem.encode("ascii") for stem in stems if _SAFE_KEY.fullmatch(stem)]


def _unreadable(file: Path, what: str) -> BaselineError:
    return BaselineError(f"{file} {what}", hint=f"fix or delete {file}")


class ReadOnlyDatabase(CorpusDatabase):
    """Reads from `db`; writes are silent no-ops (e.g. a run that must not update the baseline)."""

    def __init__(self, db: CorpusDatabase) -> None:
        self.db = db

    def __repr__(self) -> str:
        return f"ReadOnlyDatabase({self.db!r})"

    def save(self, key: bytes, value: bytes) -> None:
        pass

    def save_all(self, items: Mapping[bytes, bytes]) -> None:
        pass

    def fetch(self, key: bytes) -> Iterable[bytes]:
        return self.db.fetch(key)

    def delete(self, key: bytes, value: bytes) -> None:
        pass

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        pass

    def keys(self) -> Iterable[bytes]:
        return self.db.keys()

    def describe(self, key: bytes) -> str:
        return self.db.describe(key)


class MultiplexedDatabase(CorpusDatabase):
    """Several databases as one: reads give the union, writes go to every one of them."""

    def __init__(self, *dbs: CorpusDatabase) -> None:
        self.dbs = dbs

    def __repr__(self) -> str:
        return f"MultiplexedDatabase({', '.join(map(repr, self.dbs))})"

    def save(self, key: bytes, value: bytes) -> None:
        for db in self.dbs:
            db.save(key, value)

    def save_all(self, items: Mapping[bytes, bytes]) -> None:
        for db in self.dbs:
            db.save_all(items)

    def fetch(self, key: bytes) -> Iterable[bytes]:
        return _unique(value for db in self.dbs for value in db.fetch(key))

    def delete(self, key: bytes, value: bytes) -> None:
        for db in self.dbs:
            db.delete(key, value)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        for db in self.dbs:
            db.move(src, dest, value)

    def keys(self) -> Iterable[bytes]:
        return _unique(key for db in self.dbs for key in db.keys())  # noqa: SIM118 (databases, not dicts)

    def describe(self, key: bytes) -> str:
        holders = [db.describe(key) for db in self.dbs if any(True for _ in db.fetch(key))]
        return " and ".join(holders) if holders else super().describe(key)


def _unique(items: Iterator[bytes]) -> list[bytes]:
    return list(dict.fromkeys(items))
