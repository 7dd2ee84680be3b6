"""The allowed directory of the benchmark servers that take `--root DIR`, and the one check that
keeps a path inside it.

A path is inside the root when it resolves (symbolic links and `..` followed) to the root or below
it; the buggy tools skip this check, the clean ones reject anything else with a tool error.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def root_from_argv(description: str | None) -> Path:
    """`--root DIR` from the command line, resolved; the directory must exist."""
    parser = argparse.ArgumentParser(description=description.splitlines()[0] if description else None)
    parser.add_argument("--root", type=Path, required=True, help="the only directory the server may touch")
    root: Path = parser.parse_args().root.resolve()
    if not root.is_dir():
        parser.error(f"--root {root} is not a directory")
    return root


def is_inside(root: Path, path: Path) -> bool:
    """Whether `path` resolves to `root` or below it. Raises ValueError for a NUL in the path."""
    return path.resolve().is_relative_to(root)


def inside(root: Path, relative: str) -> Path:
    """`root / relative` when it stays inside `root`; ValueError otherwise (a NUL byte too)."""
    path = root / relative
    if not is_inside(root, path):
        raise ValueError(f"{relative!r} is outside the allowed directory")
    return path
