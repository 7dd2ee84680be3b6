"""The baseline: the findings a repository has accepted, one reviewable JSON file per fingerprint.

A baseline file holds what a reviewer needs to judge the bug and what `fuzzgate replay` needs to
send it again, and nothing that changes from run to run (no timestamps, counts or replay tallies),
so recording the same finding twice writes the same bytes. It holds no evidence that could carry
a secret: the server's stderr and the error text stay out; code locations (`frames`, `location`)
stay in. The message is stored as given, redacted upstream.

A file that cannot be read or understood is an error naming the file, never "no baseline": a
silently ignored baseline would turn every known bug into a new one (or hide a broken gate).
A missing directory is the normal empty baseline of a first run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TypeVar

from fuzzgate.commands import accept_command
from fuzzgate.errors import BaselineError
from fuzzgate.findings import Details, Finding, JSONValue, Kind, Repro, Severity, Surface
from fuzzgate.store.database import CorpusDatabase, DirectoryDatabase

BASELINE_FORMAT = 1
"""The value of the `"fuzzgate_baseline"` marker in every file this version writes and reads."""

_MARKER = "fuzzgate_baseline"


@dataclass(frozen=True, slots=True)
class BaselineEntry:
    """One accepted finding, as stored: identity, description, minimal repro and code locations."""

    fingerprint: str
    kind: Kind
    severity: Severity
    surface: Surface
    name: str
    message: str
    repro: Repro
    frames: tuple[str, ...] = ()
    location: tuple[str, int] | None = None

    @classmethod
    def of(cls, finding: Finding) -> BaselineEntry:
        """The entry for `finding`: its evidence reduced to code locations."""
        return cls(
            fingerprint=finding.fingerprint,
            kind=finding.kind,
            severity=finding.severity,
            surface=finding.surface,
            name=finding.name,
            message=finding.message,
            repro=finding.repro,
            frames=finding.details.frames,
            location=finding.details.location,
        )

    def to_finding(self) -> Finding:
        """The entry as a `Finding` (seen once, never replayed), for the diff and the reports."""
        return Finding(
            kind=self.kind,
            severity=self.severity,
            surface=self.surface,
            name=self.name,
            message=self.message,
            fingerprint=self.fingerprint,
            repro=self.repro,
            details=Details(frames=self.frames, location=self.location),
        )

    def to_json(self) -> dict[str, JSONValue]:
        return {
            _MARKER: BASELINE_FORMAT,
            "fingerprint": self.fingerprint,
            "kind": self.kind.value,
            "severity": self.severity.value,
            "surface": self.surface.value,
            "name": self.name,
            "message": self.message,
            "repro": self.repro.to_json(),
            "frames": list(self.frames),
            "location": {"path": self.location[0], "line": self.location[1]} if self.location else None,
        }

    def to_bytes(self) -> bytes:
        """The canonical file content: sorted keys, two-space indent, UTF-8, trailing newline."""
        text = json.dumps(self.to_json(), sort_keys=True, indent=2, ensure_ascii=False) + "\n"
        return text.encode("utf-8", "backslashreplace")

    @classmethod
    def from_bytes(cls, data: bytes) -> BaselineEntry:
        """Parse a baseline file. Raises `ValueError` saying what is wrong, in words for a user."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"is not UTF-8 text (bad byte at offset {exc.start})") from None
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            where = f"line {exc.lineno} column {exc.colno}"
            raise ValueError(f"is not valid JSON ({exc.msg} at {where})") from None
        return cls.from_json(obj)

    @classmethod
    def from_json(cls, obj: JSONValue) -> BaselineEntry:
        """Build an entry from parsed JSON, checking every field. Raises `ValueError`."""
        if not isinstance(obj, dict):
            raise ValueError(f"holds {_json_type(obj)}, not a JSON object")
        data: dict[str, JSONValue] = obj
        marker = data.get(_MARKER)
        if marker is None:
            raise ValueError(f'has no "{_MARKER}": {BASELINE_FORMAT} marker (not a fuzzgate baseline file?)')
        if type(marker) is not int or marker != BASELINE_FORMAT:
            raise ValueError(f'has "{_MARKER}": {marker!r}; this fuzzgate reads format {BASELINE_FORMAT}')
        repro = _expect(_required(data, "repro"), dict, '"repro"')
        seed = _expect(_required(repro, "seed", "repro."), int, '"repro.seed"')
        case_index = _expect(_required(repro, "case_index", "repro."), int, '"repro.case_index"')
        location = data.get("location")
        return cls(
            fingerprint=_expect(_required(data, "fingerprint"), str, '"fingerprint"'),
            kind=_enum(Kind, data, "kind"),
            severity=_enum(Severity, data, "severity"),
            surface=_enum(Surface, data, "surface"),
            name=_expect(_required(data, "name"), str, '"name"'),
            message=_expect(_required(data, "message"), str, '"message"'),
            repro=Repro(
                seed=seed,
                case_index=case_index,
                arguments=_expect(_required(repro, "arguments", "repro."), dict, '"repro.arguments"'),
                transport=_expect(_required(repro, "transport", "repro."), str, '"repro.transport"'),
                schema_valid=_expect(repro.get("schema_valid", True), bool, '"repro.schema_valid"'),
            ),
            frames=tuple(_expect(f, str, '"frames" items') for f in _expect(data.get("frames", []), list, '"frames"')),
            location=_location(location) if location is not None else None,
        )


_T = TypeVar("_T")


def _required(data: dict[str, JSONValue], key: str, prefix: str = "") -> JSONValue:
    if key not in data:
        raise ValueError(f'is missing "{prefix}{key}"')
    return data[key]


def _expect(value: JSONValue, kind: type[_T], what: str) -> _T:
    # bool is an int in Python, not in JSON.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        expected, found = _JSON_TYPE[kind], _json_type(value)
        raise ValueError(f"has {what} of the wrong type: expected {expected}, found {found}")
    return value


_JSON_TYPE: dict[type, str] = {
    dict: "an object",
    list: "an array",
    str: "a string",
    int: "an integer",
    bool: "true or false",
}


def _json_type(value: JSONValue) -> str:
    if value is None:
        return "null"
    return next((name for kind, name in _JSON_TYPE.items() if type(value) is kind), "a number")


_E = TypeVar("_E", bound=StrEnum)


def _enum(enum: type[_E], data: dict[str, JSONValue], key: str) -> _E:
    raw = _expect(_required(data, key), str, f'"{key}"')
    try:
        return enum(raw)
    except ValueError:
        known = ", ".join(member.value for member in enum)
        raise ValueError(f'has an unknown {key} "{raw}" (expected one of: {known})') from None


def _location(value: JSONValue) -> tuple[str, int]:
    loc = _expect(value, dict, '"location"')
    path = _expect(_required(loc, "path", "location."), str, '"location.path"')
    line = _expect(_required(loc, "line", "location."), int, '"location.line"')
    return path, line


class Baseline:
    """The accepted findings, on top of any `CorpusDatabase` (key: fingerprint; value: the entry's
    canonical bytes). With a `DirectoryDatabase` that is one `<fingerprint>.json` per entry."""

    def __init__(self, db: CorpusDatabase) -> None:
        self.db = db

    @classmethod
    def open(cls, directory: Path | str) -> Baseline:
        """The baseline kept in `directory` (which need not exist yet)."""
        return cls(DirectoryDatabase(directory))

    def __repr__(self) -> str:
        return f"Baseline({self.db!r})"

    def entries(self) -> list[BaselineEntry]:
        """Every entry, ordered by fingerprint. Raises `BaselineError` for any unreadable file."""
        found = (self._load(key) for key in self.db.keys())  # noqa: SIM118 (a database, not a dict)
        return sorted((entry for entry in found if entry is not None), key=lambda e: e.fingerprint)

    def findings(self) -> list[Finding]:
        """`entries()` as findings, the form `fuzzgate.store.diff.classify` takes."""
        return [entry.to_finding() for entry in self.entries()]

    def get(self, fingerprint: str) -> BaselineEntry | None:
        return self._load(_key(fingerprint))

    def record(self, finding: Finding) -> BaselineEntry:
        """Accept `finding`: store its entry, replacing any other entry for its fingerprint.
        Recording the same finding again leaves the stored bytes as they were."""
        entry = BaselineEntry.of(finding)
        key = _key(entry.fingerprint)
        value = entry.to_bytes()
        stale = [old for old in self.db.fetch(key) if old != value]
        # Save first: an interrupted record leaves an extra value behind, never no entry at all.
        self.db.save(key, value)
        for old in stale:
            self.db.delete(key, old)
        return entry

    def remove(self, fingerprint: str) -> bool:
        """Forget the entry for `fingerprint` (a fixed bug); False if there was none."""
        key = _key(fingerprint)
        values = list(self.db.fetch(key))
        for value in values:
            self.db.delete(key, value)
        return bool(values)

    def _load(self, key: bytes) -> BaselineEntry | None:
        # When backends disagree (a multiplexed store), the first value in byte order wins, so the
        # result does not depend on the order the backends answered in.
        values = sorted(self.db.fetch(key))
        if not values:
            return None
        where = self.db.describe(key)
        try:
            entry = BaselineEntry.from_bytes(values[0])
        except ValueError as exc:
            raise _corrupt(where, str(exc)) from None
        if entry.fingerprint != key.decode("utf-8"):
            raise _corrupt(where, f'holds fingerprint "{entry.fingerprint}", which does not match its name')
        return entry


def _key(fingerprint: str) -> bytes:
    return fingerprint.encode("utf-8")


def _corrupt(where: str, what: str) -> BaselineError:
    # Imported here: the store comes before the reports in the pipeline, and only this hint needs it.

    return BaselineError(
        f"baseline file {where} {what}",
        hint=f"fix or delete it, then run `{accept_command()}` to record the current findings again",
    )
