"""Probes: fixed values that make a polite bug show itself, once per string field of a tool.

Random and boundary values make a server fail loudly; the bugs that answer with success need a
value that names something only a bug could touch. Every probe names a path in the directory
outside the server's scope that fuzzgate watches (written as `OUTSIDE`, which the engine replaces
with the directory of the server start the probe goes to):

- scope probes: that directory itself, the canaries planted in it, a fresh name in it, and the
  same reached from the scope with `../..` (the scope is laid out two levels below it): a server
  that creates, changes or deletes anything there, or answers with a canary's content, acted
  outside its scope;
- boundary probes (`fuzzgate.sandbox.boundary`), in the absolute and the relative form, for reads
  (the canary file a canary directory holds, the directory itself for a listing) and writes (a
  fresh name): into the prefix sibling `<scope dir>-backup` of each scope dir (`../<scope
  dir>-backup/...` is relative to the scope dir), and through the links planted in every scope dir
  (`archive/...` to a canary directory, `notes.txt` to a canary file): a server whose check is
  `startswith(allowed)`, or that checks the path but follows links, lands in watched territory;
- injection probes: command-line options that write a file (`--output=`, `-o`, git's
  `--upload-pack=`) and shell fragments that create one (`$(...)`, backticks, `;`, `|`, `&&`, a
  newline). The file's name is unique to the probe, so the file appearing proves the option or
  the command ran, and says which probe did it; a probe merely echoed back creates nothing.

A probe's file name hashes the run's token, the tool, the field and the probe, so the same seed
gives the same probes, and a created name maps back to the one probe that could create it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fuzzgate.sandbox.boundary import Boundary

OUTSIDE = "@@FUZZGATE_OUTSIDE@@"
"""Stands for the watched directory outside the scope until the engine sends the probe."""
INJECTION_PREFIX = "fzginj-"
ESCAPE_PREFIX = "fzgprobe-"
_SKIPPED_FORMATS = frozenset({"date", "date-time", "time", "duration", "email", "uuid", "ipv4", "ipv6", "hostname"})


class ProbeClass(StrEnum):
    SCOPE = "scope"
    OPTION = "option"
    SHELL = "shell"
    SIBLING = "sibling"
    """Into a prefix sibling of a scope dir (`<scope dir>-backup`)."""
    SYMLINK = "symlink"
    """Through a link planted in the scope that leads outside it."""
    COST = "cost"
    """A value costly to evaluate (`fuzzgate.generate.cost`): what it shows is a hang or a crash."""


@dataclass(frozen=True, slots=True)
class Probe:
    """One probe value for one field of one tool."""

    tool: str
    field: str
    probe_class: ProbeClass
    label: str
    """Which probe, in words that never hold the payload (`--output=`, `$(...)`, `canary file`)."""
    value: str | int
    """What goes to the field (an integer only for a cost probe's huge count)."""
    marker: str | None = None
    """The file name only this probe can create, when it is one that creates a file."""


@dataclass(frozen=True, slots=True)
class ProbeCase:
    arguments: dict[str, Any]
    probe: Probe

    @property
    def origin(self) -> str:
        return f"probe:{self.probe.probe_class.value}:/properties/{self.probe.field}={self.probe.label}"


def marker(token: str, tool: str, field: str, label: str, prefix: str) -> str:
    digest = hashlib.sha256("\x1f".join((token, tool, field, label)).encode("utf-8", "surrogatepass")).hexdigest()
    return f"{prefix}{digest[:16]}"


def string_fields(schema: Mapping[str, Any]) -> list[str]:
    """The top-level properties a free string may go to (no enum, const or non-path format)."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    fields = []
    for name, sub in properties.items():
        if not isinstance(sub, Mapping) or "enum" in sub or "const" in sub:
            continue
        kind = sub.get("type")
        takes_string = kind == "string" or (isinstance(kind, list) and "string" in kind)
        if takes_string and sub.get("format") not in _SKIPPED_FORMATS:
            fields.append(str(name))
    return fields


MAX_BOUNDARY_DIRS = 2
"""Boundary probes go to the first scope dirs only: each adds ten probes per field."""


def _values(
    token: str, tool: str, field: str, canaries: Sequence[str], boundary: Boundary | None = None
) -> list[Probe]:
    def made(probe_class: ProbeClass, label: str, template: str, prefix: str) -> Probe:
        name = marker(token, tool, field, label, prefix)
        return Probe(tool, field, probe_class, label, template.format(path=f"{OUTSIDE}/{name}", name=name), name)

    probes = [
        made(ProbeClass.SCOPE, "new path outside", "{path}", ESCAPE_PREFIX),
        Probe(tool, field, ProbeClass.SCOPE, "outside directory", OUTSIDE),
        made(ProbeClass.SCOPE, "../.. to a new path", "../../{name}", ESCAPE_PREFIX),
    ]
    for relpath in canaries:
        probes.append(Probe(tool, field, ProbeClass.SCOPE, f"canary {relpath}", f"{OUTSIDE}/{relpath}"))
    if canaries:
        probes.append(Probe(tool, field, ProbeClass.SCOPE, f"../.. to canary {canaries[0]}", f"../../{canaries[0]}"))
    probes += [
        made(ProbeClass.OPTION, "--output=", "--output={path}", INJECTION_PREFIX),
        made(ProbeClass.OPTION, "-o", "-o{path}", INJECTION_PREFIX),
        made(ProbeClass.OPTION, "--upload-pack=", "--upload-pack=touch {path};", INJECTION_PREFIX),
        made(ProbeClass.SHELL, "$(...)", "$(touch {path})", INJECTION_PREFIX),
        made(ProbeClass.SHELL, "backticks", "`touch {path}`", INJECTION_PREFIX),
        made(ProbeClass.SHELL, ";", "x; touch {path}", INJECTION_PREFIX),
        made(ProbeClass.SHELL, "|", "x | touch {path}", INJECTION_PREFIX),
        made(ProbeClass.SHELL, "&&", "x && touch {path}", INJECTION_PREFIX),
        made(ProbeClass.SHELL, "newline", "x\ntouch {path}", INJECTION_PREFIX),
    ]
    if boundary is not None:
        # Last: a tool's injection probes keep the slots they had before the boundary's were added.
        probes += _boundary_values(boundary, made, tool, field)
    return probes


def _boundary_values(
    boundary: Boundary, made: Callable[[ProbeClass, str, str, str], Probe], tool: str, field: str
) -> list[Probe]:
    """The prefix sibling and symlink probes of one field (module docstring)."""
    sibling, symlink = ProbeClass.SIBLING, ProbeClass.SYMLINK
    canary, dir_link, file_link = boundary.canary_file, boundary.dir_link, boundary.file_link

    def fixed(probe_class: ProbeClass, label: str, value: str) -> Probe:
        return Probe(tool, field, probe_class, label, value)

    probes, absolute = [], []
    for index, (scope_dir, siblings) in enumerate(zip(boundary.scope_dirs, boundary.siblings, strict=True)):
        if index == MAX_BOUNDARY_DIRS:
            break
        at, near = f"{OUTSIDE}/{siblings[0]}", f"../{siblings[0].rsplit('/', 1)[-1]}"
        which = f"prefix sibling of scope dir {index}"
        probes += [
            fixed(sibling, f"{which}", at),
            fixed(sibling, f"../ to the {which}", near),
            fixed(sibling, f"canary in the {which}", f"{at}/{canary}"),
            fixed(sibling, f"../ to the canary in the {which}", f"{near}/{canary}"),
            made(sibling, f"new path in the {which}", f"{_literal(at)}/{{name}}", ESCAPE_PREFIX),
            made(sibling, f"../ to a new path in the {which}", f"{_literal(near)}/{{name}}", ESCAPE_PREFIX),
        ]
        linked = f"{OUTSIDE}/{scope_dir}"
        fresh = f"{_literal(linked)}/{dir_link}/{{name}}"
        which = f"link in scope dir {index}"
        absolute += [
            fixed(symlink, f"absolute {which} to a directory", f"{linked}/{dir_link}"),
            fixed(symlink, f"canary through the absolute {which}", f"{linked}/{dir_link}/{canary}"),
            made(symlink, f"new path through the absolute {which}", fresh, ESCAPE_PREFIX),
            fixed(symlink, f"absolute {which} to a file", f"{linked}/{file_link}"),
        ]
    # Relative to the scope dir (or the working directory) the server resolves against: the same
    # names in every scope dir.
    probes += [
        fixed(symlink, "link to a directory", dir_link),
        fixed(symlink, "canary through a link", f"{dir_link}/{canary}"),
        made(symlink, "new path through a link", f"{dir_link}/{{name}}", ESCAPE_PREFIX),
        fixed(symlink, "link to a file", file_link),
    ]
    probes += absolute
    return probes


def _literal(text: str) -> str:
    """`text` as a `str.format` template that yields itself (a scope dir's name may hold braces)."""
    return text.replace("{", "{{").replace("}", "}}")


def probe_cases(
    tool: str,
    schema: Mapping[str, Any],
    base: Mapping[str, Any],
    token: str,
    canaries: Sequence[str],
    boundary: Boundary | None = None,
) -> list[ProbeCase]:
    """The probes for every string field of `tool`, each in a copy of `base` (a valid case, so the
    tool gets past its other arguments): field by field, scope probes first, then injection
    probes, then the boundary's (when the workspace's `boundary` is given)."""
    cases = []
    for field in string_fields(schema):
        for probe in _values(token, tool, field, canaries, boundary):
            cases.append(ProbeCase({**base, field: probe.value}, probe))
    return cases


PROBES_AFTER = 4
"""A tool's first cases stay regular ones (its example and first boundary values)."""
PROBE_EVERY = 3
"""After them, every third case is the next probe until each was sent once."""


def probe_slot(index: int, probes: int) -> tuple[bool, int]:
    """Case `index` of a tool with `probes` probes: the first `PROBES_AFTER` cases are regular, then
    every `PROBE_EVERY`-th case is the next probe until they are all sent, so the regular stream (a
    tool's own examples and boundaries) is slowed by a third, not halved. Returns (is_probe, position
    among probes or among regular cases)."""
    if index < PROBES_AFTER:
        return False, index
    j = index - PROBES_AFTER
    before = j // PROBE_EVERY
    """Probe slots before this one."""
    if j % PROBE_EVERY == PROBE_EVERY - 1 and before < probes:
        return True, before
    return False, index - min(probes, before)


def place(value: Any, outside: str) -> Any:
    """`value` with every `OUTSIDE` replaced by the real directory."""
    return substitute(value, OUTSIDE, outside)


def substitute(value: Any, old: str, new: str) -> Any:
    """`value` (JSON) with `old` replaced by `new` in every string, keys included."""
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, dict):
        return {substitute(k, old, new): substitute(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, old, new) for v in value]
    return value
