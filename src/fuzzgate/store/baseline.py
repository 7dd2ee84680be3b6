"""The baseline: the findings a repository has accepted, one reviewable JSON file per fingerprint.

A baseline file holds what a reviewer needs to judge the bug and what `fuzzgate replay` needs to
send it again, and nothing that changes from run to run (no timestamps, counts or replay tallies),
so recording the same finding twice writes the same bytes. It holds no evidence that could carry
a secret: the server's stderr and the error text stay out; code locations (`frames`, `location`)
stay in. The message is stored as given, redacted upstream.

A file that cannot be read or understood is an error naming the file, never "no baseline": a
silently ignored baseline would turn every known bug into a new one (or hide a broken gate).
A missing directory is the normal empty baseline of a first run.

An entry also records which fingerprint scheme computed its fingerprint and the signature it was
computed from (`fuzzgate.triage.fingerprint`), so that after a scheme change the same bug is still
recognized: its fingerprint is re-derived under the current scheme wherever entries are read as
findings, and `Baseline.upgrade` rewrites the files once. Format 1 files (before schemes were
recorded) are read as scheme `fuzzgate/1`, with the signature rebuilt from their message and
frames where that reproduces their fingerprint. Which fuzzgate and Hypothesis generated the repro
is recorded when an entry is recorded, and never rewritten by reading or upgrading.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from fuzzgate.model.commands import accept_command
from fuzzgate.model.errors import BaselineError
from fuzzgate.model.findings import Details, Finding, JSONValue, Kind, Repro, Severity, Surface
from fuzzgate.model.json_fields import UnusableJSON, enum_field, expect, json_type, parse_json, required
from fuzzgate.model.json_fields import location as location_field
from fuzzgate.store.database import CorpusDatabase, DirectoryDatabase
from fuzzgate.triage.fingerprint import (
    ORIGINAL_SCHEME,
    Evidence,
    Signature,
    current_scheme,
    known_scheme,
    recover_signature,
    rederive,
    verifies,
)
from fuzzgate.triage.versions import GeneratorVersions

BASELINE_FORMAT = 2
"""The value of the `"fuzzgate_baseline"` marker in every file this version writes."""
READABLE_FORMATS = (1, 2)
"""Format 1 has no `fingerprint_scheme`, `signature` or `generated_by`."""

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
    scheme: str = ORIGINAL_SCHEME
    """The fingerprint scheme `fingerprint` was computed under."""
    signature: Signature | None = None
    """What `fingerprint` was computed from; None when unknown (an unrecoverable format 1 entry, or
    a signature the redactor would have changed)."""
    generated_by: GeneratorVersions | None = None
    """The versions that generated the repro; None for an entry recorded before they were."""

    @classmethod
    def of(
        cls, finding: Finding, *, scheme: str | None = None, generated_by: GeneratorVersions | None = None
    ) -> BaselineEntry:
        """The entry for `finding`, whose fingerprint was computed under `scheme` (the current one
        unless said otherwise): its evidence reduced to code locations. A signature that does not
        give the fingerprint is left out rather than stored wrong."""
        scheme = scheme or current_scheme().name
        signature = finding.signature
        if signature is not None and not verifies(
            scheme, finding.kind, finding.surface, finding.name, signature, finding.fingerprint
        ):
            signature = None
        return cls(
            fingerprint=finding.fingerprint,
            kind=finding.kind,
            severity=finding.severity,
            surface=finding.surface,
            name=finding.name,
            message=finding.message,
            # The arguments before shrinking are the run's record, not the bug's: an entry keeps
            # what a replay sends, so the file of one bug stays the same from run to run.
            repro=replace(finding.repro, original_arguments=None),
            frames=finding.details.frames,
            location=finding.details.location,
            scheme=scheme,
            signature=signature,
            generated_by=generated_by,
        )

    def upgraded(self) -> BaselineEntry | None:
        """This entry under the current scheme: itself if it is recorded under it, else with its
        fingerprint and signature re-derived through the registered upgrades. None when that is not
        possible (no signature recorded, or an upgrade cannot carry this bug over)."""
        if self.scheme == current_scheme().name:
            return self
        if self.signature is None:
            return None
        evidence = Evidence(self.repro.arguments, self.frames)
        derived = rederive(self.scheme, self.kind, self.surface, self.name, self.signature, evidence)
        if derived is None:
            return None
        fingerprint, signature = derived
        return replace(self, fingerprint=fingerprint, scheme=current_scheme().name, signature=signature)

    def to_finding(self) -> Finding:
        """The entry as a `Finding` (seen once, never replayed), for the diff and the reports, with
        its fingerprint under the current scheme when it can be re-derived, so that a run of this
        fuzzgate finds it known."""
        current = self.upgraded() or replace(self, signature=None)
        return Finding(
            kind=self.kind,
            severity=self.severity,
            surface=self.surface,
            name=self.name,
            message=self.message,
            fingerprint=current.fingerprint,
            repro=self.repro,
            details=Details(frames=self.frames, location=self.location),
            signature=current.signature,
        )

    def to_json(self) -> dict[str, JSONValue]:
        return {
            _MARKER: BASELINE_FORMAT,
            "fingerprint": self.fingerprint,
            "fingerprint_scheme": self.scheme,
            "signature": None if self.signature is None else list(self.signature),
            "generated_by": None if self.generated_by is None else self.generated_by.to_json(),
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
            obj = parse_json(data)
        except UnusableJSON as exc:
            raise ValueError(f"is {exc}") from None
        return cls.from_json(obj)

    @classmethod
    def from_json(cls, obj: JSONValue) -> BaselineEntry:
        """Build an entry from parsed JSON, checking every field. Raises `ValueError`."""
        if not isinstance(obj, dict):
            raise ValueError(f"holds {json_type(obj)}, not a JSON object")
        data: dict[str, JSONValue] = obj
        marker = data.get(_MARKER)
        if marker is None:
            raise ValueError(f'has no "{_MARKER}": {BASELINE_FORMAT} marker (not a fuzzgate baseline file?)')
        if type(marker) is int and marker > BASELINE_FORMAT:
            raise NewerBaselineError(f'has "{_MARKER}": {marker}; this fuzzgate reads formats 1 to {BASELINE_FORMAT}')
        if type(marker) is not int or marker not in READABLE_FORMATS:
            raise ValueError(f'has "{_MARKER}": {marker!r}; this fuzzgate reads formats 1 to {BASELINE_FORMAT}')
        repro = expect(required(data, "repro"), dict, '"repro"')
        location = data.get("location")
        entry = cls(
            fingerprint=expect(required(data, "fingerprint"), str, '"fingerprint"'),
            kind=enum_field(Kind, data, "kind"),
            severity=enum_field(Severity, data, "severity"),
            surface=enum_field(Surface, data, "surface"),
            name=expect(required(data, "name"), str, '"name"'),
            message=expect(required(data, "message"), str, '"message"'),
            # The one codec of a repro (`findings.py`), which `report.json` is read with too.
            repro=Repro.from_json(repro, "repro."),
            frames=tuple(expect(f, str, '"frames" items') for f in expect(data.get("frames", []), list, '"frames"')),
            location=location_field(location) if location is not None else None,
        )
        if marker == 1:
            # Format 1 recorded no signature: rebuild it where that reproduces the fingerprint.
            recovered = recover_signature(
                entry.kind, entry.surface, entry.name, entry.fingerprint, entry.message, entry.frames
            )
            return replace(entry, signature=recovered)
        return _with_identity(entry, data)


class NewerBaselineError(ValueError):
    """A file written by a newer fuzzgate (a later format or an unknown fingerprint scheme)."""


def _with_identity(entry: BaselineEntry, data: dict[str, JSONValue]) -> BaselineEntry:
    """`entry` with the scheme, signature and generator versions of a format 2 file, checked."""
    scheme = expect(required(data, "fingerprint_scheme"), str, '"fingerprint_scheme"')
    if not known_scheme(scheme):
        raise NewerBaselineError(f'has "fingerprint_scheme": "{scheme}", which this fuzzgate does not know')
    raw_signature = data.get("signature")
    signature = None
    if raw_signature is not None:
        items = expect(raw_signature, list, '"signature"')
        signature = tuple(expect(part, str, '"signature" items') for part in items)
        if not verifies(scheme, entry.kind, entry.surface, entry.name, signature, entry.fingerprint):
            raise ValueError(f'has a "signature" that does not give its fingerprint under {scheme}')
    raw_versions = data.get("generated_by")
    generated_by = None
    if raw_versions is not None:
        versions = expect(raw_versions, dict, '"generated_by"')
        try:
            generated_by = GeneratorVersions.from_json(versions)
        except ValueError as exc:
            raise ValueError(f'has a bad "generated_by" ({exc})') from None
    return replace(entry, scheme=scheme, signature=signature, generated_by=generated_by)


@dataclass(frozen=True, slots=True)
class BaselineUpgrade:
    """What `Baseline.upgrade` did: entries rewritten (as they were, as they are), how many were
    current already, and the entries it could not carry over to the current scheme."""

    rewritten: tuple[tuple[BaselineEntry, BaselineEntry], ...] = ()
    current: int = 0
    stranded: tuple[BaselineEntry, ...] = ()


class Baseline:
    """The accepted findings, on top of any `CorpusDatabase` (key: fingerprint; value: the entry's
    canonical bytes). With a `DirectoryDatabase` that is one `<fingerprint>.json` per entry."""

    def __init__(self, db: CorpusDatabase) -> None:
        self.db = db
        self._renamed: dict[str, set[str]] | None = None

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
        """`entries()` as findings under the current fingerprint scheme, ordered by fingerprint: the
        form `fuzzgate.store.diff.classify` takes. An entry recorded under an older scheme appears
        with its re-derived fingerprint; when a bug is recorded under two schemes, the entry of the
        current one stands for it."""
        by_fingerprint: dict[str, tuple[BaselineEntry, Finding]] = {}
        for entry in self.entries():
            finding = entry.to_finding()
            held = by_fingerprint.get(finding.fingerprint)
            if held is None or (held[0].scheme != current_scheme().name and entry.scheme == current_scheme().name):
                by_fingerprint[finding.fingerprint] = (entry, finding)
        return [finding for _, (_, finding) in sorted(by_fingerprint.items())]

    def stranded(self) -> list[BaselineEntry]:
        """Entries recorded under an older scheme whose fingerprint cannot be re-derived under the
        current one: no run of this fuzzgate can match them (see `upgrade`)."""
        return [entry for entry in self.entries() if entry.upgraded() is None]

    def get(self, fingerprint: str) -> BaselineEntry | None:
        """The entry stored under `fingerprint`, else one recorded under an older scheme whose
        fingerprint re-derives to it."""
        return self._load(_key(fingerprint)) or next(
            (e for stored in sorted(self._older_records().get(fingerprint, ())) if (e := self._load(_key(stored)))),
            None,
        )

    def record(
        self, finding: Finding, *, scheme: str | None = None, generated_by: GeneratorVersions | None = None
    ) -> BaselineEntry:
        """Accept `finding`, fingerprinted under `scheme` (default: the current one) and generated by
        `generated_by`: store its entry, replacing any other entry for the same bug, including one
        recorded under an older scheme. Recording the same finding again leaves the stored bytes
        as they were."""
        return self.record_all([finding], scheme=scheme, generated_by=generated_by)[0]

    def record_all(
        self, findings: Sequence[Finding], *, scheme: str | None = None, generated_by: GeneratorVersions | None = None
    ) -> list[BaselineEntry]:
        """`record` each of `findings`, all or none: every entry is written (`save_all`: staged,
        then renamed into place) before any file it replaces is removed, so a failure while writing
        (a full disk) leaves the baseline as it was, where the database can stage its writes."""
        entries = [BaselineEntry.of(f, scheme=scheme, generated_by=generated_by) for f in findings]
        values = {_key(entry.fingerprint): entry.to_bytes() for entry in entries}
        # Read before the first write: an unreadable entry stops the accept with nothing written.
        older = self._older_records()
        stale = {key: [old for old in self.db.fetch(key) if old != value] for key, value in values.items()}
        self.db.save_all(values)
        for key, olds in stale.items():
            for old in olds:
                self.db.delete(key, old)
        for entry in entries:
            upgraded = entry.upgraded()
            if upgraded is None:
                continue
            # One bug, one file: the same bug's file under an older scheme's fingerprint goes.
            for stored in older.pop(upgraded.fingerprint, set()) - {entry.fingerprint}:
                self._delete(stored)
            if upgraded.fingerprint != entry.fingerprint:
                older[upgraded.fingerprint] = {entry.fingerprint}
        return entries

    def remove(self, fingerprint: str) -> bool:
        """Forget the entry for `fingerprint` (a fixed bug), stored under it or re-derived to it;
        False if there was none."""
        removed = self._delete(fingerprint)
        for stored in self._older_records().pop(fingerprint, set()):
            removed = self._delete(stored) or removed
        return removed

    def upgrade(self) -> BaselineUpgrade:
        """Rewrite every entry recorded under an older scheme or format in the current ones: the
        entry under its re-derived fingerprint is written (atomically, with the database's own
        writes) before the old one is deleted, so an interrupted upgrade leaves both, never neither.
        Entries already current are left byte for byte; entries that cannot be re-derived are
        left as they are and listed. The repro and its `generated_by` are kept: nothing was
        regenerated."""
        rewritten: list[tuple[BaselineEntry, BaselineEntry]] = []
        stranded: list[BaselineEntry] = []
        current = 0
        for entry in self.entries():
            upgraded = entry.upgraded()
            if upgraded is None:
                stranded.append(entry)
                continue
            key = _key(entry.fingerprint)
            if sorted(self.db.fetch(key)) == [upgraded.to_bytes()]:
                current += 1
                continue
            held = self._load(_key(upgraded.fingerprint)) if upgraded.fingerprint != entry.fingerprint else None
            # A bug recorded again under the current scheme keeps that newer record.
            if held is None or held.scheme != upgraded.scheme:
                self._store(upgraded)
            if upgraded.fingerprint != entry.fingerprint:
                self._delete(entry.fingerprint)
            rewritten.append((entry, upgraded))
        self._renamed = None
        return BaselineUpgrade(rewritten=tuple(rewritten), current=current, stranded=tuple(stranded))

    def _store(self, entry: BaselineEntry) -> None:
        key = _key(entry.fingerprint)
        value = entry.to_bytes()
        stale = [old for old in self.db.fetch(key) if old != value]
        # Save first: an interrupted record leaves an extra value behind, never no entry at all.
        self.db.save(key, value)
        for old in stale:
            self.db.delete(key, old)

    def _delete(self, fingerprint: str) -> bool:
        key = _key(fingerprint)
        values = list(self.db.fetch(key))
        for value in values:
            self.db.delete(key, value)
        return bool(values)

    def _older_records(self) -> dict[str, set[str]]:
        """Current fingerprint → the stored fingerprints of entries recorded under older schemes,
        read once per `Baseline` (accepting a run's findings records many)."""
        if self._renamed is None:
            self._renamed = {}
            for entry in self.entries():
                upgraded = entry.upgraded()
                if upgraded is not None and upgraded.fingerprint != entry.fingerprint:
                    self._renamed.setdefault(upgraded.fingerprint, set()).add(entry.fingerprint)
        return self._renamed

    def _load(self, key: bytes) -> BaselineEntry | None:
        # When backends disagree (a multiplexed store), the first value in byte order wins, so the
        # result does not depend on the order the backends answered in.
        values = sorted(self.db.fetch(key))
        if not values:
            return None
        where = self.db.describe(key)
        try:
            entry = BaselineEntry.from_bytes(values[0])
        except NewerBaselineError as exc:
            raise BaselineError(
                f"baseline file {where} {exc}",
                hint="it was written by a newer fuzzgate: upgrade fuzzgate to read this baseline",
            ) from None
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
