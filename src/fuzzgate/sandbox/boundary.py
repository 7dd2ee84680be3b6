"""The scope's boundary, laid out so that an escape across it lands in watched territory.

A check that is almost right lets a server out only at the edge of its scope; each edge gets
canaries in the watched directory (`outside`) of every layer:

- **prefix siblings**: beside every scope dir `scope/<i>-<name>`, canary directories whose names
  extend it (`<i>-<name>-backup`, `<i>-<name>2`, `<i>-<name>_old`, `<i>-<name>.bak`): a check
  `path.startswith(allowed)` lets a path into them through;
- **planted links**: in every scope dir, a symbolic link to a canary directory outside
  (`LINKED_DIR`) and one to a canary file outside (`LINKED_FILE`), under unremarkable names
  (`archive`, `notes.txt`, or the first of `archive-1`, ... the user's scope does not hold): a server
  that resolves `..` but follows links reads or writes there through them;
- **the user's own links**: a link in a scope dir whose target lies outside every scope dir (an
  absolute link to the user's files, a relative one climbing out) is redirected in each layer to a
  stand-in canary under `outside/links/<n>-<name>` (a canary directory when the target was a
  directory, a canary file when it was a file, a name not yet there when it dangled), so what goes
  through it is watched and never reaches the original; an absolute link to a path in the scope
  leads to the layer's own copy of that path. Links in dependency dirs are left as they are
  (`_scope_copy.DEPENDENCY_DIRS`), and at most `MAX_REDIRECTS` links are redirected;
- **listings**: every canary directory, and the watched directory itself, holds a file named by a
  unique token (`Canary.names`) that nothing fuzzgate sends holds: a reply naming it listed,
  globbed or searched outside the scope.

Where the links go depends on the layer (`plant_links`): into the layer's copy of a scope dir
without the sandbox, into the overlay's upper dir with it (an upper entry hides the lower one of
the same name, so the user's link is never seen in the jail).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from fuzzgate.sandbox._scope_copy import DEPENDENCY_DIRS, MAX_SCOPE_FILES
from fuzzgate.sandbox.canaries import (
    CANARY_FILE,
    Canary,
    content_marker,
    name_token,
    plant_canary_dir,
    plant_canary_file,
)
from fuzzgate.sandbox.scope import mapped_name, scope_labels

SIBLING_SUFFIXES = ("-backup", "2", "_old", ".bak")
LINKED_DIR = "fuzzgate-linked-dir"
LINKED_FILE = "fuzzgate-linked.txt"
STAND_INS = "links"
MAX_REDIRECTS = 64
_DIR_LINK = "archive"
_FILE_LINK = "notes.txt"


@dataclass(frozen=True, slots=True)
class Redirect:
    """A link of the user's scope that each layer points elsewhere."""

    scope_index: int
    relpath: str
    """The link, relative to its scope dir."""
    target: str
    """The link's own target."""
    stand_in: Canary | None
    """The stand-in canary it leads to; None for an absolute link into the scope, which leads to
    the layer's copy of `target`."""
    shape: str = "file"
    """What the stand-in is: `dir`, `file`, or `missing` (the link dangled: nothing is there)."""


@dataclass(frozen=True, slots=True)
class Boundary:
    """The boundary of a workspace's scope, the same in each of its layers (paths relative to a
    layer's `outside`)."""

    scope_dirs: tuple[str, ...]
    """Each scope dir, `scope/<i>-<name>`."""
    siblings: tuple[tuple[str, ...], ...]
    """Each scope dir's prefix siblings, in `SIBLING_SUFFIXES` order."""
    dir_link: str
    """The name of the link to `LINKED_DIR` in every scope dir."""
    file_link: str
    """The name of the link to `LINKED_FILE` in every scope dir."""
    canary_file: str
    """The file every canary directory (siblings, `LINKED_DIR`) holds."""
    canaries: tuple[Canary, ...]
    redirects: tuple[Redirect, ...]


def plan_boundary(
    scope: Sequence[Path], token: str, *, skip: tuple[str, ...] = (), labels: Sequence[str] = ()
) -> Boundary:
    """The boundary of `scope` (normalized): names not taken in it, and the links it holds that
    lead outside it (or into it by an absolute path). `skip`: paths never read (the workspace);
    `labels`: the names of the scope dirs in a layer (`scope.scope_labels` unless given)."""
    named = tuple(labels) if len(labels) == len(scope) else scope_labels(scope)
    dirs = tuple(f"scope/{mapped_name(i, label)}" for i, label in enumerate(named))
    siblings = tuple(tuple(d + suffix for suffix in SIBLING_SUFFIXES) for d in dirs)
    dir_link, file_link = _free_name(scope, _DIR_LINK), _free_name(scope, _FILE_LINK)
    listing = name_token(token, ".")
    canaries = [Canary("name", listing, (), (listing,))]
    canaries += [_dir_canary("sibling", sibling, token) for group in siblings for sibling in group]
    canaries.append(_dir_canary("linked", LINKED_DIR, token, (dir_link,)))
    canaries.append(Canary("linked", LINKED_FILE, (content_marker(token, LINKED_FILE),), (), (file_link,)))
    redirects = _redirects(scope, token, skip)
    canaries += [r.stand_in for r in redirects if r.stand_in is not None]
    return Boundary(dirs, siblings, dir_link, file_link, CANARY_FILE, tuple(canaries), tuple(redirects))


def plant_boundary(template: Path, boundary: Boundary, token: str) -> None:
    """Write the boundary's canaries into the template every layer copies."""
    (template / STAND_INS).mkdir(exist_ok=True)
    shapes = {r.stand_in.relpath: r.shape for r in boundary.redirects if r.stand_in is not None}
    for canary in boundary.canaries:
        path = template / canary.relpath
        if canary.kind == "name":
            path.write_text("fuzzgate canary\n", encoding="utf-8")
        elif shapes.get(canary.relpath) == "missing":
            continue
        elif canary.names:
            plant_canary_dir(path, token, canary.relpath)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            plant_canary_file(path, token, canary.relpath)


def plant_links(
    boundary: Boundary,
    outside: Path,
    scope: Sequence[Path],
    base_of: Callable[[int], Path],
    map_path: Callable[[str], str | None],
    *,
    isolated: bool,
) -> None:
    """One layer's links: the planted ones in every scope dir, and the user's links redirected.
    `base_of(i)` is where scope dir `i`'s entries go (its copy, or the overlay's upper dir);
    `isolated`: that dir is an upper dir, whose missing parents are made like the originals'."""
    for index in range(len(scope)):
        base = base_of(index)
        base.mkdir(parents=True, exist_ok=True)
        os.symlink(outside / LINKED_DIR, base / boundary.dir_link)
        os.symlink(outside / LINKED_FILE, base / boundary.file_link)
    for redirect in boundary.redirects:
        stand_in = redirect.stand_in
        target = str(outside / stand_in.relpath) if stand_in is not None else map_path(redirect.target)
        if target is None:
            continue
        base = base_of(redirect.scope_index)
        place = base / redirect.relpath
        if isolated:
            _make_parents(scope[redirect.scope_index], base, Path(redirect.relpath).parent)
        elif place.parent.is_symlink() or not place.parent.is_dir():
            continue
        if os.path.lexists(place):
            os.unlink(place)
        os.symlink(target, place)


def _make_parents(original: Path, base: Path, relative: Path) -> None:
    """`base/relative`, each missing dir made with the mode of the original's."""
    current, source = base, original
    for part in relative.parts:
        current, source = current / part, source / part
        if not current.is_dir():
            current.mkdir()
            shutil.copystat(source, current, follow_symlinks=False)


def _free_name(scope: Sequence[Path], name: str) -> str:
    """`name`, or the first of `stem-1.suffix`, ... that no scope dir holds at its top."""
    stem, dot, suffix = name.partition(".")
    candidate, number = name, 0
    while any(os.path.lexists(directory / candidate) for directory in scope):
        number += 1
        candidate = f"{stem}-{number}{dot}{suffix}"
    return candidate


def _dir_canary(kind: str, relpath: str, token: str, aliases: tuple[str, ...] = ()) -> Canary:
    return Canary(kind, relpath, (content_marker(token, relpath),), (name_token(token, relpath),), aliases)


def _redirects(scope: Sequence[Path], token: str, skip: tuple[str, ...]) -> list[Redirect]:
    """The links of `scope` to redirect, at most `MAX_REDIRECTS`."""
    found: list[Redirect] = []
    for index, top in enumerate(scope):
        for link in _links_in(top, skip):
            try:
                literal = os.readlink(link)
                real = Path(os.path.realpath(link))
            except (OSError, ValueError):
                continue
            relpath = link.relative_to(top).as_posix()
            if any(real.is_relative_to(directory) for directory in scope):
                if os.path.isabs(literal):
                    found.append(Redirect(index, relpath, literal, None))
            else:
                found.append(_stand_in(index, relpath, literal, real, len(found), token))
            if len(found) >= MAX_REDIRECTS:
                return found
    return found


def _stand_in(index: int, relpath: str, literal: str, real: Path, number: int, token: str) -> Redirect:
    name = f"{STAND_INS}/{number}-{Path(relpath).name}"
    alias = (Path(relpath).name,)
    if real.is_dir():
        return Redirect(index, relpath, literal, _dir_canary("link", name, token, alias), "dir")
    if real.exists():
        return Redirect(index, relpath, literal, Canary("link", name, (content_marker(token, name),), (), alias))
    # A dangling link: nothing is there, and a write through it creates the name.
    return Redirect(index, relpath, literal, Canary("link", name, (), (), alias), "missing")


def _links_in(top: Path, skip: tuple[str, ...]) -> list[Path]:
    """The symbolic links under `top`, not following links, nor entering dependency dirs or
    `skip`; the walk stops after `MAX_SCOPE_FILES` entries."""
    links: list[Path] = []
    stack, seen = [str(top)], 0
    while stack and seen <= MAX_SCOPE_FILES:
        try:
            it = os.scandir(stack.pop())
        except OSError:
            continue
        with it:
            for entry in it:
                seen += 1
                if seen > MAX_SCOPE_FILES:
                    break
                if entry.path in skip:
                    continue
                try:
                    if entry.is_symlink():
                        links.append(Path(entry.path))
                    elif entry.is_dir(follow_symlinks=False) and entry.name not in DEPENDENCY_DIRS:
                        stack.append(entry.path)
                except OSError:
                    continue
    links.sort()
    return links
