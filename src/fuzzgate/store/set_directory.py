"""A `CorpusDatabase` of sets in a directory tree a person can browse (Hypothesis's
`DirectoryBasedExampleDatabase`, with readable key names).

Key `a/b/c` is the directory `<root>/a/b/c`, each `/`-separated part percent-quoted where it is not
a safe file name (`%2F`-style escapes; a leading dot as `%2E`, an empty part as `%`), so every key
maps to exactly one directory and back. Each value is one file in its key's directory, named by a
hash of its bytes and holding them verbatim: `<16 hex>.json` for a JSON object (every record of
the shared store), `<16 hex>.txt` for anything else (a target name). The shared store's keys thus
read as `fuzzgate/1/corpus/<target>/3f1c....json`.

- A missing directory is an empty database; reads never create anything.
- Writes go through `write_atomic` (temporary file, fsync, rename): a killed writer leaves the
  value whole or absent. Saving an existing value does nothing, so writers on one tree need no
  lock: two of them saving the same value write the same file.
- `keys()` walks the tree: every directory holding at least one value file is a key. Only files
  named like values are values: temporary files of an interrupted write (dotfiles), a README or a
  `.gitkeep` are not, so they can sit anywhere.
- A value file edited by hand is still a value, though its name no longer matches its bytes;
  deleting that value by its bytes then leaves the file, as with Hypothesis.

Failures to list, read or write raise `StoreError` naming the path.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import quote_from_bytes, unquote_to_bytes

from fuzzgate.model.files import read_regular, write_atomic
from fuzzgate.store.database import CorpusDatabase
from fuzzgate.store.location import StoreError

_VALUE_FILE = re.compile(r"[0-9a-f]{16}\.(?:json|txt)")
_SAFE = "-_.~@+=,"
_EMPTY = "%"
"""An empty key part: `quote` never writes a bare `%`, so nothing else reads as this."""


def quote_part(part: bytes) -> str:
    """One key part as a directory name that maps back to it (`unquote_part`)."""
    if not part:
        return _EMPTY
    name = quote_from_bytes(part, safe=_SAFE)
    return "%2E" + name[1:] if name.startswith(".") else name


def unquote_part(name: str) -> bytes:
    return b"" if name == _EMPTY else unquote_to_bytes(name)


def value_name(value: bytes) -> str:
    """The file name of `value`: the first 16 hex digits of its SHA-256, then `.json` for what
    looks like a JSON object (so viewers highlight it), `.txt` for anything else."""
    suffix = ".json" if value.lstrip()[:1] == b"{" else ".txt"
    return hashlib.sha256(value).hexdigest()[:16] + suffix


def _is_value_file(name: str) -> bool:
    return _VALUE_FILE.fullmatch(name) is not None


class SetDirectoryDatabase(CorpusDatabase):
    """Key -> directory, value -> file named by its hash (see the module docstring)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"SetDirectoryDatabase({str(self.path)!r})"

    def directory(self, key: bytes) -> Path:
        """The directory of `key`."""
        return self.path.joinpath(*(quote_part(part) for part in key.split(b"/")))

    def describe(self, key: bytes) -> str:
        return str(self.directory(key))

    def save(self, key: bytes, value: bytes) -> None:
        file = self.directory(key) / value_name(value)
        if self._read(file) == value:
            return
        try:
            write_atomic(file, value)
        except OSError as exc:
            raise StoreError(
                f"{file} cannot be written ({exc.strerror or exc})",
                hint=f"check that {self.path} is a writable directory",
            ) from exc

    def fetch(self, key: bytes) -> Iterable[bytes]:
        directory = self.directory(key)
        values = []
        for name in self._list(directory):
            value = self._read(directory / name)
            if value is not None:
                values.append(value)
        return values

    def delete(self, key: bytes, value: bytes) -> None:
        file = self.directory(key) / value_name(value)
        try:
            file.unlink()
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as exc:
            raise StoreError(f"{file} cannot be deleted ({exc.strerror or exc})") from exc

    def keys(self) -> Iterable[bytes]:
        if not self.path.exists():
            return []
        if not self.path.is_dir():
            raise StoreError(f"{self.path} is a file, not a store directory")
        found = []

        def fail(exc: OSError) -> None:
            raise StoreError(f"{exc.filename} cannot be listed ({exc.strerror or exc})")

        for dirpath, dirnames, filenames in os.walk(self.path, onerror=fail):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            if dirpath == str(self.path):
                continue
            if any(_is_value_file(name) and os.path.isfile(os.path.join(dirpath, name)) for name in filenames):
                parts = Path(dirpath).relative_to(self.path).parts
                found.append(b"/".join(unquote_part(part) for part in parts))
        return sorted(found)

    def _list(self, directory: Path) -> list[str]:
        try:
            names = sorted(os.listdir(directory))
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as exc:
            raise StoreError(f"{directory} cannot be listed ({exc.strerror or exc})") from exc
        return [name for name in names if _is_value_file(name)]

    def _read(self, file: Path) -> bytes | None:
        try:
            return read_regular(file)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        except OSError as exc:
            raise StoreError(f"{file} cannot be read ({exc.strerror or exc})", hint=f"fix or delete {file}") from exc
