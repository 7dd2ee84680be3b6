"""The server answered, but slower than the run's slow threshold."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from fuzzgate.check.observation import Observation
from fuzzgate.check.registry import CallContext, CheckEnv, check
from fuzzgate.model.findings import Details, Kind

_ASKED_TIME = re.compile(r"duration|delay|sleep|wait|timeout|seconds|secs|millis|_ms$|interval", re.IGNORECASE)
"""Argument names that ask a tool to take time."""


def _asks_time(name: object, value: Any) -> bool:
    """A positive number under a name like `duration` or `delay_ms`."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return number and value > 0 and bool(_ASKED_TIME.search(str(name)))


def _time_asked(arguments: Mapping[str, Any], by_default: frozenset[str] = frozenset()) -> bool:
    """The call asked for the time it took: a positive number under a name like `duration` or
    `delay_ms`, or such an argument left out whose default is one (`time_defaults`):
    server-everything's `trigger-long-running-operation` takes 10 s by design, with `duration=10`
    or without it; that is not slowness."""
    return any(_asks_time(name, value) for name, value in arguments.items()) or any(
        name not in arguments for name in by_default
    )


def time_defaults(input_schema: Mapping[str, Any]) -> frozenset[str]:
    """The top-level properties of a tool's input schema that ask for time with a positive default."""
    properties = input_schema.get("properties")
    if not isinstance(properties, Mapping):
        return frozenset()
    return frozenset(
        name
        for name, schema in properties.items()
        if isinstance(schema, Mapping) and _asks_time(name, schema.get("default"))
    )


@check(order=700)
def slow(ctx: CallContext, env: CheckEnv) -> Iterator[Observation]:
    outcome = ctx.outcome
    by_default = env.server.time_defaults.get(ctx.tool, frozenset())
    if ctx.replied and outcome.duration_s > env.slow_s and not _time_asked(ctx.arguments, by_default):
        yield Observation(
            Kind.SLOW,
            f"took {outcome.duration_s:.1f}s (slow threshold {env.slow_s:g}s)",
            (),
            Details(),
        )
