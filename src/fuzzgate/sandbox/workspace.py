"""The server's throwaway workspace: its scope, the canaries around it, and what changed outside it.

A server is given a *scope*: the directories it may read and write (`infer_scope`). It never works
on the user's files themselves. Each server start gets a `Layer`, laid out as

    <root>/s<N>/outside/                       watched: canaries at the top, and
    <root>/s<N>/outside/scope/<i>-<name>/      each scope dir, as the server sees it
    <root>/s<N>/home/                          the server's HOME (not watched)
    <root>/s<N>/jail/                          the sandbox's overlay upper and work dirs (/tmp's too)

so that `..` from a scope dir lands in the watched area. With the sandbox (`isolate=True`) the
scope dirs are overlays of the originals that `jail` mounts; without it each layer holds a copy
(`_jail_init.copy_scope`: dependency dirs such as `node_modules` and `.venv` are symlinks to the
originals there, so writes into those do reach the user's files). Around the scope, every layer
plants fresh canaries: a text file, a `.env` file and, when `git` is on PATH, a git repository,
each holding unique marker strings derived from the run's token, so that a reply or a log quoting
one shows the server read outside its scope. `Layer.snapshot` before and `Layer.changes` after a
call tell what the call created, changed or deleted outside the scope.

The root is made under `$FUZZGATE_WORKDIR`, else /var/tmp, else the system's temp dir: not under
/tmp when possible, since the sandbox gives the server a private /tmp.

A fuzzgate process killed with SIGKILL (a worker stopped hard, a CI job cancelled) cannot remove its
root. Each root holds an `owner` file (host, PID namespace, PID and the process's start time), and
every new workspace first removes the roots of owners that are gone (`sweep_stale`): workers that
come and go for weeks would otherwise fill the disk. Only roots whose owner ran on this host in this
PID namespace are judged, and only when the root and its owner file belong to this user; any other
(another user's, another container sharing the directory, an older fuzzgate that wrote no owner
file) is left alone. Nothing is followed through a symlink on the way.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import shutil
import stat
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fuzzgate.config.model import TargetConfig
from fuzzgate.model.errors import TargetError
from fuzzgate.sandbox._jail_init import MAX_SCOPE_BYTES, MAX_SCOPE_FILES, ScopeTooLarge, copy_scope, measure_scope

WORKDIR_ENV = "FUZZGATE_WORKDIR"
MARKER_PREFIX = "fzgcanary"
"""Like the environment canaries of `check.secrets`: no built-in secret pattern matches it."""

_FILE_CANARY = "fuzzgate-canary.txt"
_ENV_CANARY = ".env"
_REPO_CANARY = "fuzzgate-canary-repo"
_GIT_TIMEOUT_S = 10.0


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


def workdir_base() -> Path:
    """Where workspaces are made: `$FUZZGATE_WORKDIR`, else /var/tmp if writable, else the temp dir."""
    configured = os.environ.get(WORKDIR_ENV)
    if configured:
        return Path(configured).absolute()
    var_tmp = Path("/var/tmp")
    if var_tmp.is_dir() and os.access(var_tmp, os.W_OK | os.X_OK):
        return var_tmp
    return Path(tempfile.gettempdir())


def remove_tree(path: Path) -> None:
    """Remove `path` and everything in it, whatever a server did to it: read-only or unreadable
    dirs, read-only files, FIFOs. Symlinks are removed, never followed."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        path.unlink()
        return
    _make_searchable(str(path))
    shutil.rmtree(path, ignore_errors=True)
    if os.path.lexists(path):
        shutil.rmtree(path)


_O_PATH = getattr(os, "O_PATH", 0)
_DIR_FLAGS = (_O_PATH or os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW
"""How `_make_searchable` opens a directory: never through a symlink (O_NOFOLLOW with O_DIRECTORY
fails on one), and with O_PATH where there is one, which needs no read permission."""


def _make_searchable(top: str) -> None:
    """Give every directory under `top` rwx for its owner, so it can be listed and emptied.

    Each directory is opened relative to its parent's descriptor, never following a link, and
    changed through that descriptor: a directory swapped for a symlink meanwhile (another user's
    race in a shared /var/tmp) is skipped, never chmod'ed through the link."""
    try:
        first = os.open(top, _DIR_FLAGS)
    except OSError:
        return
    stack = [first]
    while stack:
        fd = stack.pop()
        try:
            names = _searchable_children(fd)
        except OSError:
            continue
        finally:
            os.close(fd)
        for parent, name in names:
            try:
                stack.append(os.open(name, _DIR_FLAGS, dir_fd=parent))
            except OSError:
                continue
        for parent in {parent for parent, _name in names}:
            os.close(parent)


def _searchable_children(fd: int) -> list[tuple[int, str]]:
    """Make the directory open at `fd` rwx for its owner; its subdirectories, each as (a descriptor
    of this directory, which the caller closes, name)."""
    if _O_PATH:
        # An O_PATH descriptor cannot be fchmod'ed or listed; its /proc link is the same directory.
        os.chmod(f"/proc/self/fd/{fd}", 0o700)
        listing = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_DIRECTORY)
    else:
        os.fchmod(fd, 0o700)
        listing = os.dup(fd)
    try:
        with os.scandir(listing) as it:
            names = [entry.name for entry in it if entry.is_dir(follow_symlinks=False)]
    except OSError:
        os.close(listing)
        raise
    if not names:
        os.close(listing)
        return []
    return [(listing, name) for name in names]


@dataclass(frozen=True, slots=True)
class Canary:
    kind: str
    """`file`, `env` or `repo` (a git repository)."""
    relpath: str
    """Where it is, relative to a layer's `outside` dir."""
    markers: tuple[str, ...]
    """Strings found only in its content (text, `.env` value, branch name, commit message, the
    name of an untracked file in the repository), never in `relpath`."""


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


_OWNER_FILE = "owner"


def _process_identity(pid: int) -> str | None:
    """`<pid>:<start time in clock ticks since boot>` of a live process (which tells a reused PID
    from the original), or None when there is no such process or no /proc to ask."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: fields are counted after its ")".
    fields = stat_line.rsplit(")", 1)[-1].split()
    return f"{pid}:{fields[19]}" if len(fields) > 19 else None


def _here() -> str | None:
    """This host and PID namespace, or None where there is no /proc to tell them."""
    try:
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return None
    return f"{os.uname().nodename}:{namespace}"


def _write_owner(root: Path) -> None:
    here, me = _here(), _process_identity(os.getpid())
    if here is not None and me is not None:
        (root / _OWNER_FILE).write_text(f"{here} {me}\n", encoding="ascii")


def sweep_stale(base: Path) -> int:
    """Remove the workspace roots under `base` whose owner process is gone (module docstring).
    Only directories this user owns, holding an owner file this user owns, are judged: in a shared
    /var/tmp anyone can make a `fuzzgate-*` directory and write an owner file. Returns how many were
    removed; never raises."""
    here = _here()
    if here is None:
        return 0
    uid = os.geteuid()
    removed = 0
    try:
        with os.scandir(base) as it:
            roots = [entry for entry in it if entry.name.startswith("fuzzgate-")]
    except OSError:
        return 0
    for root in roots:
        try:
            info = root.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid:
            continue
        text = _read_owner(root.path, info, uid)
        owner = text.split() if text is not None else []
        if len(owner) != 2 or owner[0] != here or not owner[1].partition(":")[0].isdigit():
            continue
        pid = int(owner[1].partition(":")[0])
        if _process_identity(pid) == owner[1]:
            continue
        try:
            remove_tree(Path(root.path))
            removed += 1
        except OSError:
            continue
    return removed


def _read_owner(root: str, info: os.stat_result, uid: int) -> str | None:
    """The owner file of the directory `root` (as `info` saw it), when it is a regular file owned by
    `uid`; None otherwise. Nothing is followed through a link, and a FIFO does not block."""
    try:
        directory = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        if not os.path.samestat(os.fstat(directory), info):
            return None
        fd = os.open(_OWNER_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=directory)
        try:
            owner = os.fstat(fd)
            if not stat.S_ISREG(owner.st_mode) or owner.st_uid != uid:
                return None
            return os.read(fd, 4096).decode("ascii")
        finally:
            os.close(fd)
    except (OSError, UnicodeDecodeError):
        return None
    finally:
        os.close(directory)


class Workspace:
    """The throwaway area of one run: a root dir, canaries derived from `token`, one `Layer` per
    server start. `isolate=True`: the sandbox overlays the scope dirs (layers make only their mount
    points); False: each layer copies them, and a scope over `MAX_SCOPE_FILES` files or
    `MAX_SCOPE_BYTES` is refused with a `TargetError`."""

    def __init__(self, scope: Sequence[Path], token: str, *, isolate: bool, cwd: Path | None = None) -> None:
        self.scope = normalize_scope(scope)
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
            _write_owner(self.root)
            if not isolate:
                for directory in self.scope:
                    _check_size(directory, skip=(str(self.root),))
            self.canaries = _plant_canaries(self._template, token)
        except BaseException:
            remove_tree(self.root)
            raise

    def markers(self) -> tuple[str, ...]:
        return tuple(marker for canary in self.canaries for marker in canary.markers)

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
        self.canaries = workspace.canaries
        directory.mkdir()
        try:
            shutil.copytree(workspace._template, self.outside, symlinks=True)
            holder = self.outside / "scope"
            holder.mkdir()
            self.scope_map: dict[Path, Path] = {}
            for index, original in enumerate(workspace.scope):
                mapped = holder / f"{index}-{original.name or 'root'}"
                if workspace.isolate:
                    mapped.mkdir()
                else:
                    # The workspace itself may lie in the scope ($FUZZGATE_WORKDIR in the project).
                    copy_scope(str(original), str(mapped), skip=(str(workspace.root),))
                self.scope_map[original] = mapped
            self.home.mkdir()
        except ScopeTooLarge as exc:
            remove_tree(directory)
            raise _too_large(Path(exc.path)) from None
        except BaseException:
            remove_tree(directory)
            raise
        self._scope_dirs = frozenset(str(p) for p in self.scope_map.values())
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
        """`outside`, without descending into the scope dirs; lstat only, never following links."""
        entries: dict[str, Entry] = {}
        start = len(str(self.outside)) + 1
        stack = [str(self.outside)]
        while stack:
            directory = stack.pop()
            try:
                it = os.scandir(directory)
            except OSError:
                continue
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
        remove_tree(self.dir)


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


def _marker(token: str, name: str) -> str:
    return MARKER_PREFIX + hashlib.sha256(f"fuzzgate-canary:{token}:{name}".encode()).hexdigest()[:24]


def _plant_canaries(directory: Path, token: str) -> tuple[Canary, ...]:
    """Write the canaries once into `directory`, the template every layer copies."""
    directory.mkdir()
    text = _marker(token, "file")
    (directory / _FILE_CANARY).write_text(f"fuzzgate canary: {text}\n", encoding="utf-8")
    secret = _marker(token, "env")
    (directory / _ENV_CANARY).write_text(f"FUZZGATE_CANARY_SECRET={secret}\n", encoding="utf-8")
    canaries = [Canary("file", _FILE_CANARY, (text,)), Canary("env", _ENV_CANARY, (secret,))]
    git = shutil.which("git")
    if git is not None:
        canaries.append(_plant_repo(git, directory / _REPO_CANARY, token))
    return tuple(canaries)


def _plant_repo(git: str, repo: Path, token: str) -> Canary:
    """A repository on branch `fuzzgate-canary-<marker>` with one commit: a tracked file and a
    commit message holding markers, and an untracked file named by one. The user's git config,
    hooks and templates are kept out; fixed dates make the commit the same for the same token."""
    branch, content, message, untracked = (_marker(token, f"repo-{part}") for part in ("branch", "file", "msg", "new"))
    repo.mkdir()
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(
        {
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "HOME": str(repo),
            "GIT_AUTHOR_NAME": "fuzzgate",
            "GIT_AUTHOR_EMAIL": "canary@fuzzgate.invalid",
            "GIT_COMMITTER_NAME": "fuzzgate",
            "GIT_COMMITTER_EMAIL": "canary@fuzzgate.invalid",
            "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
            "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
            "GIT_TERMINAL_PROMPT": "0",
        }
    )
    options = ["-c", "core.hooksPath=/dev/null", "-c", "commit.gpgSign=false", "-c", "core.fsmonitor=false"]

    def git_run(*args: str) -> None:
        subprocess.run(
            [git, *options, *args],
            cwd=repo,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=True,
            timeout=_GIT_TIMEOUT_S,
        )

    git_run("init", "-q", "--template=")
    git_run("symbolic-ref", "HEAD", f"refs/heads/fuzzgate-canary-{branch}")
    (repo / "README.md").write_text(f"{content}\n", encoding="utf-8")
    git_run("add", "README.md")
    git_run("commit", "-q", "-m", message)
    (repo / untracked).write_text("untracked\n", encoding="utf-8")
    return Canary("repo", _REPO_CANARY, (branch, content, message, untracked))
