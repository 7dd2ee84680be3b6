"""A server's scope: the directories it may read and write, configured (`[target] scope`) or
inferred from its working directory and the arguments that name directories, resolved, with only
the outermost of nested ones kept."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from fuzzgate.config.model import TargetConfig


def infer_scope(target: TargetConfig) -> tuple[Path, ...]:
    """`target.scope` when configured; else the server's working directory and every argument
    that names an existing directory (`/x`, `--root=/x`, or a relative path, taken from the
    working directory), resolved, without duplicates, a directory inside another kept only as
    that ancestor."""
    if target.scope:
        return normalize_scope(target.scope)
    cwd = (target.cwd or Path.cwd()).absolute()
    found = [cwd]
    for arg in target.args:
        value = arg.split("=", 1)[1] if arg.startswith("-") and "=" in arg else arg
        if not value or value.startswith("-") or "\0" in value:
            continue
        path = Path(value) if os.path.isabs(value) else cwd / value
        try:
            if path.is_dir():
                found.append(path)
        except OSError:
            continue
    return normalize_scope(found)


def normalize_scope(dirs: Iterable[Path]) -> tuple[Path, ...]:
    """Resolved, first occurrence kept, and only the outermost of nested directories."""
    resolved: list[Path] = []
    for directory in dirs:
        path = directory.resolve()
        if path not in resolved:
            resolved.append(path)
    return tuple(p for p in resolved if not any(o != p and p.is_relative_to(o) for o in resolved))


def mapped_name(index: int, label: str) -> str:
    """The name scope dir number `index` has in a layer (`<layer>/outside/scope/<name>`), from its
    label (`scope_labels`)."""
    return f"{index}-{label}"


def scope_labels(scope: Sequence[Path]) -> tuple[str, ...]:
    """The default labels of scope dirs in a layer: their own names."""
    return tuple(directory.name or "root" for directory in scope)
