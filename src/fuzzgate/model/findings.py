"""What a run finds: kinds, severities, repros and findings.

These frozen types are the vocabulary every stage after `execute` speaks; reports serialize them
with `to_json()` and read them back with `from_json()`, so `report.json` and baseline files are the
source of truth. That pair is the one codec of a finding, its repro and its steps wherever they are
written (`report.json`, baseline entries, the shared store, corpus entries): `from_json` reads every
field `to_json` writes, and checks each, raising `ValueError` naming the field (`where` prefixes its
name with where the object sits in the file, as `repro.`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from fuzzgate.model.json_fields import enum_field, expect, optional, optional_enum, required
from fuzzgate.model.json_fields import location as location_field
from fuzzgate.model.outcome import AfterTimeout

JSONValue = Any
"""A value that `json.dumps` accepts (dicts, lists, str, int, float, bool, None)."""


class Kind(StrEnum):
    """The classes of bug fuzzgate reports. Names follow wallfacer's `[severity]` keys where they overlap."""

    CRASH = "crash"
    HANG = "hang"
    PROTOCOL_ERROR = "protocol_error"
    INTERNAL_ERROR = "internal_error"
    SCHEMA_VIOLATION = "schema_violation"
    SECRET_LEAK = "secret_leak"
    SLOW = "slow"
    SCOPE_ESCAPE = "scope_escape"
    INJECTION = "injection"
    SSRF = "ssrf"
    """The server fetched a URL its caller gave it, reaching the listener on its own loopback or a
    canary file (server-side request forgery)."""
    OUT_OF_MEMORY = "out_of_memory"
    """The server's processes grew past the memory limit during the call, and fuzzgate stopped them
    (`sandbox.resident`): one input can take a machine's memory, and every client with it."""


class Severity(StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]

    def at_least(self, other: Severity) -> bool:
        return self.rank >= other.rank


_SEVERITY_RANK = {Severity.LOW: 0, Severity.MEDIUM: 1, Severity.HIGH: 2, Severity.CRITICAL: 3}

DEFAULT_SEVERITY: dict[Kind, Severity] = {
    Kind.CRASH: Severity.CRITICAL,
    Kind.HANG: Severity.HIGH,
    Kind.PROTOCOL_ERROR: Severity.HIGH,
    Kind.INTERNAL_ERROR: Severity.HIGH,
    Kind.SCHEMA_VIOLATION: Severity.MEDIUM,
    Kind.SECRET_LEAK: Severity.CRITICAL,
    Kind.SLOW: Severity.LOW,
    Kind.SCOPE_ESCAPE: Severity.CRITICAL,
    Kind.INJECTION: Severity.CRITICAL,
    Kind.SSRF: Severity.HIGH,
    Kind.OUT_OF_MEMORY: Severity.HIGH,
}


class Surface(StrEnum):
    TOOL = "tool"
    RESOURCE = "resource"
    PROMPT = "prompt"
    SERVER = "server"
    """The server as a whole: a bug below any one tool (its transport, its SDK), named `SERVER_NAME`."""


class Cause(StrEnum):
    """Whose bug a finding is: the server's own, or the MCP SDK's it runs on (which its author can
    only upgrade, `fuzzgate.check.sdk`). A finding the SDK causes is low and fails no gate unless
    `fail_on_sdk` is set."""

    SERVER = "server"
    SDK = "sdk"


SERVER_NAME = "transport"
"""The name of the one `Surface.SERVER` subject: findings on it are one per server, whichever tool
the request that showed them was for."""


@dataclass(frozen=True, slots=True)
class Step:
    """One call of a sequence repro, sent before the failing one on the same server."""

    tool: str
    """The name of what the call went to: a tool, a prompt, a resource URI or template."""
    arguments: dict[str, JSONValue]
    schema_valid: bool = True
    surface: Surface = Surface.TOOL
    """Which request: `tools/call`, `prompts/get`, `resources/read` (of `tool`, a URI or a template
    expanded with `arguments`), or for `Surface.SERVER` a raw JSON-RPC message (`arguments`)."""
    produced: tuple[JSONValue, ...] = ()
    """The values its reply brought (ids, paths, names), in the order fuzzgate finds them: a replay
    on a fresh server, which hands out other ids, puts the new ones wherever later steps and the
    failing call sent these."""

    def to_json(self) -> dict[str, JSONValue]:
        data: dict[str, JSONValue] = {"tool": self.tool, "arguments": self.arguments, "schema_valid": self.schema_valid}
        if self.surface is not Surface.TOOL:
            data["surface"] = self.surface.value
        if self.produced:
            data["produced"] = list(self.produced)
        return data

    @classmethod
    def from_json(cls, data: dict[str, JSONValue], where: str = "") -> Step:
        return cls(
            tool=expect(required(data, "tool", where), str, f'"{where}tool"'),
            arguments=expect(required(data, "arguments", where), dict, f'"{where}arguments"'),
            schema_valid=expect(data.get("schema_valid", True), bool, f'"{where}schema_valid"'),
            surface=enum_field(Surface, data, "surface", where, default=Surface.TOOL),
            produced=tuple(optional(data, "produced", list, f'"{where}produced"') or ()),
        )


@dataclass(frozen=True, slots=True)
class Repro:
    """Everything needed to send the failing request again.

    `arguments` are the exact tool arguments sent; `case_index` and `seed` regenerate them;
    `schema_valid` says whether they conformed to the tool's input schema. `prefix` holds the calls
    the same server received before (since it last started) when the bug needs them: replaying
    sends them first, in order, on a fresh server. `tool` names the failing call's tool when the
    finding is not that tool's own (a server-wide finding). `workspace` is the directory outside
    the server's scope that path arguments were written for: a replay puts its own in its place.
    """

    seed: int
    case_index: int
    arguments: dict[str, JSONValue]
    transport: str
    schema_valid: bool = True
    prefix: tuple[Step, ...] = ()
    tool: str | None = None
    workspace: str | None = None
    surface: Surface = Surface.TOOL
    """Which request the failing call was (see `Step.surface`): a prompt's or a resource's finding
    is replayed with `prompts/get` or `resources/read`, a protocol probe's with its raw message."""
    redacted: bool = False
    """Whether a secret in it (an argument, a value a reply brought) was replaced by `[REDACTED]`
    before it was written: a written repro never holds one, like a corpus entry. A replay rebinds
    the marker like any value a reply brought, so a secret a server handed out still replays; one
    fuzzgate sent of its own is sent as the marker."""
    original_arguments: dict[str, JSONValue] | None = None
    """The failing call's arguments as fuzzing sent them, when verification shrank them to
    `arguments` (a shorter string, fewer items, an optional field left out, a number nearer 0,
    each step replayed on a fresh server with the same fingerprint); None when they were not shrunk.
    Kept for the record only: a replay sends `arguments`."""

    def size(self) -> tuple[int, int]:
        """How big the repro is, for keeping the smallest of several: fewer steps first, then bytes."""
        import json

        sizes = [json.dumps(step.arguments, sort_keys=True, ensure_ascii=False) for step in self.prefix]
        sizes.append(json.dumps(self.arguments, sort_keys=True, ensure_ascii=False))
        return len(sizes), sum(len(text) for text in sizes)

    def narrowed(self) -> Repro:
        """This repro without its `workspace` when none of its calls names it (any more: the failing
        call alone, a shrunk prefix), so a baseline file of the same bug stays the same from run to
        run; a replay has nothing to put in its place then."""
        import json

        if self.workspace is None:
            return self
        sent = json.dumps([self.arguments, *(step.arguments for step in self.prefix)], ensure_ascii=False, default=str)
        return self if self.workspace in sent else replace(self, workspace=None)

    def to_json(self) -> dict[str, JSONValue]:
        data: dict[str, JSONValue] = {
            "seed": self.seed,
            "case_index": self.case_index,
            "arguments": self.arguments,
            "transport": self.transport,
            "schema_valid": self.schema_valid,
        }
        # Written only when set, so a single-call repro reads as it always did.
        if self.prefix:
            data["prefix"] = [step.to_json() for step in self.prefix]
        if self.tool is not None:
            data["tool"] = self.tool
        if self.workspace is not None:
            data["workspace"] = self.workspace
        if self.surface is not Surface.TOOL:
            data["surface"] = self.surface.value
        if self.redacted:
            data["redacted"] = True
        if self.original_arguments is not None:
            data["original_arguments"] = self.original_arguments
        return data

    @classmethod
    def from_json(cls, data: dict[str, JSONValue], where: str = "") -> Repro:
        steps = optional(data, "prefix", list, f'"{where}prefix"') or []
        return cls(
            seed=expect(required(data, "seed", where), int, f'"{where}seed"'),
            case_index=expect(required(data, "case_index", where), int, f'"{where}case_index"'),
            arguments=expect(required(data, "arguments", where), dict, f'"{where}arguments"'),
            transport=expect(required(data, "transport", where), str, f'"{where}transport"'),
            schema_valid=expect(data.get("schema_valid", True), bool, f'"{where}schema_valid"'),
            prefix=tuple(
                Step.from_json(expect(step, dict, f'"{where}prefix" items'), f"{where}prefix[].") for step in steps
            ),
            tool=optional(data, "tool", str, f'"{where}tool"'),
            workspace=optional(data, "workspace", str, f'"{where}workspace"'),
            surface=enum_field(Surface, data, "surface", where, default=Surface.TOOL),
            redacted=expect(data.get("redacted", False), bool, f'"{where}redacted"'),
            original_arguments=optional(data, "original_arguments", dict, f'"{where}original_arguments"'),
        )


@dataclass(frozen=True, slots=True)
class Details:
    """Evidence: the error the client saw, what the server logged while handling the call, and
    the source location the server's traceback points at (if any)."""

    error: str | None = None
    stderr: str | None = None
    frames: tuple[str, ...] = ()
    location: tuple[str, int] | None = None
    after_timeout: AfterTimeout | None = None
    """For a hang: what a ping sent right after the call timed out showed. `alive`: the server
    answered it, only this call hangs; `stuck`: it went unanswered too, the whole server stopped
    answering (a denial of service). None for other findings, and where no ping was sent."""

    def to_json(self) -> dict[str, JSONValue]:
        data: dict[str, JSONValue] = {
            "error": self.error,
            "stderr": self.stderr,
            "frames": list(self.frames),
            "location": {"path": self.location[0], "line": self.location[1]} if self.location else None,
        }
        # Written only when set, so the details of other findings read as they always did.
        if self.after_timeout is not None:
            data["after_timeout"] = self.after_timeout.value
        return data

    @classmethod
    def from_json(cls, data: dict[str, JSONValue], where: str = "") -> Details:
        loc = data.get("location")
        frames = optional(data, "frames", list, f'"{where}frames"') or []
        return cls(
            error=optional(data, "error", str, f'"{where}error"'),
            stderr=optional(data, "stderr", str, f'"{where}stderr"'),
            frames=tuple(expect(frame, str, f'"{where}frames" items') for frame in frames),
            location=None if loc is None else location_field(loc, where),
            after_timeout=optional_enum(AfterTimeout, data, "after_timeout", where),
        )


@dataclass(frozen=True, slots=True)
class Finding:
    """One bug, identified by `fingerprint`, with the smallest repro seen and how often it was hit.

    `replays`/`reproduced` record the confirmation on fresh servers; `flaky` is true when the repro
    did not fail every replay, and a flaky finding never fails a run. `unconfirmed` is true when
    the budget ran out before any replay: such a finding is reported as seen, and fails a run.
    """

    kind: Kind
    severity: Severity
    surface: Surface
    name: str
    message: str
    fingerprint: str
    repro: Repro
    details: Details = field(default_factory=Details)
    count: int = 1
    replays: int = 0
    reproduced: int = 0
    flaky: bool = False
    unconfirmed: bool = False
    signature: tuple[str, ...] | None = None
    """What the fingerprint was computed from (`fuzzgate.triage.fingerprint`), kept so a baseline entry can
    be re-derived under a later scheme; None when unknown, or when it held text the redactor removes."""
    cause: Cause = Cause.SERVER
    """Whose bug it is; `Cause.SDK` for a symptom of the SDK the server runs on (named in the message)."""

    @property
    def tool(self) -> str:
        """The tool the failing call went to."""
        return self.repro.tool or self.name

    def merged_with(self, other: Finding) -> Finding:
        """The same bug hit again: keep the more severe symptom (an exception that once went
        uncaught, a hang that once took the whole server down), then the smaller repro (and its
        evidence); add up the count."""
        kept = min((self, other), key=lambda f: (-f.severity.rank, f.repro.size()))
        return replace(kept, count=self.count + other.count)

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "fingerprint": self.fingerprint,
            "kind": self.kind.value,
            "severity": self.severity.value,
            "surface": self.surface.value,
            "name": self.name,
            "message": self.message,
            "details": self.details.to_json(),
            "repro": self.repro.to_json(),
            "count": self.count,
            "replays": self.replays,
            "reproduced": self.reproduced,
            "flaky": self.flaky,
            "unconfirmed": self.unconfirmed,
            "signature": None if self.signature is None else list(self.signature),
            "cause": self.cause.value,
        }

    @classmethod
    def from_json(cls, data: dict[str, JSONValue], where: str = "") -> Finding:
        repro = expect(required(data, "repro", where), dict, f'"{where}repro"')
        details = optional(data, "details", dict, f'"{where}details"') or {}
        signature = optional(data, "signature", list, f'"{where}signature"')
        return cls(
            kind=enum_field(Kind, data, "kind", where),
            severity=enum_field(Severity, data, "severity", where),
            surface=enum_field(Surface, data, "surface", where),
            name=expect(required(data, "name", where), str, f'"{where}name"'),
            message=expect(required(data, "message", where), str, f'"{where}message"'),
            fingerprint=expect(required(data, "fingerprint", where), str, f'"{where}fingerprint"'),
            repro=Repro.from_json(repro, f"{where}repro."),
            details=Details.from_json(details, f"{where}details."),
            count=expect(data.get("count", 1), int, f'"{where}count"'),
            replays=expect(data.get("replays", 0), int, f'"{where}replays"'),
            reproduced=expect(data.get("reproduced", 0), int, f'"{where}reproduced"'),
            flaky=expect(data.get("flaky", False), bool, f'"{where}flaky"'),
            unconfirmed=expect(data.get("unconfirmed", False), bool, f'"{where}unconfirmed"'),
            signature=None
            if signature is None
            else tuple(expect(s, str, f'"{where}signature" items') for s in signature),
            cause=enum_field(Cause, data, "cause", where, default=Cause.SERVER),
        )
