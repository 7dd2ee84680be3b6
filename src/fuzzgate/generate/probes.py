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
  the command ran, and says which probe did it; a probe merely echoed back creates nothing;
- URL probes, for URL-like fields (`url_fields`) of a server that has the SSRF listener on its own
  loopback (`fuzzgate.sandbox.listener`; none is given to any other, whose 127.0.0.1 is the
  machine's): canary URLs to the listener, written as 127.0.0.1, its decimal form, ::1 and
  localhost, one the listener redirects, and `file://` of the file canary in the watched directory.
  The listener reports the marker in the path, which says which probe's URL the server fetched.

A probe's file name hashes the run's token, the tool, the field and the probe, so the same seed
gives the same probes, and a created name maps back to the one probe that could create it.

A probe in one field only matters when the rest of the call gets the server as far as reading that
field, so a tool's probes are planned once, as the fields each sets (`ProbeCase.arguments`), and
each rides, when it is sent, on the tool's last accepted call (`ride`). Which of a tool's cases are
probes is `ProbeSlots`' choice, paced (`pace`) by how many cases the tool can expect in its share of
the budget: back to back when the regular stream would leave some unsent, else spread early.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fuzzgate.sandbox.boundary import Boundary

from fuzzgate.sandbox.listener import FILE_CANARY, HOSTS, URL_MARKER, Listener

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
    URL = "url"
    """A canary URL (`fuzzgate.sandbox.listener`): what it shows is a request the server made (`ssrf`)."""


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
    """The file name only this probe can create, when it is one that creates a file; a URL probe's
    marker, the path its canary URL holds."""


@dataclass(frozen=True, slots=True)
class ProbeCase:
    arguments: dict[str, Any]
    """The arguments the probe sets over its base: the probed field (and, for a cost probe's regex,
    the input it is matched against); with the base `{}` the engine plans probes on, only those."""
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


_URL_WORDS = frozenset(
    {"url", "urls", "uri", "uris", "iri", "endpoint", "link", "links", "href", "webhook", "callback"}
)
_URL_FORMATS = frozenset({"uri", "url", "iri", "uri-reference", "iri-reference"})
_URL_SHAPE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S+")


def url_fields(schema: Mapping[str, Any]) -> list[str]:
    """The free string fields (`string_fields`) that take a URL: a URI format, a name or description
    saying url, uri, endpoint, link, href, webhook or callback, or URL examples or default."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    found = []
    for name in string_fields(schema):
        sub = properties[name]
        description = sub.get("description")
        words = set(_words(name)) | set(_words(description if isinstance(description, str) else ""))
        examples = sub.get("examples")
        shown = [*(examples if isinstance(examples, list) else []), sub.get("default")]
        if (
            sub.get("format") in _URL_FORMATS
            or words & _URL_WORDS
            or any(isinstance(v, str) and _URL_SHAPE.fullmatch(v) for v in shown)
        ):
            found.append(name)
    return found


def _words(text: str) -> list[str]:
    return [w.lower() for w in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", text)]


def _url_values(token: str, tool: str, field: str, listener: Listener) -> list[Probe]:
    def made(label: str, host: str, *, redirect: bool = False) -> Probe:
        name = marker(token, tool, field, label, URL_MARKER)
        return Probe(tool, field, ProbeClass.URL, label, listener.url(host, name, redirect=redirect), name)

    probes = [made(label, host) for label, host in HOSTS]
    probes.append(made("redirect", "127.0.0.1", redirect=True))
    probes.append(Probe(tool, field, ProbeClass.URL, "file:// canary", f"file://{OUTSIDE}/{FILE_CANARY}"))
    return probes


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
    listener: Listener | None = None,
) -> list[ProbeCase]:
    """The probes for every string field of `tool`, each in a copy of `base` (`{}` for the fields it
    sets alone, as the engine plans them), in rounds: the first probe of each class for every field,
    then the second, and so on, classes in the order they come for a field (URL probes first in a
    URL-like field when the server has the SSRF `listener`, then scope, injection, and the
    boundary's when the workspace's `boundary` is given). A tool that gets only a few cases then
    still sends every class to every field first (an option probe in the second of two fields does
    not wait behind sixteen probes of the first)."""
    urls = set(url_fields(schema)) if listener is not None else set()
    by_class: dict[ProbeClass, list[list[ProbeCase]]] = {}
    for field in string_fields(schema):
        mine: dict[ProbeClass, list[ProbeCase]] = {}
        probes = _url_values(token, tool, field, listener) if listener is not None and field in urls else []
        for probe in [*probes, *_values(token, tool, field, canaries, boundary)]:
            mine.setdefault(probe.probe_class, []).append(ProbeCase({**base, field: probe.value}, probe))
        for probe_class, cases in mine.items():
            by_class.setdefault(probe_class, []).append(cases)
    ordered: list[ProbeCase] = []
    rounds = max((len(cases) for lists in by_class.values() for cases in lists), default=0)
    for rank in range(rounds):
        for lists in by_class.values():
            ordered += [cases[rank] for cases in lists if rank < len(cases)]
    return ordered


def ride(case: ProbeCase, base: Mapping[str, Any]) -> dict[str, Any]:
    """The probe's arguments on `base` (a call the tool accepted, or its first case): the base with
    only the fields the probe sets changed."""
    return {**base, **case.arguments}


PROBES_AFTER = 1
"""A tool's first case stays a regular one (its base object: its examples and defaults), which is
often the first call it accepts; its probes are paced from the next case on."""
PROBE_EVERY = 3
"""The sparsest pace: a probe every third case, so the regular stream is slowed by a third."""
PROBE_SHARE = 0.5
"""All of a tool's probes go within this share of the cases it can expect in its share of the budget."""
WAIT_CASES = 2
"""At most this many regular cases more before a tool's first probe, when its share leaves room for
them: a call the tool accepts, for the probes to ride on, is likely among them."""


@dataclass(frozen=True, slots=True)
class Pace:
    """How a tool's probes are spread among its cases."""

    every: int
    """A probe every this many cases (1: back to back, before any more regular case)."""
    wait: int
    """Regular cases more before the first probe, so that the tool likely accepted a call to ride on."""


def pace(probes: int, expected: float | None) -> Pace:
    """The pace of `probes` probes in a tool that can expect `expected` cases in all (None: not
    known yet, so the probes go first): as sparse as `PROBE_EVERY` when they all fit in
    `PROBE_SHARE` of the expected cases that way, denser when not, back to back when even the
    regular cases after them would leave some unsent."""
    if probes <= 0:
        return Pace(PROBE_EVERY, 0)
    if expected is None:
        return Pace(1, 0)
    every = max(1, min(PROBE_EVERY, int(PROBE_SHARE * expected // probes)))
    spare = expected - PROBES_AFTER - probes
    return Pace(every, max(0, min(WAIT_CASES, int(spare))))


@dataclass(slots=True)
class ProbeSlots:
    """Which of one tool's cases are probes, decided in case order and remembered, so a case asked
    for again (set aside for a corpus mutant) is the same slot. Before it is paced every case is
    regular, and so are the first `PROBES_AFTER` and, when the pace leaves room, `Pace.wait` more
    (a call the tool accepts is likely among them, and the probes ride on it); after them, a case is
    the next probe when `pace.every - 1` regular cases came since the last one. The slots depend on
    the case index and the pace alone, never on replies: with several calls in flight, a case that
    is regular in one run is regular in another."""

    probes: int
    pace: Pace | None = None
    _slots: list[tuple[bool, int]] = dataclasses.field(default_factory=list)
    _sent: int = 0
    _regular: int = 0
    _since: int = 0

    def slot(self, index: int) -> tuple[bool, int]:
        """(is_probe, position among probes or among regular cases) of case `index`."""
        while len(self._slots) <= index:
            self._slots.append(self._next())
        return self._slots[index]

    def decided(self, index: int) -> bool:
        return index < len(self._slots)

    def _next(self) -> tuple[bool, int]:
        paced = self.pace
        due = paced is not None and len(self._slots) >= PROBES_AFTER + paced.wait and self._since >= paced.every - 1
        if due and self._sent < self.probes:
            self._since = 0
            self._sent += 1
            return True, self._sent - 1
        self._since += 1
        self._regular += 1
        return False, self._regular - 1


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
