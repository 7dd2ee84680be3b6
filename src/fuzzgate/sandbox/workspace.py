"""The server's throwaway workspace: its scope, the canaries around it, and what changed outside it.

A server is given a *scope*: the directories it may read and write (`scope.infer_scope`). It never works
on the user's files themselves. Each server start gets a `Layer`, laid out as

    <root>/s<N>/outside/                       watched: canaries at the top, and
    <root>/s<N>/outside/scope/<i>-<name>/      each scope dir, as the server sees it
    <root>/s<N>/home/                          the server's HOME (not watched)
    <root>/s<N>/jail/                          the sandbox's overlay upper and work dirs (/tmp's too)

so that `..` from a scope dir lands in the watched area. With the sandbox (`isolate=True`) the
scope dirs are overlays of the originals that `jail` mounts; without it each layer holds a copy
(`_scope_copy.copy_scope`: dependency dirs such as `node_modules` and `.venv` are symlinks to the
originals there, so writes into those do reach the user's files). Around the scope, every layer
plants fresh canaries (`canaries.py`): a text file, a `.env` file and, when `git` is on PATH, a git
repository, each holding unique marker strings derived from the run's token, so that a reply or a
log quoting one shows the server read outside its scope. `Layer.snapshot` before and `Layer.changes` after a
call tell what the call created, changed or deleted outside the scope.

The root is made under `$FUZZGATE_WORKDIR`, else /var/tmp, else the system's temp dir: not under
/tmp when possible, since the sandbox gives the server a private /tmp.

A fuzzgate process killed with SIGKILL cannot remove its root: each root names its owner process,
and every new workspace first removes the roots of owners that are gone (`stale_roots.py`).
"""

from __future__ import annotations

import itertools
import os
import shutil
import stat
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fuzzgate.model.errors import TargetError
from fuzzgate.sandbox._scope_copy import MAX_SCOPE_BYTES, MAX_SCOPE_FILES, ScopeTooLarge, copy_scope, measure_scope
from fuzzgate.sandbox.boundary import plan_boundary, plant_boundary, plant_links
from fuzzgate.sandbox.canaries import Canary, plant_canaries
from fuzzgate.sandbox.relay import RelayDir
from fuzzgate.sandbox.removal import remove_tree
from fuzzgate.sandbox.scope import mapped_name, normalize_scope, scope_labels
from fuzzgate.sandbox.stale_roots import sweep_stale, write_owner
from fuzzgate.sandbox.watch import open_watch

WORKDIR_ENV = "FUZZGATE_WORKDIR"


def workdir_base() -> Path:
    """Where workspaces are made: `$FUZZGATE_WORKDIR`, else /var/tmp if writable, else the temp dir."""
    configured = os.environ.get(WORKDIR_ENV)
    if configured:
        return Path(configured).absolute()
    var_tmp = Path("/var/tmp")
    if var_tmp.is_dir() and os.access(var_tmp, os.W_OK | os.X_OK):
        return var_tmp
    return Path(tempfile.gettempdir())


@dataclass(frozen=True, slots=True)
class Change:
    action: str
    """`created`, `changed` or `deleted`."""
    path: Path
    """Absolute, as the host sees it."""
    canary: Canary | None
    """The canary this path is (or is inside of)."""


@dataclass(frozen=True, slots=True)
class Entry:
    """What a snapshot keeps of one path: enough to see it replaced, rewritten or chmod'ed."""

    kind: int
    size: int
    mtime_ns: int
    ino: int
    mode: int

    def same_as(self, other: Entry) -> bool:
        if stat.S_ISDIR(self.kind) and stat.S_ISDIR(other.kind):
            # A dir's size and mtime follow its entries, which are compared themselves.
            return self.mode == other.mode
        return self == other


@dataclass(frozen=True, slots=True)
class Snapshot:
    entries: Mapping[str, Entry]
    """Path relative to `outside` -> its entry; the scope dirs are in, their contents are not."""


class Workspace:
    """The throwaway area of one run: a root dir, canaries derived from `token`, one `Layer` per
    server start. `isolate=True`: the sandbox overlays the scope dirs (layers make only their mount
    points); False: each layer copies them, and a scope over `MAX_SCOPE_FILES` files or
    `MAX_SCOPE_BYTES` is refused with a `TargetError`."""

    def __init__(
        self,
        scope: Sequence[Path],
        token: str,
        *,
        isolate: bool,
        cwd: Path | None = None,
        labels: Sequence[str] = (),
    ) -> None:
        self.scope = normalize_scope(scope)
        self.labels = tuple(labels) if len(labels) == len(self.scope) else scope_labels(self.scope)
        """The name of each scope dir in a layer (`<i>-<label>`): the dir's own name unless given (the
        base revision's layers take the head's, so a path in one has its counterpart in the other)."""
        self.token = token
        self.isolate = isolate
        self.cwd = (cwd or Path.cwd()).resolve()
        base = workdir_base()
        base.mkdir(parents=True, exist_ok=True)
        sweep_stale(base)
        self.root = Path(tempfile.mkdtemp(prefix="fuzzgate-", dir=base))
        self._lock = threading.Lock()
        self._numbers = itertools.count(1)
        self._closed = False
        self._template = self.root / "canaries"
        try:
            write_owner(self.root)
            if not isolate:
                for directory in self.scope:
                    _check_size(directory, skip=(str(self.root),))
            self.canaries = plant_canaries(self._template, token)
            self.boundary = plan_boundary(self.scope, token, skip=(str(self.root),), labels=self.labels)
            plant_boundary(self._template, self.boundary, token)
            self.watched = (*self.canaries, *self.boundary.canaries)
            """Every canary a layer holds: `canaries` (which probes name) and the boundary's."""
        except BaseException:
            remove_tree(self.root)
            raise

    def markers(self) -> tuple[str, ...]:
        return tuple(marker for canary in self.watched for marker in canary.markers)

    def layer(self) -> Layer:
        """A fresh area for one server start: canaries planted anew, scope dirs copied or prepared."""
        with self._lock:
            if self._closed:
                raise RuntimeError("workspace is closed")
            number = next(self._numbers)
        return Layer(self, self.root / f"s{number}")

    def close(self) -> None:
        """Remove everything. Servers using its layers must have been stopped."""
        with self._lock:
            self._closed = True
        remove_tree(self.root)


class Layer:
    """What one server start sees (module docstring). Built by `Workspace.layer`."""

    def __init__(self, workspace: Workspace, directory: Path) -> None:
        self.dir = directory
        self.isolated = workspace.isolate
        self.outside = directory / "outside"
        self.home = directory / "home"
        self.canaries = workspace.watched
        self.relay: RelayDir | None = None
        """The relay's sockets when the server is an HTTP server in the sandbox (`Containment.prepare`)."""
        directory.mkdir()
        try:
            shutil.copytree(workspace._template, self.outside, symlinks=True)
            holder = self.outside / "scope"
            holder.mkdir(exist_ok=True)
            self.scope_map: dict[Path, Path] = {}
            for index, (original, label) in enumerate(zip(workspace.scope, workspace.labels, strict=True)):
                mapped = holder / mapped_name(index, label)
                if workspace.isolate:
                    mapped.mkdir()
                else:
                    # The workspace itself may lie in the scope ($FUZZGATE_WORKDIR in the project).
                    copy_scope(str(original), str(mapped), skip=(str(workspace.root),))
                self.scope_map[original] = mapped
            self.home.mkdir()
            scope = workspace.scope
            plant_links(
                workspace.boundary,
                self.outside,
                scope,
                lambda i: overlay_upper(directory, i) if workspace.isolate else self.scope_map[scope[i]],
                self.map_path,
                isolated=workspace.isolate,
            )
        except ScopeTooLarge as exc:
            remove_tree(directory)
            raise _too_large(Path(exc.path)) from None
        except BaseException:
            remove_tree(directory)
            raise
        self._scope_dirs = frozenset(str(p) for p in self.scope_map.values())
        self._watch = open_watch()
        self._closed = False
        self._using = threading.Lock()
        """Held while a snapshot reads the watch and walks, and while `close` closes them: the
        layer is closed off the event loop, while a call on its server may still be judged."""
        self._last: Snapshot | None = None
        mapped_cwd = self.map_path(str(workspace.cwd))
        self.cwd = Path(mapped_cwd) if mapped_cwd is not None else workspace.cwd
        if mapped_cwd is not None and workspace.isolate:
            # The host sees only the empty mount point: the process starts in a directory that
            # exists there too, and the jail enters the overlaid one.
            self.cwd.mkdir(parents=True, exist_ok=True)

    def map_path(self, text: str) -> str | None:
        """The path the server sees for the absolute path `text` in a scope dir, else None."""
        if not os.path.isabs(text):
            return None
        trailing = "/" if text.endswith("/") and len(text) > 1 else ""
        for candidate in _spellings(text):
            for original, mapped in sorted(self.scope_map.items(), key=lambda item: -len(item[0].parts)):
                if candidate.is_relative_to(original):
                    rest = candidate.relative_to(original)
                    return str(mapped / rest if rest.parts else mapped) + trailing
        return None

    def sources(self) -> tuple[tuple[str, str], ...]:
        """Each scope dir as the server sees it, with the user's directory it stands for: what maps
        the paths the server reports (its tracebacks) back (`CallOutcome.sources`)."""
        return tuple((str(mapped), str(original)) for original, mapped in self.scope_map.items())

    def rewrite_args(self, args: Sequence[str]) -> tuple[str, ...]:
        """`args` with each path in a scope dir (`/x/y`, or the value of `--opt=/x/y`) rewritten to
        the path the server sees. Relative paths need nothing: the server runs in the mapped cwd."""
        out = []
        for arg in args:
            if arg.startswith("-") and "=" in arg:
                option, value = arg.split("=", 1)
                mapped = self.map_path(value)
                out.append(f"{option}={mapped}" if mapped is not None else arg)
            else:
                out.append(self.map_path(arg) or arg)
        return tuple(out)

    def roots(self) -> list[str]:
        """file:// URIs of the scope as the server sees it (MCP `roots/list`)."""
        return [path.as_uri() for path in self.scope_map.values()]

    def snapshot(self) -> Snapshot:
        """`outside`, without descending into the scope dirs; lstat only, never following links.
        The last walk again when the layer's watch saw no event since it (`watch.py`)."""
        with self._using:
            if self._closed:
                # Its server was stopped under a call still being judged, and the layer removed:
                # nothing more can be seen there (a walk now would find every canary deleted).
                return self._last if self._last is not None else Snapshot({})
            watch = self._watch
            if watch is not None and self._last is not None and not watch.changed():
                return self._last
            # Drained before the walk: a change made while it runs is an event for the next call.
            walked: list[str] = []
            snapshot = self._walk(walked)
            if watch is not None:
                watch.cover(walked)
            self._last = snapshot
            return snapshot

    def _walk(self, walked: list[str]) -> Snapshot:
        entries: dict[str, Entry] = {}
        start = len(str(self.outside)) + 1
        stack = [str(self.outside)]
        while stack:
            directory = stack.pop()
            try:
                it = os.scandir(directory)
            except OSError:
                continue
            walked.append(directory)
            with it:
                for item in it:
                    try:
                        info = item.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    kind = stat.S_IFMT(info.st_mode)
                    entries[item.path[start:]] = Entry(kind, info.st_size, info.st_mtime_ns, info.st_ino, info.st_mode)
                    if kind == stat.S_IFDIR and item.path not in self._scope_dirs:
                        stack.append(item.path)
        return Snapshot(entries)

    def changes(self, before: Snapshot, after: Snapshot) -> list[Change]:
        """What happened outside the scope between two snapshots, sorted by path."""
        if before is after:
            # The same walk (the watch saw nothing in between): most calls' case.
            return []
        found: list[tuple[str, str]] = []
        for rel, entry in after.entries.items():
            old = before.entries.get(rel)
            if old is None:
                found.append((rel, "created"))
            elif not old.same_as(entry):
                found.append((rel, "changed"))
        found.extend((rel, "deleted") for rel in before.entries if rel not in after.entries)
        found.sort()
        return [Change(action, self.outside / rel, self._canary_of(rel)) for rel, action in found]

    def _canary_of(self, rel: str) -> Canary | None:
        for canary in self.canaries:
            if rel == canary.relpath or rel.startswith(canary.relpath + "/"):
                return canary
        return None

    def close(self) -> None:
        with self._using:
            self._closed = True
            if self._watch is not None:
                self._watch.close()
        if self.relay is not None:
            self.relay.close()
        remove_tree(self.dir)


def overlay_upper(layer_dir: Path, index: int) -> Path:
    """The upper dir of the overlay of scope dir number `index` in the sandbox: what the layer
    plants there (`boundary.plant_links`) lies over the user's files in the jail."""
    return layer_dir / "jail" / f"upper-{index}"


def _spellings(text: str) -> list[Path]:
    """`text` as written (normalised) and resolved, for args that reach a scope dir through a link."""
    written = Path(os.path.normpath(text))
    try:
        resolved = written.resolve()
    except (OSError, RuntimeError, ValueError):
        return [written]
    return [written] if resolved == written else [written, resolved]


def _check_size(directory: Path, *, skip: tuple[str, ...]) -> None:
    try:
        measure_scope(str(directory), skip=skip)
    except ScopeTooLarge:
        raise _too_large(directory) from None


def _too_large(directory: Path) -> TargetError:
    return TargetError(
        f"scope {directory}: more than {MAX_SCOPE_FILES:,} files or {MAX_SCOPE_BYTES >> 30} GiB to copy "
        "for every server start (without the sandbox the scope is copied)",
        hint='set [target] scope = ["..."] to the directories the server works on',
    )
