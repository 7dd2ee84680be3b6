"""Small frozen views of a `Config`, one per need that several stages share, built once in `cli/`.

A stage takes the view of what it reads, never the whole `Config`, so its signature says its
inputs. A view that only one stage reads lives with that stage (`plan.selection.SelectionSettings`,
`engine.settings.EngineSettings`); here are those read by more than one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fuzzgate.config.model import Config, ProtocolMode, TargetConfig


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """What starting or reaching the server reads, and the secrets to redact in all it says.

    Read by `target.connection.open_connection` (and the in-memory connector), by
    `check.secrets.redactor_for` (the target's env, headers and URL, `expanded`, the store URL,
    `secret_patterns`) and passed by the engine to every `Connector`."""

    target: TargetConfig
    protocol: ProtocolMode
    startup_timeout_ms: int
    memory_limit: int | None
    """The most resident memory a started server's processes may hold (`sandbox.resident`)."""
    expanded: tuple[str, ...] = field(repr=False)
    """Every value a `${VAR}` of the config file expanded to: each may be a secret."""
    secret_patterns: tuple[str, ...]
    store: str | None
    """The shared store's URL, read only for the password it may hold."""

    @classmethod
    def of(cls, config: Config) -> ServerSettings:
        return cls(
            target=config.target,
            protocol=config.protocol,
            startup_timeout_ms=config.startup_timeout_ms,
            memory_limit=config.memory_limit,
            expanded=config.expanded,
            secret_patterns=config.secret_patterns,
            store=config.store,
        )
