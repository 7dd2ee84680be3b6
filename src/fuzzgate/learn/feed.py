"""What the engine learns from the server's replies while it fuzzes, and what it sends because of it.

One `Feed` per run, owned by the engine:

- the dictionary (`fuzzgate.generate.dictionary`): values seen in replies and resource listings,
  put into every `OVERRIDE_EVERY`-th valid case of a tool whose fields take them (`override`);
- sequences (`fuzzgate.learn.chains`): a reply that brings a new value (a created note's id) queues the
  steps that read, update, delete, delete again and read it after the delete, or interleave it
  with a second object; the engine sends them before its next scheduled case
  (`next_chain_case`), each a valid base case of the consumer tool with the value in;
- accepted values (`accepted`): the field values of the calls each tool accepted (else those its
  schema offers) put, as they are or changed a little, into every `AROUND_EVERY`-th case when it is
  a valid random draw (`around`), so a tool that takes only a pool of values keeps getting past its
  checks;
- duplicates: a request identical to one the tool already got since the server's state last
  changed (a successful call to a tool that is not read-only, or a restart) is not sent again
  (`seen`);
- behaviour: whether an outcome showed the tool doing something new (`after_call`'s result), which
  the scheduler weighs, and which keeps sequences from a producer coming while they find something.

Everything here is decided from the requests and replies in the order they happened, never from
timing: with one call in flight, the same seed, config and server behaviour give the same requests.
"""

from __future__ import annotations

import hashlib
import json
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import anyio.to_thread

from fuzzgate.generate.cases import ANCHORED_ORIGIN, Case
from fuzzgate.generate.dictionary import PER_CLASS, Dictionary, Entry, Held, convert, reply_held, score
from fuzzgate.generate.fields import Field, fields_of, put
from fuzzgate.learn.accepted import AROUND_EVERY, AcceptedValues
from fuzzgate.learn.behaviour import Behaviours
from fuzzgate.learn.chains import INTERLEAVED, SINGLE, Role, Verb, roles, verb_of
from fuzzgate.model.findings import Step, Surface
from fuzzgate.model.outcome import CallOutcome, OutcomeStatus
from fuzzgate.plan.safety import looks_read_only
from fuzzgate.plan.selection import ToolPlan

OVERRIDE_EVERY = 4
"""Every this-many-th case of a tool (the last of each group) takes a dictionary value when it
can: enough to reach the code behind "not found", few enough to leave the generator its stream."""
BASE_CASES = 4
"""A sequence step is the first schema-valid case among the consumer's first this many."""
MAX_CHAINS = 8
"""Sequences queued at once; a reply that would start one more starts none."""
MAX_BACKOFF = 6
"""A producer whose last n sequences showed nothing new starts one for every 2**n-th new value
(n at most this)."""
MAX_SENT = 100_000
"""Requests remembered per tool between state changes."""

_STEP_ORIGINS = ("probe:", "sequence:")
_RANDOM_ORIGINS = frozenset({"random", ANCHORED_ORIGIN})

ToolKey = tuple[Surface, str]


@dataclass(slots=True, eq=False)
class _Tool:
    plan: ToolPlan
    read_only: bool
    verb: Verb | None
    fields: list[Field]
    """Its top-level fields a value may go to (sequence steps put values there)."""
    base: Case | None = None
    base_tried: bool = False


@dataclass(slots=True, eq=False)
class _Chain:
    producer: _Tool
    arguments: dict[str, Any]
    """The request that made the first object, sent again to make the second."""
    schema_valid: bool
    index: int
    steps: deque[tuple[Role, tuple[_Tool, Field] | None]]
    values: dict[str, Entry]
    busy: bool = False
    pending: Case | None = None
    role: Role | None = None
    new: bool = False
    """Whether any step showed its tool doing something new."""
    sent: list[Step] = field(default_factory=list)
    """Its steps so far, as sent (the prefix a corpus entry made of a later step keeps)."""


@dataclass(slots=True)
class _Producer:
    values: int = 0
    """New values its replies brought that some tool takes."""
    chains: int = 0
    quiet: int = 0
    """Its sequences in a row that showed nothing new."""


def _key(plan: ToolPlan) -> ToolKey:
    return (plan.info.surface, plan.info.name)


def _digest(arguments: dict[str, Any]) -> str:
    text = json.dumps(arguments, sort_keys=True, ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:32]


def _placed(origin: str, arguments: dict[str, Any]) -> tuple[str, str] | None:
    """(pointer, value as JSON) of the field a dictionary or sequence case put a value in."""
    if origin.startswith("dictionary:"):
        pointer = origin.split(":", 1)[1]
    elif origin.startswith("sequence:") and origin.count(":") >= 3:
        pointer = origin.split(":", 3)[3]
    elif origin.startswith(("mutate:", "accepted:")) and origin.count(":") >= 2:
        pointer = origin.split(":", 2)[2]
        # Only a pointer through properties names one field (`/items` would parse as a name).
        if any(part != "properties" for part in pointer.split("/")[1::2]):
            return None
    else:
        return None
    value: Any = arguments
    names = pointer.split("/")[2::2]
    for name in names:
        if not isinstance(value, dict):
            return None
        value = value.get(name.replace("~1", "/").replace("~0", "~"))
    return (pointer, json.dumps(value)) if names else None


def _scalars(value: Any) -> list[str | int]:
    if isinstance(value, dict):
        return [s for item in value.values() for s in _scalars(item)]
    if isinstance(value, list):
        return [s for item in value for s in _scalars(item)]
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return [value]
    return []


class Feed:
    def __init__(self, plans: Sequence[ToolPlan], *, resources: Sequence[str] = (), per_class: int = PER_CLASS) -> None:
        self.dictionary = Dictionary(per_class)
        self.accepted = AcceptedValues()
        self._offered: dict[ToolKey, dict[tuple[str, ...], list[Any]]] = {}
        self.behaviours = Behaviours()
        self._tools: dict[ToolKey, _Tool] = {}
        for plan in plans:
            info = plan.info
            # Prompts and resource reads answer; they do not change the server's state.
            read_only = info.surface is not Surface.TOOL or looks_read_only(info.name, info.read_only_hint)
            verb = verb_of(info.name, info.description)
            self._tools[_key(plan)] = _Tool(plan, read_only, verb, fields_of(info.input_schema, {}, info.name))
        self._sent: dict[ToolKey, set[str]] = {}
        self._fatal: set[tuple[ToolKey, str, str]] = set()
        """(tool, field, value) whose call crashed or hung the server: each restart costs far more
        than a call, and the finding is recorded; the value is not put in that field again."""
        self._chains: deque[_Chain] = deque()
        self._producers: dict[ToolKey, _Producer] = {}
        if resources:
            self.dictionary.learn_uris("resources", list(resources))

    # --- before a call -----------------------------------------------------------------------------

    def override(self, plan: ToolPlan, case: Case) -> Case:
        """`case`, or for every `OVERRIDE_EVERY`-th valid case of the tool, the same case with one
        field holding a dictionary value (origin `dictionary:<pointer>`), when one fits and the
        result still validates."""
        if case.index % OVERRIDE_EVERY != OVERRIDE_EVERY - 1 or not case.schema_valid:
            return case
        if case.origin.startswith(_STEP_ORIGINS) or plan.generator is None:
            return case
        offered = self.dictionary.offer(
            plan.info.input_schema, case.arguments, case.index // OVERRIDE_EVERY, plan.info.name
        )
        if offered is None:
            return case
        arguments, origin = offered
        if arguments == case.arguments or _placed(origin, arguments) in self._fatal_of(plan):
            return case
        if not plan.generator.is_valid(arguments):
            return case
        return replace(case, arguments=arguments, origin=origin)

    def around(self, plan: ToolPlan, case: Case, tries: int = 4) -> Case:
        """`case`, or for every `AROUND_EVERY`-th case of the tool that is a valid random draw, the
        same case with one field holding a value the tool accepted (or its schema offers), as it is
        or changed a little (origin `accepted:<change>:<pointer>`), when the result still validates,
        is no request the tool already got, and puts no value that crashed or hung the server before
        there."""
        if case.index % AROUND_EVERY != 1 or not case.schema_valid or plan.generator is None:
            return case
        if case.origin not in _RANDOM_ORIGINS:
            # The examples, boundaries, probes and values from replies stay: only random draws give way.
            return case
        generator = plan.generator
        offered = self._offered.get(_key(plan))
        if offered is None:
            offered = self._offered[_key(plan)] = generator.offered()
        fatal = self._fatal_of(plan)
        first = case.index // AROUND_EVERY
        for k in range(first * tries, first * tries + tries):
            made = self.accepted.offer(_key(plan), plan.info.input_schema, case.arguments, k, offered)
            if made is None:
                return case
            arguments, origin = made
            if arguments == case.arguments or _placed(origin, arguments) in fatal or self.seen(plan, arguments):
                continue
            if generator.is_valid(arguments):
                return replace(case, arguments=arguments, origin=origin)
        return case

    def _fatal_of(self, plan: ToolPlan) -> set[tuple[str, str]]:
        key = _key(plan)
        return {(pointer, value) for tool, pointer, value in self._fatal if tool == key}

    def chain_prefix(self, case: Case) -> tuple[Step, ...]:
        """For a sequence step in flight, the steps its sequence sent before it; else nothing."""
        chain = next((c for c in self._chains if c.pending is case), None)
        return tuple(chain.sent) if chain is not None else ()

    def fatal(self, plan: ToolPlan, case: Case) -> bool:
        """Whether `case` puts into a field the value that crashed or hung the server before."""
        placed = _placed(case.origin, case.arguments)
        return placed is not None and placed in self._fatal_of(plan)

    def seen(self, plan: ToolPlan, arguments: dict[str, Any]) -> bool:
        """Whether the tool already got exactly this request since the server's state last changed."""
        return _digest(arguments) in self._sent.get(_key(plan), ())

    async def next_chain_case(self) -> tuple[ToolPlan, Case] | None:
        """The next step of a queued sequence, as a case of its tool; None when no sequence has a
        step ready (each has at most one step in flight, the next waiting for its reply)."""
        for chain in list(self._chains):
            if chain.busy:
                continue
            chain.busy = True
            made = None
            try:
                made = await self._step_of(chain)
            finally:
                if made is None:
                    chain.busy = False
            if made is not None:
                return made
            self._finish(chain)
        return None

    # --- after a call -----------------------------------------------------------------------------

    def record_sent(self, plan: ToolPlan, case: Case, outcome: CallOutcome) -> None:
        """What the next pick must know of a call at once, before the rest is learnt from it
        (`after_call`): its request was sent to the server in its present state (`seen`), unless
        the tool did something that may change that state; and the value that crashed or hung the
        server (`fatal`)."""
        key = _key(plan)
        tool = self._tools.get(key)
        if outcome.status is OutcomeStatus.OK and (tool is None or not tool.read_only):
            self._sent.clear()
        else:
            requests = self._sent.setdefault(key, set())
            if len(requests) >= MAX_SENT:
                requests.clear()
            requests.add(_digest(case.arguments))
        placed = _placed(case.origin, case.arguments)
        if outcome.status in (OutcomeStatus.CLOSED, OutcomeStatus.TIMEOUT) and placed is not None:
            self._fatal.add((key, *placed))

    def after_call(
        self,
        plan: ToolPlan,
        case: Case,
        outcome: CallOutcome,
        sent: dict[str, Any] | None = None,
        step: Step | None = None,
        found: Sequence[Held] | None = None,
        *,
        recorded: bool = False,
    ) -> bool:
        """Learn from a call that went out as `case` (`sent`: its arguments as sent, probes placed
        in this server's workspace; `step`: the call as the history records it; `found`: what its reply
        holds, when the caller walked it already, `reply_held`; `recorded`: `record_sent` was called
        for it already, when it went out). Returns whether its outcome showed the tool doing
        something it had not done before."""
        key = _key(plan)
        tool = self._tools.get(key)
        new = self.behaviours.new(key, outcome, case.arguments)
        learned = 0
        # Only from results: an error reply is mostly the server's words about what was wrong (a
        # validation message's `repo_path  Field required` made `Field` a repository path).
        if outcome.status is OutcomeStatus.OK:
            echoes = [*_scalars(case.arguments), *_scalars(sent or {})]
            if found is None:
                found = reply_held(plan.info.name, outcome.payload)
            learned = self.dictionary.keep_held(plan.info.name, found, sent=echoes)
            if case.schema_valid and not case.origin.startswith("probe:"):
                self.accepted.learn(key, plan.info.input_schema, case.arguments)
        if not recorded:
            self.record_sent(plan, case, outcome)
        chain = next((c for c in self._chains if c.pending is case), None)
        # A sequence's own steps start no sequence (the second object of an interleaving would).
        produced = learned and outcome.status is OutcomeStatus.OK and not case.origin.startswith("sequence:")
        if chain is not None:
            if step is not None:
                chain.sent.append(step)
            self._stepped(chain, new, outcome)
        elif tool is not None and produced:
            self._start(tool, case, step)
        return new

    def restarted(self) -> None:
        """The server was restarted: its state is new, and sequences on the old one are void."""
        self._sent.clear()
        self._chains.clear()

    # --- internals --------------------------------------------------------------------------------

    def _consumers(self, producer: _Tool, entry: Entry) -> dict[Verb, list[tuple[_Tool, Field]]]:
        """The tools that take `entry`, by what they do, best fits only, in plan order."""
        found: dict[Verb, list[tuple[int, _Tool, Field]]] = {}
        for tool in self._tools.values():
            info = tool.plan.info
            if tool is producer or info.surface is not Surface.TOOL or tool.verb in (None, Verb.CREATE):
                continue
            best: tuple[int, Field] | None = None
            for candidate in tool.fields:
                fit = score(candidate, entry)
                # A bare class match counts only where neither side names its entity.
                if fit == 1 and entry.hints and candidate.hints:
                    fit = 0
                if fit and convert(candidate, entry) is not None and (best is None or fit > best[0]):
                    best = (fit, candidate)
            if best is not None and tool.verb is not None:
                found.setdefault(tool.verb, []).append((best[0], tool, best[1]))
        out: dict[Verb, list[tuple[_Tool, Field]]] = {}
        for verb, ranked in found.items():
            top = max(fit for fit, _, _ in ranked)
            out[verb] = [(tool, f) for fit, tool, f in ranked if fit == top]
        return out

    def _start(self, producer: _Tool, case: Case, step: Step | None = None) -> None:
        """Queue a sequence for the first new value of this reply that some tool takes."""
        stats = self._producers.setdefault(_key(producer.plan), _Producer())
        for entry in self.dictionary.fresh:
            consumers = self._consumers(producer, entry)
            if not consumers:
                continue
            stats.values += 1
            if stats.quiet and stats.values % (2 ** min(stats.quiet, MAX_BACKOFF)):
                return
            if len(self._chains) >= MAX_CHAINS:
                return
            # Every other sequence interleaves a second object, when the producer can make one.
            template = INTERLEAVED if stats.chains % 2 == 1 and not producer.read_only else SINGLE
            planned = roles(template, consumers) or roles(SINGLE, consumers)
            if not planned:
                return
            n = stats.chains
            stats.chains += 1
            steps: deque[tuple[Role, tuple[_Tool, Field] | None]] = deque()
            for role in planned:
                choices = consumers.get(role.verb)
                steps.append((role, choices[n % len(choices)] if choices else None))
            chain = _Chain(producer, dict(case.arguments), case.schema_valid, case.index, steps, {"a": entry})
            if step is not None:
                chain.sent.append(step)
            self._chains.append(chain)
            return

    async def _step_of(self, chain: _Chain) -> tuple[ToolPlan, Case] | None:
        while chain.steps:
            role, target = chain.steps.popleft()
            if role.verb is Verb.CREATE:
                tool, arguments, valid, index = chain.producer, chain.arguments, chain.schema_valid, chain.index
                origin = f"sequence:{role.verb}:{role.label}"
            else:
                value = chain.values.get(role.target)
                if target is None or value is None:
                    continue
                tool, place = target
                base = await self._base(tool)
                converted = convert(place, value)
                if base is None or converted is None:
                    continue
                arguments = put(base.arguments, place.path, converted)
                if (_key(tool.plan), place.pointer, json.dumps(converted)) in self._fatal:
                    continue
                generator = tool.plan.generator
                valid = generator is not None and generator.is_valid(arguments)
                index = base.index
                origin = f"sequence:{role.verb}:{role.label}:{place.pointer}"
            if self.seen(tool.plan, arguments):
                continue
            case = Case(index=index, arguments=arguments, schema_valid=valid, origin=origin)
            chain.pending, chain.role = case, role
            return tool.plan, case
        return None

    async def _base(self, tool: _Tool) -> Case | None:
        """The tool's first schema-valid case among its first `BASE_CASES` (generated off the loop)."""
        if tool.base is not None or tool.base_tried:
            return tool.base
        tool.base_tried = True
        for index in range(BASE_CASES):
            case = await anyio.to_thread.run_sync(tool.plan.regular, index, abandon_on_cancel=True)
            if case is not None and case.schema_valid and not case.origin.startswith(_STEP_ORIGINS):
                tool.base = case
                break
        return tool.base

    def _stepped(self, chain: _Chain, new: bool, outcome: CallOutcome) -> None:
        role = chain.role
        chain.pending, chain.role, chain.busy = None, None, False
        chain.new = chain.new or new
        if role is not None and role.verb is Verb.CREATE:
            # The second object: a value this reply brought, of the first object's class.
            first = chain.values["a"]
            second = next(
                (e for e in self.dictionary.fresh if e.value_class is first.value_class and e.key == first.key), None
            )
            if outcome.status is not OutcomeStatus.OK or second is None:
                chain.steps.clear()
            else:
                chain.values["b"] = second
        if not chain.steps:
            self._finish(chain)

    def _finish(self, chain: _Chain) -> None:
        if chain in self._chains:
            self._chains.remove(chain)
            stats = self._producers.setdefault(_key(chain.producer.plan), _Producer())
            stats.quiet = 0 if chain.new else stats.quiet + 1
