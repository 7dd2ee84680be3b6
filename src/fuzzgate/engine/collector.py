"""What the coverage collector costs a run, and how the engine allows for it: the time its read of a
call's arcs may take (`COLLECT_TIMEOUT_S`), the slow or hung calls of a server it traces that are
therefore ambiguous (`under_collector`), and the replays that start servers without it
(`without_collector`)."""

from __future__ import annotations

from dataclasses import replace

from fuzzgate.check.observation import Observation
from fuzzgate.config.model import FeedbackMode
from fuzzgate.config.views import ServerSettings
from fuzzgate.engine.settings import VerifySettings
from fuzzgate.model.findings import Kind

COLLECT_TIMEOUT_S = 2.0
"""How long the coverage collector may take to hand over a call's arcs before the call counts as
showing none (a server busy with something else answers late, not never)."""


def under_collector(observation: Observation, traced: bool) -> Observation:
    """A slow or hung call of a server the coverage collector traces is ambiguous. A traced
    interpreter runs all its code slower (CPython 3.11 turns its specializing interpreter off under
    a trace function; a traceback the SDK renders with rich took 2.5-3.8 s): the call may be slow,
    or miss its timeout, only because of fuzzgate's collector. Replays start servers without it:
    such a finding that none of them shows again is dropped, not reported."""
    if traced and observation.kind in (Kind.SLOW, Kind.HANG):
        return replace(observation, ambiguous=True)
    return observation


def without_collector(settings: VerifySettings) -> VerifySettings:
    """The settings replays start servers with: a replay asks whether a bug comes back, not what code
    it reaches, so its servers start without the coverage collector (and its start-up cost)."""
    return replace(settings, server=server_without_collector(settings.server))


def server_without_collector(server: ServerSettings) -> ServerSettings:
    """`server` started without the coverage collector (`without_collector`)."""
    target = server.target
    if target.feedback is FeedbackMode.OFF:
        return server
    return replace(server, target=replace(target, feedback=FeedbackMode.BEHAVIOUR))
