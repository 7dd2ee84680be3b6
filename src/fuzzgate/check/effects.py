"""Oracles for bugs that answer with success: effects outside the server's scope, and injections.

fuzzgate watches the directory outside the server's scope (`fuzzgate.sandbox.workspace`), where it
planted canaries and where its probes (`fuzzgate.generate.probes`) point. What changed there while
a call was pending, and canary content in a reply, are the evidence:

- a file named after an injection probe appeared: the option or the shell fragment ran
  (`injection`); the name is unique to one probe, so it says which tool, field and probe;
- anything else created, changed or deleted there, or a canary's content in the reply: the server
  acted outside its scope (`scope_escape`). A canary's *path* echoed back is not its content, and
  content the arguments themselves carried is not evidence either.

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


class CanaryLike(Protocol):
    @property
    def kind(self) -> str: ...
    @property
    def relpath(self) -> str: ...
    @property
    def markers(self) -> tuple[str, ...]: ...


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


def effects_of(changes: Sequence[ChangeLike], outside: Path) -> tuple[Effect, ...]:
    found = []
    for change in changes:
        try:
            rel = change.path.relative_to(outside).as_posix()
        except ValueError:
            rel = change.path.as_posix()
        found.append(Effect(change.action, rel, change.canary.kind if change.canary else None, str(change.path)))
    return tuple(found)


def _field_leading_to(arguments: Mapping[str, Any], effect: Effect) -> str:
    """The top-level argument that led to `effect`: one naming a directory the effect lies in (an
    absolute path), else one naming its first component, else `?`."""
    for name, value in arguments.items():
        if isinstance(value, str) and value.startswith("/") and len(value) > 1:
            base = value.rstrip("/")
            if effect.path == base or effect.path.startswith(base + "/"):
                return str(name)
    # `../../NAME` resolved from a directory below the scope lands deeper than the top: the first
    # component names a directory fuzzgate made, the last one what the argument asked for.
    parts = effect.relpath.split("/")
    for part in dict.fromkeys((parts[0], parts[-1])):
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


def _injection(
    name: str, arguments: Mapping[str, Any], probe: Probe | None
) -> tuple[ProbeClass, str, str] | None:
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
        top = effect.relpath.split("/", 1)[0]
        probe = probes.get(top)
        where = f"<outside>/{effect.relpath}"
        injected = _injection(top, arguments, probe)
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
            probed = probe is not None and top.startswith(ESCAPE_PREFIX)
            field = probe.field if probe is not None and probed else _field_leading_to(arguments, effect)
            kind = Kind.SCOPE_ESCAPE
            # One bug per tool and argument, whatever it touched out there and how: creating, changing
            # and deleting through the same unchecked path are one missing check.
            signature = ("write", field)
            target = f"the {effect.canary} canary at {where}" if effect.canary else where
            led = f" (argument `{field}` = {_shown(arguments[field], redact)})" if field in arguments else ""
            message = f"{effect.action} {target}, outside its scope{led}"
        key = (kind, signature)
        if key not in found:
            found[key] = Observation(kind, redact.text(message), signature, Details(error=None), ambiguous)
    return list(found.values())


def canary_read_observations(
    arguments: Mapping[str, Any], reply: str, canaries: Sequence[CanaryLike], redact: Redactor
) -> list[Observation]:
    """A reply carrying the content of a canary planted outside the scope (content the arguments
    did not carry themselves)."""
    if not reply:
        return []
    sent = json.dumps(arguments, ensure_ascii=False)
    found: dict[tuple[str, ...], Observation] = {}
    for canary in canaries:
        if any(m in reply and m not in sent for m in canary.markers):
            field = _field_naming(arguments, canary.relpath.split("/", 1)[0])
            led = f" (argument `{field}` = {_shown(arguments[field], redact)})" if field in arguments else ""
            message = f"answered with the content of the {canary.kind} canary planted outside its scope{led}"
            # One bug per tool and argument, whichever canary it happened to read.
            signature = ("read", field)
            if signature not in found:
                found[signature] = Observation(Kind.SCOPE_ESCAPE, redact.text(message), signature, Details(error=None))
    return list(found.values())


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
