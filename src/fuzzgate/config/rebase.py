"""The target as started from the base revision of the repository (`--base DIR`).

The workflow checks the base out into `DIR` and installs it as it installs the head; the server is
the same target, started with every path of its command, arguments, working directory, scope,
environment and coverage sources that lies in the head's repository mapped to the same place under
`DIR`. Relative arguments need nothing: the server runs in the mapped working directory. A path
outside the repository (an interpreter, a system directory) stays as it is.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from fuzzgate.config.model import TargetConfig


def at_base(target: TargetConfig, scope: tuple[Path, ...], head: Path, base: Path) -> TargetConfig:
    """`target` started from `base` instead of the repository `head`. `scope` is the head's scope
    (configured or inferred): the base's is the same, mapped, so its layers match the head's."""
    head, base = head.resolve(), base.resolve()

    def path(value: Path) -> Path:
        resolved = value if value.is_absolute() else (target.cwd or Path.cwd()) / value
        if resolved.is_relative_to(base) or not resolved.is_relative_to(head):
            return value
        return base / resolved.relative_to(head)

    def text(value: str) -> str:
        if not os.path.isabs(value):
            return value
        return str(path(Path(value)))

    def arg(value: str) -> str:
        if value.startswith("-") and "=" in value:
            option, rest = value.split("=", 1)
            return f"{option}={text(rest)}"
        return text(value)

    def env_value(value: str) -> str:
        return os.pathsep.join(text(part) for part in value.split(os.pathsep))

    return replace(
        target,
        command=None if target.command is None else text(target.command),
        args=tuple(arg(a) for a in target.args),
        cwd=path(target.cwd or Path.cwd()),
        scope=tuple(path(d) for d in scope),
        env={key: env_value(value) for key, value in target.env.items()},
        coverage_source=tuple(text(source) for source in target.coverage_source),
    )
