"""One repro sent to a fresh server: its prefix in order, then its failing call, and whether the
same bug showed again (`replay_once`). Verification's every replay and shrinking try, `fuzzgate
replay`, `baseline prune` and a run's baseline entries go through it; the run's selection
(`plan.selection.Admission`) is asked before anything is sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from typing import Any

from fuzzgate.check import Observation, Oracles
from fuzzgate.config.model import TargetConfig
from fuzzgate.config.views import ServerSettings
from fuzzgate.engine.settings import VerifySettings
from fuzzgate.engine.spare import Connector
from fuzzgate.engine.steps import StepResult, observe, send_step
from fuzzgate.generate.dictionary import reply_values
from fuzzgate.model.commands import subject_label
from fuzzgate.model.errors import UsageError
from fuzzgate.model.findings import Finding, Repro, Step, Surface
from fuzzgate.model.outcome import CallOutcome, OutcomeStatus
from fuzzgate.plan.selection import Admission, NotSelected
from fuzzgate.target.call import AFTER_REPLY_S, WATCHED_AFTER_REPLY, follow_reply
from fuzzgate.target.connection import Connection, open_connection
from fuzzgate.target.discover import discover
from fuzzgate.triage.finding_set import fingerprint, subject
from fuzzgate.triage.sequence import rebind


def connect(server: ServerSettings, extra_env: Mapping[str, str]) -> AbstractAsyncContextManager[Connection]:
    """The real connector: start the stdio server or reach the HTTP one."""
    return open_connection(server, extra_env=extra_env)


async def replay_once(
    settings: VerifySettings,
    oracles: Oracles,
    finding: Finding,
    extra_env: Mapping[str, str],
    connector: Connector = connect,
    repro: Repro | None = None,
    *,
    admission: Admission | None = None,
    outcomes: list[CallOutcome] | None = None,
    watch: bool = False,
    listed_only: bool = False,
    unlisted: list[bool] | None = None,
) -> tuple[bool, list[Observation]]:
    """Send the repro (`finding.repro` unless another is given) to a fresh server: the calls of its
    prefix in order, then the failing call. Whether the same bug showed again, and what was seen.
    A bug that shows during the prefix is not this finding's: the server must survive the prefix.

    Nothing is sent when `admission` (without one: the server's own listing, read first) refuses
    a call of the repro: raises `NotSelected`. The failing call's outcome is appended to `outcomes`.
    The server is watched for a death right after the failing call's reply when the finding is a
    crash, or with `watch` (a call replayed for whatever it shows). Whether the server left the
    failing call's tool or prompt out of its listing is appended to `unlisted`."""
    repro = repro if repro is not None else finding.repro
    calls = repro_calls(replace(finding, repro=repro))
    if admission is not None:
        admission.check(calls)
    async with connector(settings.server, extra_env) as connection:
        if admission is None:
            admission = Admission.of(settings.selection, await discover(connection, settings.target.timeout_ms / 1000))
        refused = admission.refusal(calls)
        missing = listed_by_name(repro.surface) and (repro.surface, finding.tool) not in admission.listed
        if unlisted is not None:
            unlisted.append(missing)
        stop = listed_only and missing
        # A server stopped for its memory may be stopped right after its reply, as a crash may die then.
        watched = watch or finding.kind in WATCHED_AFTER_REPLY
        result = (
            None
            if refused is not None or stop
            else await _send_repro(connection, settings.target, finding, repro, watched)
        )
    # Raised once the connection is closed, so it is not wrapped in its task group's exceptions.
    if refused is not None:
        raise NotSelected(refused)
    if stop:
        raise NotListed(
            repro.surface, finding.tool, sorted(name for surface, name in admission.listed if surface is repro.surface)
        )
    if result is None:
        return False, []
    if outcomes is not None:
        outcomes.append(result.outcome)
    observations = observe(oracles, finding.tool, repro.schema_valid, result, surface=repro.surface)
    same = any(
        fingerprint(o.kind, *subject(o, finding.tool, repro.surface), o.signature) == finding.fingerprint
        for o in observations
    )
    return same, observations


def listed_by_name(surface: Surface) -> bool:
    """Whether a listing names every call of `surface` as its findings do: a tool or a prompt by
    its name. A resource read through a template is named by its URI, which no listing holds."""
    return surface in (Surface.TOOL, Surface.PROMPT)


class NotListed(UsageError):
    """A call to replay names a tool (or resource, prompt) the server does not list; nothing was sent."""

    title = "not sent"

    def __init__(self, surface: Surface, name: str, listed: list[str]) -> None:
        shown = ", ".join(listed[:20]) + (f" and {len(listed) - 20} more" if len(listed) > 20 else "")
        super().__init__(
            f"the server lists no {subject_label(surface, name)}",
            hint=f"it lists: {shown}" if listed else "it lists none: `fuzzgate tools` shows what it offers",
        )


async def _send_repro(
    connection: Connection, target: TargetConfig, finding: Finding, repro: Repro, watch: bool
) -> StepResult | None:
    """The repro's prefix, then its failing call (whose result is returned; with `watch`, watched
    for a death right after its reply, `call.follow_reply`); None when the server did not survive
    the prefix."""
    # What the recorded run's replies brought, mapped to what this server's bring in their place:
    # a fresh server hands out other ids, and a use after delete must delete and use its own.
    bound: dict[Any, Any] = {}
    for step in repro.prefix:
        arguments = rebind(step.arguments, bound)
        done = await send_step(connection, target, step.tool, arguments, repro.workspace, step.surface)
        connection.history.append(Step(step.tool, done.arguments, step.schema_valid, step.surface))
        if not connection.alive():
            return None
        if step.produced and done.outcome.status is OutcomeStatus.OK:
            now = reply_values(step.tool, done.outcome.payload)
            bound.update((old, new) for old, new in zip(step.produced, now, strict=False) if old != new)
    done = await send_step(
        connection, target, finding.tool, rebind(repro.arguments, bound), repro.workspace, repro.surface
    )
    if not watch:
        return done
    # A crash seen during fuzzing may have been the server dying right after answering: a replay
    # sends no request after the failing call, so it watches for that death itself.
    return replace(done, outcome=await follow_reply(connection, done.outcome, done.stderr_mark, wait_s=AFTER_REPLY_S))


def repro_calls(finding: Finding) -> list[tuple[Surface, str]]:
    """The calls a finding's repro sends, in order: what the selection must admit."""
    repro = finding.repro
    return [(step.surface, step.tool) for step in repro.prefix] + [(repro.surface, finding.tool)]
