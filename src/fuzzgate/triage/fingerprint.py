"""Which bug a finding is: its fingerprint, the scheme that computes it, and how a bug recorded
under an older scheme is recognized under the current one.

The check stage decides *what* a reply shows and describes it with a payload-free signature
(`Observation.signature`: the raising frame, the normalized error message, the anomaly...); this
module turns kind, surface, tool name and signature into the fingerprint that the baseline, SARIF
and every report key on. docs/fingerprints.md describes each kind's signature for users and holds
the policy for changing any of it.

A *scheme* names one way of getting from a reply to a fingerprint: the hash below and the
normalization in `fuzzgate.check` that produces signatures. Changing either changes fingerprints,
which would turn every known bug of every user into a "new" one plus a "fixed" one, so a change
ships as a new scheme, registered here with `upgrade`: the function that maps a signature recorded
under the scheme before it to the signature the same bug has under it. Baseline entries record
their scheme and signature, so chaining the upgrades re-derives any entry's fingerprint under the
current scheme (`rederive`), and `fuzzgate baseline upgrade` rewrites the entries once.

The registry is read through this module at call time (`triage.fingerprint.SCHEMES`), never copied, so a
test can put a scheme of its own in place with `monkeypatch.setattr`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from fuzzgate.check.normalize import abstract_arguments, normalize_message
from fuzzgate.check.traceback import ANONYMOUS_FRAMES, Trace
from fuzzgate.check.traceback import Frame as TraceFrame
from fuzzgate.model.findings import Finding, Kind, Surface
from fuzzgate.model.outcome import AnomalyKind

Signature = tuple[str, ...]
"""What identifies a bug within its kind and tool; never the payload (see `Observation.signature`)."""

SignatureUpgrade = Callable[[Kind, Signature], "Signature | None"]
"""Maps a signature recorded under the previous scheme to this scheme's signature of the same bug,
or None when that bug cannot be carried over (the old signature lacks what the new one needs)."""


@dataclass(frozen=True, slots=True)
class Evidence:
    """What a finding recorded beside its signature, for an upgrade that needs more than the
    signature: the failing call's arguments (`Repro.arguments`) and the code frames kept
    (`path:line in function`, outermost first, as `Details.frames` and baseline entries hold them)."""

    arguments: Mapping[str, Any] = field(default_factory=dict)
    frames: tuple[str, ...] = ()

    @classmethod
    def of(cls, finding: Finding) -> Evidence:
        return cls(finding.repro.arguments, finding.details.frames)


EvidenceUpgrade = Callable[[Kind, Signature, Evidence], "Signature | None"]
"""A `SignatureUpgrade` that also reads the finding's recorded `Evidence`."""

FINGERPRINT_CHARS = 20
ORIGINAL_SCHEME = "fuzzgate/1"
"""The scheme of everything written before schemes were recorded: baseline files of format 1 and
reports without `fingerprint_scheme`."""
SERVER_CODE_SCHEME = "fuzzgate/2"
"""The scheme that takes the raising frame from the server's own code (also when the server is an
installed package) and takes the call's values out of every internal error's message."""


@dataclass(frozen=True, slots=True)
class Scheme:
    """One way of computing fingerprints. `upgrade` is None only for the first scheme."""

    name: str
    upgrade: SignatureUpgrade | None = None
    upgrade_with_evidence: EvidenceUpgrade | None = None
    """Used instead of `upgrade` where the finding's evidence is at hand (a baseline entry, a
    finding of a report): a change that needs the arguments or frames carries bugs over exactly
    with it, and as well as the signature alone allows without it."""

    def carry(self, kind: Kind, signature: Signature, evidence: Evidence | None) -> Signature | None:
        """`signature`, recorded under the scheme before this one, as this scheme's signature."""
        if evidence is not None and self.upgrade_with_evidence is not None:
            return self.upgrade_with_evidence(kind, signature, evidence)
        assert self.upgrade is not None  # SchemeRegistry.register refuses a later scheme without one
        return self.upgrade(kind, signature)

    def digest(self, kind: Kind, surface: Surface, name: str, signature: Signature) -> str:
        """The first 20 hex digits of SHA-256 over the scheme name, kind, surface, tool name and
        signature, joined by a unit separator (which no name or signature contains)."""
        material = "\x1f".join((self.name, kind.value, surface.value, name, *signature))
        return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()[:FINGERPRINT_CHARS]


class SchemeRegistry:
    """The schemes fuzzgate knows, oldest first; the last one registered is current."""

    def __init__(self, *schemes: Scheme) -> None:
        self._schemes: list[Scheme] = []
        for scheme in schemes:
            self.register(scheme)

    def __repr__(self) -> str:
        return f"SchemeRegistry({', '.join(self.names())})"

    def register(self, scheme: Scheme) -> Scheme:
        """Add `scheme` as the new current scheme. Every scheme after the first needs an upgrade:
        without one, entries recorded under the one before could never be matched again."""
        if self.get(scheme.name) is not None:
            raise ValueError(f"fingerprint scheme {scheme.name} is already registered")
        if self._schemes and scheme.upgrade is None:
            raise ValueError(f"fingerprint scheme {scheme.name} needs an upgrade from {self.current.name}")
        self._schemes.append(scheme)
        return scheme

    def with_scheme(self, scheme: Scheme) -> SchemeRegistry:
        """A copy of this registry with `scheme` registered last; this one is left as it was."""
        return SchemeRegistry(*self._schemes, scheme)

    @property
    def current(self) -> Scheme:
        return self._schemes[-1]

    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self._schemes)

    def get(self, name: str) -> Scheme | None:
        return next((s for s in self._schemes if s.name == name), None)

    def upgrade(
        self, name: str, kind: Kind, signature: Signature, evidence: Evidence | None = None
    ) -> Signature | None:
        """`signature`, recorded under scheme `name`, as the same bug's signature under the current
        scheme: the upgrades of every later scheme applied in order (with the finding's `evidence`
        where one reads it). None when `name` is unknown or an upgrade cannot carry the bug over."""
        names = self.names()
        if name not in names:
            return None
        for scheme in self._schemes[names.index(name) + 1 :]:
            upgraded = scheme.carry(kind, signature, evidence)
            if upgraded is None:
                return None
            signature = upgraded
        return signature


def _from_original(kind: Kind, signature: Signature) -> Signature:
    """fuzzgate/1 to fuzzgate/2 with the signature alone: what it cannot tell (which words of a
    message were argument values, which frames a traceback had) stays as it was, which is right for
    every bug whose traceback reached code outside libraries and whose message held no bare value."""
    return signature


def _from_original_with_evidence(kind: Kind, signature: Signature, evidence: Evidence) -> Signature:
    """fuzzgate/1 to fuzzgate/2 exactly: the recorded call's values taken out of an internal error's
    message (`abstract_arguments` on the recorded text, which is what fuzzgate/2 computes), and a
    traceback's raising frame chosen again among the recorded frames (`own_frames`) when those
    frames give the recorded one under fuzzgate/1's rule (else they are not the whole story)."""
    if kind is Kind.INTERNAL_ERROR and len(signature) == 3 and signature[0] == "rpc":
        return (*signature[:2], abstract_arguments(signature[2], evidence.arguments))
    if len(signature) == 2 and signature[0] in ("trace", "reply-trace") and kind in (Kind.INTERNAL_ERROR, Kind.CRASH):
        frames = tuple(TraceFrame(m["path"], int(m["line"]), m["func"]) for m in _frames_outermost(evidence.frames))
        if frames and _label_under_original(frames) == signature[1]:
            return (signature[0], *Trace("", "", frames).signature())
    return signature


def _label_under_original(frames: tuple[TraceFrame, ...]) -> str:
    """The raising frame's label as fuzzgate/1 chose it: the innermost outside libraries."""
    chosen = tuple(f for f in frames if not f.in_library) or frames
    named = [f for f in chosen if f.func not in ANONYMOUS_FRAMES] or list(chosen)
    return named[-1].label()


SCHEMES = SchemeRegistry(
    Scheme(ORIGINAL_SCHEME),
    Scheme(SERVER_CODE_SCHEME, upgrade=_from_original, upgrade_with_evidence=_from_original_with_evidence),
)


def current_scheme() -> Scheme:
    return SCHEMES.current


def known_scheme(name: str) -> bool:
    return SCHEMES.get(name) is not None


def fingerprint(kind: Kind, surface: Surface, name: str, signature: Signature) -> str:
    """The fingerprint of a bug under the current scheme."""
    return SCHEMES.current.digest(kind, surface, name, signature)


def verifies(scheme: str, kind: Kind, surface: Surface, name: str, signature: Signature, recorded: str) -> bool:
    """Whether `signature` gives the `recorded` fingerprint under `scheme` (False for an unknown scheme)."""
    known = SCHEMES.get(scheme)
    return known is not None and known.digest(kind, surface, name, signature) == recorded


def rederive(
    scheme: str, kind: Kind, surface: Surface, name: str, signature: Signature, evidence: Evidence | None = None
) -> tuple[str, Signature] | None:
    """The current fingerprint and signature of a bug recorded under `scheme` with `signature` (and
    `evidence`, which some upgrades read); None when the registered upgrades cannot carry it over."""
    upgraded = SCHEMES.upgrade(scheme, kind, signature, evidence)
    return None if upgraded is None else (fingerprint(kind, surface, name, upgraded), upgraded)


def in_current_scheme(finding: Finding, scheme: str) -> Finding:
    """`finding`, fingerprinted under `scheme`, with its fingerprint and signature re-derived under
    the current scheme; unchanged when it is current already or cannot be re-derived."""
    if scheme == SCHEMES.current.name or finding.signature is None:
        return finding
    derived = rederive(scheme, finding.kind, finding.surface, finding.name, finding.signature, Evidence.of(finding))
    return finding if derived is None else replace(finding, fingerprint=derived[0], signature=derived[1])


# Format-1 baseline entries recorded no signature. What they did record (the message written by
# fuzzgate/1's oracles and the last code frames of the traceback) is enough to rebuild most
# signatures; a candidate is used only if it reproduces the entry's fingerprint under fuzzgate/1,
# so a wrong guess is never used. These patterns describe what fuzzgate/1 wrote and stay as they
# are when the oracles' messages change.
_FRAME = re.compile(r"(?P<path>.*):(?P<line>\d+) in (?P<func>\S+)")
_DIED = re.compile(r"the server died(?: during the call)? \((?P<how>[^)]*)\)")
_RPC = re.compile(r"JSON-RPC internal error (?P<code>-?\d+) for schema-valid input: (?P<text>.*)", re.DOTALL)
_SCHEMA_AT = re.compile(r"\(at (?P<path>.*)\)\s*$", re.DOTALL)
_SECRET = re.compile(r"the reply contains a secret \((?P<pattern>.*)\)\s*$", re.DOTALL)
_EXCEPTION = re.compile(r"(?:unhandled |after |stack trace in the reply: )(?P<type>[A-Za-z_][\w.]*)")


def recover_signature(
    kind: Kind, surface: Surface, name: str, recorded: str, message: str, frames: Sequence[str]
) -> Signature | None:
    """The fuzzgate/1 signature of a finding recorded without one, rebuilt from its `message` and
    code `frames` (`path:line in function`, outermost first) and verified against its `recorded`
    fingerprint; None when no candidate reproduces it."""
    for candidate in dict.fromkeys(_original_candidates(kind, message, frames)):
        if verifies(ORIGINAL_SCHEME, kind, surface, name, candidate, recorded):
            return candidate
    return None


def _original_candidates(kind: Kind, message: str, frames: Sequence[str]) -> Iterator[Signature]:
    # fuzzgate/1 labels a frame `file:function`, the file without its directory.
    labels = [f"{m['path'].replace(chr(92), '/').rsplit('/', 1)[-1]}:{m['func']}" for m in _frames(frames)]
    # A trace without frames is signed by its exception type alone.
    labels += [m["type"].rsplit(".", 1)[-1] for m in _EXCEPTION.finditer(message)]
    if kind is Kind.CRASH:
        yield from (("exit", m["how"]) for m in _DIED.finditer(message))
        yield from (("trace", label) for label in labels)
    elif kind is Kind.INTERNAL_ERROR:
        for label in labels:
            yield ("trace", label)
            yield ("reply-trace", label)
        yield ("sdk-unhandled",)
        if rpc := _RPC.match(message):
            yield ("rpc", rpc["code"], normalize_message(rpc["text"]))
    elif kind is Kind.PROTOCOL_ERROR:
        yield from ((anomaly.value,) for anomaly in AnomalyKind)
    elif kind is Kind.SCHEMA_VIOLATION:
        if at := _SCHEMA_AT.search(message):
            yield ("" if at["path"] == "the root" else at["path"],)
    elif kind is Kind.SECRET_LEAK:
        if secret := _SECRET.search(message):
            yield (secret["pattern"],)
    else:
        yield ()


def _frames_outermost(frames: Sequence[str]) -> Iterator[re.Match[str]]:
    for frame in frames:
        if match := _FRAME.fullmatch(frame):
            yield match


def _frames(frames: Sequence[str]) -> Iterator[re.Match[str]]:
    # Innermost first: the raising frame is most often the last one recorded.
    for frame in reversed(frames):
        if match := _FRAME.fullmatch(frame):
            yield match
