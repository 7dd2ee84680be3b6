"""Probes: fixed values that make a polite bug show itself, once per string field of a tool.

Random and boundary values make a server fail loudly; the bugs that answer with success need a
value that names something only a bug could touch. Every probe names a path in the directory
outside the server's scope that fuzzgate watches (written as `OUTSIDE`, which the engine replaces
with the directory of the server start the probe goes to):

- scope probes: that directory itself, the canaries planted in it, a fresh name in it, and the
  same reached from the scope with `../..` (the scope is laid out two levels below it): a server
  that creates, changes or deletes anything there, or answers with a canary's content, acted
  outside its scope;
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
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

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


def _values(token: str, tool: str, field: str, canaries: Sequence[str]) -> list[Probe]:
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
    return probes


def probe_cases(
    tool: str,
    schema: Mapping[str, Any],
    base: Mapping[str, Any],
    token: str,
    canaries: Sequence[str],
    listener: Listener | None = None,
) -> list[ProbeCase]:
    """The probes for every string field of `tool`, each in a copy of `base` (a valid case, so the
    tool gets past its other arguments): field by field, URL probes first in a URL-like field when
    the server has the `listener`, then scope probes."""
    urls = set(url_fields(schema)) if listener is not None else set()
    cases = []
    for field in string_fields(schema):
        probes = _url_values(token, tool, field, listener) if listener is not None and field in urls else []
        for probe in [*probes, *_values(token, tool, field, canaries)]:
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
