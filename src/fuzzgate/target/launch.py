"""How a server fuzzgate starts is launched: its command line and environment (`launch_spec`), and
what one start prepares before the process exists (`prepare_start`: the layer of the scope and the
jail around the command, the SSRF listener's log, the coverage collector's channel).

Kept apart from `connection.py`, which speaks MCP through the SDK: the run's first server is
prepared and started here before fuzzgate has imported the SDK (`head_start.py`).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fuzzgate.config.views import ServerSettings
from fuzzgate.coverage.channel import CoverageChannel
from fuzzgate.coverage.plan import CollectorPlan, plan_collector
from fuzzgate.sandbox.owned_process import LaunchSpec, child_environment

if TYPE_CHECKING:
    from fuzzgate.sandbox.containment import Containment
    from fuzzgate.sandbox.listener import ListenerLog
    from fuzzgate.sandbox.workspace import Layer


def launch_spec(config: ServerSettings, extra_env: Mapping[str, str]) -> LaunchSpec:
    """How to start the target's server: its command line, environment (`extra_env`, then the
    user's `env`) and working directory. The one place that builds them, for a stdio server and for
    the command serving an HTTP target alike."""
    target = config.target
    assert target.command is not None
    return LaunchSpec(
        command=target.command,
        args=target.args,
        env=child_environment({**extra_env, **target.env}),
        cwd=target.cwd,
    )


def missing(spec: LaunchSpec) -> bool:
    """Whether `spec.command` names no program, as the process would look it up (PATH from its
    environment; a path relative to its working directory)."""
    command = spec.command
    if "/" in command:
        path = Path(command) if Path(command).is_absolute() or spec.cwd is None else Path(spec.cwd) / command
        return not path.exists()
    return shutil.which(command, path=spec.env.get("PATH", os.defpath)) is None


@dataclass(slots=True, eq=False)
class PreparedStart:
    """What one server start needs before its process exists. `spec` is None when the server starts
    as `launch_spec` says, unchanged (no containment, no collector). `close` (once the server and
    everything it started are gone) releases the channel, the listener's log and the layer."""

    plan: CollectorPlan
    spec: LaunchSpec | None = None
    layer: Layer | None = None
    listener: ListenerLog | None = None
    channel: CoverageChannel | None = None

    def close(self) -> None:
        if self.channel is not None:
            self.channel.close()
        if self.listener is not None:
            self.listener.close()
        if self.layer is not None:
            self.layer.close()


def prepare_start(
    config: ServerSettings, extra_env: Mapping[str, str], containment: Containment | None
) -> PreparedStart:
    """Prepare one start of `config`'s server: a fresh layer of `containment` (and its jail) when
    there is one and fuzzgate starts the server, and the collector's channel when the plan injects it.
    The caller checks first that the command exists (`missing`)."""
    prepared = PreparedStart(plan_collector(config.target))
    if containment is not None and config.target.command is not None:
        prepared.spec, prepared.layer, prepared.listener = containment.prepare(launch_spec(config, extra_env))
    try:
        if prepared.plan.inject:
            # After `prepare`: the measured directories are mapped to the layer, and the
            # collector's own paths (fuzzgate's installation) are not.
            layer = prepared.layer
            prepared.channel = CoverageChannel(prepared.plan, map_path=layer.map_path if layer is not None else None)
            prepared.spec = prepared.channel.apply(prepared.spec or launch_spec(config, extra_env))
    except BaseException:
        prepared.close()
        raise
    return prepared
