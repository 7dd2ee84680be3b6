"""Oracles for bugs that answer with success: effects outside the server's scope, and injections.

fuzzgate watches the directory outside the server's scope (`fuzzgate.sandbox.workspace`), where it
planted canaries and where its probes (`fuzzgate.generate.probes`) point. What changed there while
a call was pending, and canary content in a reply, are the evidence:

- a file named after an injection probe appeared: the option or the shell fragment ran
  (`injection`); the name is unique to one probe, so it says which tool, field and probe;
- anything else created, changed or deleted there, or a canary's content in the reply: the server
  acted outside its scope (`scope_escape`). A canary's *path* echoed back is not its content, and
  content the arguments themselves carried is not evidence either;
- a canary's *name token* in the reply (`Canary.names`: files planted outside whose names nothing
  fuzzgate sends holds): the server listed, globbed or searched a directory outside its scope
  (`scope_escape`, a read). A token the call's own arguments carried is not evidence.

Escapes at the scope's boundary (`fuzzgate.sandbox.boundary`) say which boundary in their message:
a prefix sibling of a scope dir, a symbolic link planted in the scope, or one of the scope's own
links (redirected to a watched stand-in), and the argument that led there.

Signatures name whether the server wrote or read out there and the argument that led there
(`("write", field)`, `("read", field)`; an injection: `(option|shell, field)`), never the payload
or what exactly was touched: the same missing check reached with other values, or touching other
files, keeps its fingerprint.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from fuzzgate.check.observation import Observation
from fuzzgate.check.registry import CallContext, CheckEnv, check
from fuzzgate.check.secrets import Redactor
from fuzzgate.generate.probes import ESCAPE_PREFIX, INJECTION_PREFIX, Probe, ProbeClass
from fuzzgate.model.findings import Details, Kind

VALUE_CHARS = 120
UNKNOWN_FIELD = "?"
WATCHED_DIR = "outside"
"""The name of the watched directory in a layer (`fuzzgate.sandbox.workspace`): an absolute argument
ending in it (and a canary's parent) names the directory that canary lies in."""


class CanaryLike(Protocol):
    @property
    def kind(self) -> str: ...
    @property
    def relpath(self) -> str: ...
    @property
    def markers(self) -> tuple[str, ...]: ...
    @property
    def names(self) -> tuple[str, ...]: ...
    @property
    def aliases(self) -> tuple[str, ...]: ...


class ChangeLike(Protocol):
    @property
    def action(self) -> str: ...
    @property
    def path(self) -> Path: ...
    @property
    def canary(self) -> CanaryLike | None: ...


@dataclass(frozen=True, slots=True)
class Effect:
    """One change outside the scope during a call, as the oracles read it."""

    action: str
    """created, changed or deleted"""
    relpath: str
    """The path relative to the watched directory."""
    canary: str | None = None
    """The kind of canary touched, if it was one."""
    path: str = ""
    """The absolute path, as the server saw it."""
    aliases: tuple[str, ...] = ()
    """The names of the links in the scope that lead to the canary touched."""


def effects_of(changes: Sequence[ChangeLike], outside: Path) -> tuple[Effect, ...]:
    found = []
    for change in changes:
        try:
            rel = change.path.relative_to(outside).as_posix()
        except ValueError:
            rel = change.path.as_posix()
        canary = change.canary
        kind, aliases = (canary.kind, canary.aliases) if canary is not None else (None, ())
        found.append(Effect(change.action, rel, kind, str(change.path), aliases))
    return tuple(found)


def _boundary(kind: str | None, relpath: str, aliases: tuple[str, ...]) -> str:
    """Which boundary of the scope a canary lies at, as a clause for a message; "" for none."""
    if kind == "sibling":
        sibling = relpath.split("/")[1] if relpath.count("/") else relpath
        return f"in `{sibling}`, a prefix sibling of a scope dir (its name extends the scope dir's)"
    if kind == "linked" and aliases:
        return f"through the symbolic link `{aliases[0]}` planted in its scope, which leads outside it"
    if kind == "link" and aliases:
        return f"through its scope's own symbolic link `{aliases[0]}`, which leads outside it"
    return ""


def _field_leading_to(arguments: Mapping[str, Any], effect: Effect) -> str:
    """The top-level argument that led to `effect`: one naming a directory the effect lies in (an
    absolute path), else one naming its first component, else `?`."""
    for name, value in arguments.items():
        if isinstance(value, str) and value.startswith("/") and len(value) > 1:
            base = value.rstrip("/")
            if effect.path == base or effect.path.startswith(base + "/"):
                return str(name)
    # `../../NAME` resolved from a directory below the scope lands deeper than the top: the first
    # component names a directory fuzzgate made, the last one what the argument asked for; a prefix
    # sibling is the second (`scope/<sibling>/...`), and a canary reached through a link is named
    # by the link's name.
    parts = effect.relpath.split("/")
    for part in dict.fromkeys((parts[0], parts[-1], *parts[1:2], *effect.aliases)):
        field = _field_naming(arguments, part)
        if field != UNKNOWN_FIELD:
            return field
    # A server creating its own names under a path that climbs out (`git init ../..` makes `.git`).
    for name, value in arguments.items():
        if isinstance(value, str) and ".." in value.replace("\\", "/").split("/"):
            return str(name)
    return UNKNOWN_FIELD


def _field_naming(arguments: Mapping[str, Any], needle: str) -> str:
    """The top-level argument whose value mentions `needle` as a whole name, else `?`."""
    # A whole name, not a substring: a created `a` is not named by any value holding the letter a,
    # which would make the signature (and fingerprint) depend on the payload.
    named = re.compile(rf"(?<![\w.-]){re.escape(needle)}(?![\w.-])")
    for name, value in arguments.items():
        if named.search(json.dumps(value, ensure_ascii=False)):
            return str(name)
    return UNKNOWN_FIELD


def _shown(value: Any, redact: Redactor) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return repr(redact.cut(text, VALUE_CHARS))


@check(order=50)
def outside_effects(ctx: CallContext, env: CheckEnv) -> Iterator[Observation]:
    """What the call created, changed or deleted outside the scope: an injection when the file is
    one only an injection probe names, a scope escape otherwise; one observation per signature."""
    effects = [e for e in ctx.effects if isinstance(e, Effect)]
    yield from effect_observations(ctx.arguments, effects, env.probes, env.redact, ambiguous=ctx.outcome.concurrent > 1)


@check(order=60)
def canary_content(ctx: CallContext, env: CheckEnv) -> Iterator[Observation]:
    """A reply carrying the content of a canary planted outside the scope."""
    if ctx.replied and env.canaries:
        reply = ctx.outcome.payload or ctx.outcome.text
        yield from canary_read_observations(ctx.arguments, reply, env.canaries, env.redact)


def _carried(probe: Probe, arguments: Mapping[str, Any]) -> bool:
    """Whether the probe's own field still holds its marker in these arguments."""
    value = arguments.get(probe.field)
    return probe.marker is not None and probe.marker in json.dumps(value, ensure_ascii=False)


def _injection(name: str, arguments: Mapping[str, Any], probe: Probe | None) -> tuple[ProbeClass, str, str] | None:
    """(class, field, label) when `name` is a file only an injection probe names. Read from the
    arguments themselves, so a replay on another run (which never built that probe) sees the same."""
    if not name.startswith(INJECTION_PREFIX):
        return None
    if probe is not None:
        return probe.probe_class, probe.field, probe.label
    field = _field_naming(arguments, name)
    value = arguments.get(field)
    if not isinstance(value, str):
        return None
    option = value.lstrip().startswith("-")
    return (ProbeClass.OPTION if option else ProbeClass.SHELL), field, ("an option" if option else "a shell fragment")


def effect_observations(
    arguments: Mapping[str, Any],
    effects: Sequence[Effect],
    probes: Mapping[str, Probe],
    redact: Redactor,
    *,
    ambiguous: bool = False,
) -> list[Observation]:
    """One observation per distinct signature among `effects`."""
    found: dict[tuple[Kind, tuple[str, ...]], Observation] = {}
    for effect in effects:
        top, last = effect.relpath.split("/", 1)[0], effect.relpath.rsplit("/", 1)[-1]
        probe = probes.get(top) or probes.get(last)
        if probe is not None and not _carried(probe, arguments):
            # The name came in another field (a value a reply or an accepted call brought, which a
            # probe of another field rides on): that field led there, not the probe's.
            probe = None
        where = f"<outside>/{effect.relpath}"
        # An injection probe's command creates the file it names; something created inside it (a
        # `git init` of that path makes `.git/...`) is the name used as a path.
        injected = _injection(top, arguments, probe) if effect.relpath == top else None
        if injected is not None:
            probe_class, field, label = injected
            what = "an injected option" if probe_class is ProbeClass.OPTION else "an injected shell command"
            kind = Kind.INJECTION
            signature: tuple[str, ...] = (probe_class.value, field)
            message = (
                f"ran {what} ({label}): argument `{field}` = {_shown(arguments.get(field), redact)} "
                f"created {where}, a file only that probe names"
            )
        else:
            probed = probe is not None and (probe.marker or "").startswith(ESCAPE_PREFIX)
            field = probe.field if probe is not None and probed else _field_leading_to(arguments, effect)
            kind = Kind.SCOPE_ESCAPE
            # One bug per tool and argument, whatever it touched out there and how: creating, changing
            # and deleting through the same unchecked path are one missing check.
            signature = ("write", field)
            target = f"the {effect.canary} canary at {where}" if effect.canary else where
            led = f" (argument `{field}` = {_shown(arguments[field], redact)})" if field in arguments else ""
            crossed = _boundary(effect.canary, effect.relpath, effect.aliases)
            message = f"{effect.action} {target}, outside its scope{', ' + crossed if crossed else ''}{led}"
        key = (kind, signature)
        if key not in found:
            found[key] = Observation(kind, redact.text(message), signature, Details(error=None), ambiguous)
    return list(found.values())


def canary_read_observations(
    arguments: Mapping[str, Any], reply: str, canaries: Sequence[CanaryLike], redact: Redactor
) -> list[Observation]:
    """A reply carrying the content of a canary planted outside the scope, or naming a file planted
    there by its unique token (a listing, a glob, a search): content and names the arguments did
    not carry themselves."""
    if not reply:
        return []
    sent = json.dumps(arguments, ensure_ascii=False)
    found: dict[tuple[str, ...], Observation] = {}
    for canary in canaries:
        content = any(m in reply and m not in sent for m in canary.markers)
        named = any(n in reply and n not in sent for n in canary.names)
        if not content and not named:
            continue
        field = _field_reading(arguments, canary)
        led = f" (argument `{field}` = {_shown(arguments[field], redact)})" if field in arguments else ""
        crossed = _boundary(canary.kind, canary.relpath, canary.aliases)
        if content:
            what = f"answered with the content of the {canary.kind} canary planted outside its scope"
        else:
            what = (
                "answered with the name of a file planted outside its scope, a name only a listing, "
                "glob or search of a directory outside could give"
            )
        message = f"{what}{', ' + crossed if crossed else ''}{led}"
        # One bug per tool and argument, whichever canary it happened to read, and however.
        signature = ("read", field)
        if signature not in found:
            found[signature] = Observation(Kind.SCOPE_ESCAPE, redact.text(message), signature, Details(error=None))
    return list(found.values())


def _field_reading(arguments: Mapping[str, Any], canary: CanaryLike) -> str:
    """The argument that led to reading `canary`: one naming its first or last path component or a
    link to it, else an absolute path naming the directory it lies in, else one climbing out with
    `..`, else `?`."""
    parts = canary.relpath.split("/")
    for part in dict.fromkeys((parts[0], parts[-1], *canary.aliases)):
        field = _field_naming(arguments, part)
        if field != UNKNOWN_FIELD:
            return field
    parent = "/".join((WATCHED_DIR, *parts[:-1]))
    for name, value in arguments.items():
        if isinstance(value, str) and value.startswith("/") and value.rstrip("/").endswith("/" + parent):
            return str(name)
    for name, value in arguments.items():
        if isinstance(value, str) and ".." in value.replace("\\", "/").split("/"):
            return str(name)
    return UNKNOWN_FIELD


_REJECTED_OPTION = re.compile(
    r"\b(?:unknown|unrecognized|unrecognised|invalid|illegal|unsupported|bad)\s+(?:option|switch|flag)\b", re.IGNORECASE
)


@check(order=55)
def rejected_option(ctx: CallContext, env: CheckEnv) -> Iterator[Observation]:
    """A command line rejected an option probe as an unknown option, quoting it: the argument
    reached the command as an option, though this one wrote nothing (git's `checkout` has no
    `--output`). The server put client input where options go; another option would have run."""
    if not ctx.replied:
        return
    reply = "\n".join(filter(None, (ctx.outcome.text, ctx.outcome.stderr)))
    if not reply or not _REJECTED_OPTION.search(reply):
        return
    lines = [line for line in reply.splitlines() if _REJECTED_OPTION.search(line)]
    for field, value in ctx.arguments.items():
        if not isinstance(value, str) or not value.lstrip().startswith("-"):
            continue
        marker = re.search(rf"{re.escape(INJECTION_PREFIX)}[0-9a-f]+", value)
        quoted = next((line for line in lines if marker and marker.group(0) in line), None)
        if marker is None or quoted is None:
            continue
        message = (
            f"passed argument `{field}` = {_shown(value, env.redact)} to a command line as an option: "
            f"it answered {_shown(quoted.strip(), env.redact)}"
        )
        yield Observation(Kind.INJECTION, env.redact.text(message), (ProbeClass.OPTION.value, str(field)), Details())
        return
