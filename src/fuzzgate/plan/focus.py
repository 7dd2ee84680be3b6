"""Spend the budget where the change is: the tools whose calls reach a file the pull request changed
get most of the fuzzing time, as ClusterFuzzLite fuzzes the targets a change affects.

What a tool reaches comes from the corpus: each entry records the files of the server's own code its
call ran (`CorpusEntry.files`, from the coverage collector), so the union over a tool's entries is
what earlier runs saw it reach. The changed files come from `[fuzzgate] changed_files` (a list the
workflow writes, e.g. `git diff --name-only BASE...HEAD`) or, with `--base`, from comparing the two
checkouts file by file.

- A tool with no coverage data (no entry recording files: a first run, a server without the
  collector) counts as affected: nothing says the change misses it.
- When no tool's recorded files match a changed file, nothing is favoured: every tool gets its
  share, as without a change list.
- Otherwise the affected tools share `FAVOURED_SHARE` of the fuzzing time and the others the rest
  (`ToolPlan.weight`, which the scheduler divides the time it charges by).

A coverage name is a path relative to the directory it was measured under (`pkg/mod.py`), a changed
path one relative to the repository root (`src/pkg/mod.py`): they match when one ends with the
other at a path boundary.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fuzzgate.model.errors import UsageError
from fuzzgate.model.files import read_regular

FAVOURED_SHARE = 0.75
"""The share of the fuzzing time the affected tools get together, when some are and some are not."""
MAX_COMPARED_FILES = 20000
"""Comparing two checkouts stops past this many files on either side: no focus then, and a note."""
_NOT_COMPARED = frozenset(
    {".git", "node_modules", ".venv", "venv", "__pycache__", ".fuzzgate", ".mypy_cache", ".pytest_cache", ".tox"}
)
_MAX_NAMED = 5

Subject = tuple[str, str]
"""A tool, prompt or resource: its surface (`tool`, ...) and name."""


@dataclass(frozen=True, slots=True)
class Changes:
    """The paths a change touched (relative to the repository root, POSIX), or why none are known."""

    paths: tuple[str, ...] = ()
    source: str = ""
    """Where they came from, in words (`changed_files = x.txt`, `comparing the base checkout`)."""
    unknown: str | None = None
    """Why the changed files are not known (no focus then), for a note."""


@dataclass(frozen=True, slots=True)
class Focus:
    weights: dict[Subject, float]
    """A weight per subject (surface, name) above 1 for the favoured ones; empty: no focus."""
    note: str | None
    """What was favoured and why, for the report; None when there was nothing to decide."""


def read_changes(path: Path) -> Changes:
    """The list in `path`: one path per line, blank lines and `#` comments ignored. Raises
    `UsageError` (exit 2) when it cannot be read."""
    try:
        text = read_regular(path).decode("utf-8", errors="replace")
    except OSError as exc:
        raise UsageError(f"--changed-files: cannot read {path}: {exc.strerror or exc}") from None
    paths = [line.strip().removeprefix("./") for line in text.splitlines()]
    return Changes(tuple(p for p in paths if p and not p.startswith("#")), f"changed_files {path}")


def compare_checkouts(head: Path, base: Path) -> Changes:
    """The files that differ between the two checkouts (added, removed or changed), relative to
    `head`; either nested in the other is left out of the other's walk."""
    try:
        ours = _files(head, skip=base)
        theirs = _files(base, skip=head)
    except _TooMany:
        return Changes(unknown=f"more than {MAX_COMPARED_FILES} files to compare between the checkouts")
    changed = sorted((ours.keys() ^ theirs.keys()) | {p for p in ours.keys() & theirs.keys() if ours[p] != theirs[p]})
    return Changes(tuple(changed), "comparing the head with the base checkout")


class _TooMany(Exception):
    pass


def _files(root: Path, *, skip: Path) -> dict[str, str]:
    """Each regular file under `root`, by relative POSIX path, with a digest of its content."""
    found: dict[str, str] = {}
    skip_text = str(skip.resolve())
    for directory, dirs, files in os.walk(root.resolve()):
        dirs[:] = sorted(d for d in dirs if d not in _NOT_COMPARED and os.path.join(directory, d) != skip_text)
        for name in files:
            path = os.path.join(directory, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            if len(found) >= MAX_COMPARED_FILES:
                raise _TooMany
            found[os.path.relpath(path, root.resolve()).replace(os.sep, "/")] = _digest(path)
    return found


def _digest(path: str) -> str:
    hasher = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 16), b""):
                hasher.update(block)
    except OSError:
        return "unreadable"
    return hasher.hexdigest()


def reached_files(entries: Iterable[tuple[Subject, Sequence[str]]]) -> dict[Subject, set[str]]:
    """What each subject's corpus entries reached: (subject, files) pairs folded by subject."""
    reached: dict[Subject, set[str]] = {}
    for key, files in entries:
        if files:
            reached.setdefault(key, set()).update(files)
    return reached


def matches(covered: str, changed: str) -> bool:
    """Whether a measured file's name and a changed path name the same file (one ends with the other)."""
    return covered == changed or changed.endswith("/" + covered) or covered.endswith("/" + changed)


def focus(subjects: Sequence[tuple[Subject, str]], reached: Mapping[Subject, set[str]], changes: Changes) -> Focus:
    """The weights for `subjects` (subject, label) given what each reached and what changed."""
    if changes.unknown is not None:
        return Focus({}, f"budget: every tool got its share (the changed files are not known: {changes.unknown})")
    if not changes.paths:
        return Focus({}, f"budget: every tool got its share (no file changed, by {changes.source})")
    why: dict[Subject, str] = {}
    matched = False
    for key, label in subjects:
        files = reached.get(key)
        if not files:
            why[key] = f"{label} (no coverage data)"
            continue
        hit = sorted(f for f in files if any(matches(f, c) for c in changes.paths))
        if hit:
            matched = True
            more = f" and {len(hit) - 1} more" if len(hit) > 1 else ""
            why[key] = f"{label} (reaches {hit[0]}{more})"
    if not matched:
        return Focus(
            {}, f"budget: every tool got its share (no tool's calls reached a changed file, by {changes.source})"
        )
    if len(why) == len(subjects):
        return Focus({}, "budget: every tool got its share (each reaches a changed file or has no coverage data)")
    others = len(subjects) - len(why)
    weight = FAVOURED_SHARE / (1 - FAVOURED_SHARE) * others / len(why)
    named = sorted(why.values())
    shown = "; ".join(named[:_MAX_NAMED]) + (f"; and {len(named) - _MAX_NAMED} more" if len(named) > _MAX_NAMED else "")
    note = (
        f"budget: {len(why)} of {len(subjects)} tools favoured ({FAVOURED_SHARE:.0%} of the fuzzing time) as their "
        f"calls reach files the change touched, by {changes.source}: {shown}"
    )
    return Focus({key: max(1.0, weight) for key in why}, note)
