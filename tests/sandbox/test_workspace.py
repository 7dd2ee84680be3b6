"""workspace: the scope a server is given, the canaries planted around it, and the changes fuzzgate
sees outside it, on real directories (the copies made when there is no sandbox)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from fuzzgate.check.secrets import SecretScanner
from fuzzgate.config.model import TargetConfig, TargetKind
from fuzzgate.model.errors import TargetError
from fuzzgate.sandbox import _scope_copy
from fuzzgate.sandbox.removal import remove_tree
from fuzzgate.sandbox.scope import infer_scope, normalize_scope
from fuzzgate.sandbox.stale_roots import sweep_stale
from fuzzgate.sandbox.workspace import Layer, Workspace


@pytest.fixture(autouse=True)
def _workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every workspace of these tests lives in the test's own tmp dir.
    (tmp_path / "work").mkdir()
    monkeypatch.setenv("FUZZGATE_WORKDIR", str(tmp_path / "work"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "server.py").write_text("print('hi')\n")
    (root / "data.txt").write_text("original\n")
    (root / "node_modules" / "pkg").mkdir(parents=True)
    (root / "node_modules" / "pkg" / "index.js").write_text("module.exports = 1\n")
    os.symlink("data.txt", root / "link")
    os.mkfifo(root / "pipe")
    return root


@pytest.fixture
def workspace(project: Path) -> Workspace:
    return Workspace([project], "seed-1", isolate=False, cwd=project)


def _stdio(tmp_path: Path, *args: str, cwd: Path | None = None, scope: tuple[Path, ...] = ()) -> TargetConfig:
    return TargetConfig(kind=TargetKind.STDIO, command="server", args=args, cwd=cwd or tmp_path, scope=scope)


# infer_scope ------------------------------------------------------------------------------------


def test_scope_is_the_cwd_plus_every_argument_naming_a_directory(tmp_path: Path) -> None:
    cwd, repo, root, data = (tmp_path / name for name in ("cwd", "repo", "root", "data"))
    for directory in (cwd, repo, root, cwd / "rel", data):
        directory.mkdir(parents=True)
    (tmp_path / "file.txt").write_text("")
    target = _stdio(
        tmp_path,
        "server.py",
        f"--repository={repo}",
        "--root",
        str(root),
        "rel",
        "../data",
        str(tmp_path / "missing"),
        str(tmp_path / "file.txt"),
        "--flag",
        cwd=cwd,
    )
    assert infer_scope(target) == (cwd, repo, root, data)


def test_scope_keeps_an_ancestor_once_and_drops_what_is_inside_it(tmp_path: Path) -> None:
    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    target = _stdio(tmp_path, str(inner), "..", str(inner), cwd=tmp_path / "a")
    assert infer_scope(target) == (tmp_path,)


def test_configured_scope_wins_and_is_resolved(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "sub").mkdir(parents=True)
    os.symlink(real, tmp_path / "alias")
    other = tmp_path / "other"
    other.mkdir()
    target = _stdio(tmp_path, str(other), scope=(tmp_path / "alias", real / "sub", real))
    assert infer_scope(target) == (real,)


def test_relative_cwd_default_is_the_current_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    target = TargetConfig(kind=TargetKind.STDIO, command="server")
    assert infer_scope(target) == (tmp_path.resolve(),)
    assert normalize_scope([Path(".")]) == (tmp_path.resolve(),)


# layers -----------------------------------------------------------------------------------------


def test_a_layer_copies_the_scope_under_the_watched_area(workspace: Workspace, project: Path) -> None:
    layer = workspace.layer()
    mapped = layer.scope_map[project]
    assert mapped == layer.outside / "scope" / "0-project"
    assert (mapped / "data.txt").read_text() == "original\n"
    assert (mapped / "src" / "server.py").is_file()
    assert os.readlink(mapped / "link") == "data.txt"
    assert stat.S_ISFIFO((mapped / "pipe").lstat().st_mode)
    # Dependencies are links to the originals: cheap to start, not protected.
    assert (mapped / "node_modules").is_symlink()
    assert (mapped / "node_modules").resolve() == project / "node_modules"
    assert layer.cwd == mapped
    assert layer.home.is_dir()
    assert not layer.home.is_relative_to(layer.outside)
    assert layer.roots() == [mapped.as_uri()]
    (mapped / "data.txt").write_text("changed by the server\n")
    assert (project / "data.txt").read_text() == "original\n"


def test_an_isolated_layer_only_prepares_mount_points(project: Path) -> None:
    workspace = Workspace([project], "seed-1", isolate=True, cwd=project)
    layer = workspace.layer()
    assert layer.isolated
    assert list(layer.scope_map[project].iterdir()) == []
    workspace.close()


def test_a_cwd_outside_the_scope_is_kept(tmp_path: Path, project: Path) -> None:
    # The containment line says so (tests/sandbox/test_containment.py).
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    workspace = Workspace([project], "t", isolate=False, cwd=elsewhere)
    layer = workspace.layer()
    assert layer.cwd == elsewhere
    workspace.close()


def test_layers_are_fresh_and_distinct_across_threads(workspace: Workspace) -> None:
    layers: list[Layer] = []
    lock = threading.Lock()

    def make() -> None:
        layer = workspace.layer()
        with lock:
            layers.append(layer)

    threads = [threading.Thread(target=make) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({layer.dir for layer in layers}) == 6
    for layer in layers:
        assert (layer.outside / "fuzzgate-canary.txt").is_file()


def test_rewrite_args_maps_paths_in_the_scope(tmp_path: Path, project: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    os.symlink(project, tmp_path / "alias")
    workspace = Workspace([project, other], "t", isolate=True, cwd=project)
    layer = workspace.layer()
    mapped, mapped_other = layer.scope_map[project], layer.scope_map[other]
    args = [
        str(project),
        f"{project}/",
        str(project / "src" / "server.py"),
        f"--root={project / 'src'}",
        "--dir",
        str(other),
        str(tmp_path / "alias" / "data.txt"),
        str(project / ".." / "outside.txt"),
        "/etc/passwd",
        "relative/path",
        "--flag",
        "--name=value",
        f"{project}-sibling",
    ]
    assert layer.rewrite_args(args) == (
        str(mapped),
        f"{mapped}/",
        str(mapped / "src" / "server.py"),
        f"--root={mapped / 'src'}",
        "--dir",
        str(mapped_other),
        str(mapped / "data.txt"),
        str(project / ".." / "outside.txt"),
        "/etc/passwd",
        "relative/path",
        "--flag",
        "--name=value",
        f"{project}-sibling",
    )
    workspace.close()


def test_a_workspace_inside_its_scope_is_not_copied_into_itself(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FUZZGATE_WORKDIR", str(project / ".work"))
    workspace = Workspace([project], "t", isolate=False, cwd=project)
    layer = workspace.layer()
    # `archive` and `notes.txt`: the links planted at the scope's boundary (sandbox/boundary.py).
    assert sorted(p.name for p in layer.scope_map[project].iterdir()) == [
        ".work",
        "archive",
        "data.txt",
        "link",
        "node_modules",
        "notes.txt",
        "pipe",
        "src",
    ]
    assert list((layer.scope_map[project] / ".work").iterdir()) == []
    workspace.close()


def test_a_scope_too_large_to_copy_is_refused(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_scope_copy, "MAX_SCOPE_FILES", 3)
    with pytest.raises(TargetError) as caught:
        Workspace([project], "t", isolate=False, cwd=project)
    assert str(project) in caught.value.message
    assert caught.value.hint is not None and "scope = [" in caught.value.hint
    assert list(Path(os.environ["FUZZGATE_WORKDIR"]).iterdir()) == []
    # With the sandbox nothing is copied, so any size will do.
    Workspace([project], "t", isolate=True, cwd=project).close()


# canaries ---------------------------------------------------------------------------------------


def test_canaries_are_deterministic_unique_and_only_in_content(workspace: Workspace, project: Path) -> None:
    same = Workspace([project], "seed-1", isolate=False, cwd=project)
    other = Workspace([project], "seed-2", isolate=False, cwd=project)
    assert same.canaries == workspace.canaries
    assert set(other.markers()).isdisjoint(workspace.markers())
    assert {canary.kind for canary in workspace.canaries} == {"file", "env", "repo"}
    markers = workspace.markers()
    assert len(set(markers)) == len(markers)
    assert SecretScanner((), {}).scan(" ".join(markers), {}) == []
    layer = workspace.layer()
    for canary in workspace.canaries:
        assert (layer.outside / canary.relpath).exists()
        assert not any(marker in canary.relpath for marker in canary.markers)
    by_kind = {canary.kind: canary for canary in workspace.canaries}
    assert by_kind["file"].markers[0] in (layer.outside / by_kind["file"].relpath).read_text()
    assert f"={by_kind['env'].markers[0]}" in (layer.outside / ".env").read_text()
    same.close()
    other.close()


def test_the_canary_repository_shows_its_markers_to_git(workspace: Workspace) -> None:
    layer = workspace.layer()
    repo = next(c for c in workspace.canaries if c.kind == "repo")
    branch, content, message, untracked = repo.markers
    where = layer.outside / repo.relpath
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-c", f"safe.directory={where}", *args],
            cwd=where,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout

    assert git("branch", "--show-current").strip() == f"fuzzgate-canary-{branch}"
    assert git("log", "--format=%s").strip() == message
    assert content in git("show", "HEAD:README.md")
    assert untracked in git("status", "--porcelain")


# snapshot / changes -----------------------------------------------------------------------------


def test_changes_outside_the_scope_are_seen(workspace: Workspace) -> None:
    layer = workspace.layer()
    before = layer.snapshot()
    (layer.outside / "scope" / "escaped.txt").write_text("../ from the scope\n")
    (layer.outside / "a" / "b").mkdir(parents=True)
    (layer.outside / "a" / "b" / "c.txt").write_text("nested\n")
    (layer.outside / ".env").write_text("FUZZGATE_CANARY_SECRET=overwritten\n")
    (layer.outside / "fuzzgate-canary.txt").unlink()
    (layer.outside / "fuzzgate-canary-repo" / "README.md").chmod(0o600)
    after = layer.snapshot()
    changes = layer.changes(before, after)
    seen = {(c.action, c.path.relative_to(layer.outside).as_posix()) for c in changes}
    assert seen == {
        ("created", "scope/escaped.txt"),
        ("created", "a"),
        ("created", "a/b"),
        ("created", "a/b/c.txt"),
        ("changed", ".env"),
        ("deleted", "fuzzgate-canary.txt"),
        ("changed", "fuzzgate-canary-repo/README.md"),
    }
    kinds = {c.path.name: c.canary.kind if c.canary else None for c in changes}
    assert kinds == {"escaped.txt": None, "a": None, "b": None, "c.txt": None, ".env": "env"} | {
        "fuzzgate-canary.txt": "file",
        "README.md": "repo",
    }
    assert all(c.path.is_absolute() for c in changes)
    assert layer.changes(after, layer.snapshot()) == []


def test_a_layer_closed_under_a_call_shows_no_changes(workspace: Workspace) -> None:
    """A server's layer is closed off the event loop when the server stops (a crash's restart),
    while a call sent to it may still be judged: its snapshot after the call must neither fail on
    the closed watch nor see the removed directory's canaries as deleted."""
    layer = workspace.layer()
    before = layer.snapshot()
    (layer.outside / "late.txt").write_text("written as the server stopped\n")
    layer.close()
    after = layer.snapshot()
    assert layer.changes(before, after) == []
    assert not layer.dir.exists()


def test_writes_in_the_scope_home_and_tmp_are_not_changes(workspace: Workspace, project: Path) -> None:
    layer = workspace.layer()
    before = layer.snapshot()
    mapped = layer.scope_map[project]
    (mapped / "data.txt").write_text("edited\n")
    (mapped / "new" / "deep").mkdir(parents=True)
    (mapped / "new" / "deep" / "file").write_text("x")
    (mapped / "src" / "server.py").unlink()
    (layer.home / ".cache").mkdir()
    assert layer.changes(before, layer.snapshot()) == []


def test_a_replaced_scope_dir_is_a_change(workspace: Workspace, project: Path) -> None:
    layer = workspace.layer()
    before = layer.snapshot()
    remove_tree(layer.scope_map[project])
    changes = layer.changes(before, layer.snapshot())
    assert [(c.action, c.path) for c in changes] == [("deleted", layer.scope_map[project])]


# cleanup ----------------------------------------------------------------------------------------


def test_close_removes_everything_whatever_the_server_left(workspace: Workspace, project: Path) -> None:
    layer = workspace.layer()
    locked = layer.outside / "locked"
    (locked / "inner").mkdir(parents=True)
    (locked / "inner" / "ro.txt").write_text("x")
    (locked / "inner" / "ro.txt").chmod(0o400)
    os.mkfifo(locked / "fifo")
    (locked / "inner").chmod(0)
    locked.chmod(0o500)
    os.symlink(project, layer.outside / "to-project")
    second = workspace.layer()
    second.close()
    assert not second.dir.exists()
    workspace.close()
    assert not workspace.root.exists()
    # Links were removed, never followed.
    assert (project / "data.txt").read_text() == "original\n"
    assert (project / "node_modules" / "pkg" / "index.js").exists()
    with pytest.raises(RuntimeError):
        workspace.layer()


def test_roots_of_owners_that_are_gone_are_swept(tmp_path: Path) -> None:
    """A fuzzgate killed with SIGKILL leaves its root behind; the next workspace removes it, and
    only it: a live owner's root, a root without an owner file and another namespace's stay."""
    base = tmp_path / "sweep"
    base.mkdir()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    mine = base / "fuzzgate-mine"
    dead = base / "fuzzgate-dead"
    elsewhere = base / "fuzzgate-elsewhere"
    no_owner = base / "fuzzgate-older"
    other = base / "keep-me"
    for root in (mine, dead, elsewhere, no_owner, other):
        (root / "s1" / "outside").mkdir(parents=True)
    with open(f"/proc/{os.getpid()}/stat", encoding="ascii") as handle:
        start = handle.read().rsplit(")", 1)[-1].split()[19]
    namespace = os.stat("/proc/self/ns/pid").st_ino
    host = os.uname().nodename
    (mine / "owner").write_text(f"{host}:{namespace} {os.getpid()}:{start}\n")
    (dead / "owner").write_text(f"{host}:{namespace} {gone.pid}:1\n")
    (elsewhere / "owner").write_text(f"other-host:{namespace} {gone.pid}:1\n")
    (other / "owner").write_text(f"{host}:{namespace} {gone.pid}:1\n")
    # A reused PID: our own PID with another start time is not us.
    reused = base / "fuzzgate-reused"
    reused.mkdir()
    (reused / "owner").write_text(f"{host}:{namespace} {os.getpid()}:{int(start) + 1}\n")

    assert sweep_stale(base) == 2
    kept = ["fuzzgate-elsewhere", "fuzzgate-mine", "fuzzgate-older", "keep-me"]
    assert sorted(p.name for p in base.iterdir()) == kept


def test_a_workspace_names_its_owner(tmp_path: Path) -> None:
    (tmp_path / "scope").mkdir()
    workspace = Workspace([tmp_path / "scope"], "token", isolate=True, cwd=tmp_path)
    try:
        assert sweep_stale(tmp_path / "work") == 0, "its own root is never swept"
        assert workspace.root.exists()
        host_ns, identity = (workspace.root / "owner").read_text().split()
        assert identity.startswith(f"{os.getpid()}:") and host_ns.startswith(os.uname().nodename)
    finally:
        workspace.close()


def test_a_stale_root_of_another_user_a_forged_owner_file_or_a_link_is_left_alone(tmp_path: Path) -> None:
    """In a shared /var/tmp anyone can make a `fuzzgate-*` directory with an owner file naming a
    dead process of this host: the sweep judges only this user's directories and owner files, and
    follows no link."""
    base = tmp_path / "sweep"
    base.mkdir()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    stale = f"{os.uname().nodename}:{os.stat('/proc/self/ns/pid').st_ino} {gone.pid}:1\n"
    victim = tmp_path / "victim"
    (victim / "inner").mkdir(parents=True)
    (victim / "owner").write_text(stale)
    victim.chmod(0o500)
    os.symlink(victim, base / "fuzzgate-link")
    mine = base / "fuzzgate-mine"
    mine.mkdir()
    (mine / "owner").write_text(stale)
    os.symlink(mine / "owner", base / "owner-link-target")
    linked_owner = base / "fuzzgate-linked-owner"
    linked_owner.mkdir()
    os.symlink(mine / "owner", linked_owner / "owner")
    expected_kept = ["fuzzgate-link", "fuzzgate-linked-owner", "owner-link-target"]
    if os.geteuid() == 0:
        foreign, forged = base / "fuzzgate-foreign", base / "fuzzgate-forged"
        for root in (foreign, forged):
            root.mkdir()
            (root / "owner").write_text(stale)
        os.chown(foreign, 65534, 65534)
        os.chown(foreign / "owner", 65534, 65534)
        os.chown(forged / "owner", 65534, 65534)
        expected_kept += ["fuzzgate-forged", "fuzzgate-foreign"]
    assert sweep_stale(base) == 1
    assert sorted(p.name for p in base.iterdir()) == sorted(expected_kept)
    assert stat.S_IMODE(victim.stat().st_mode) == 0o500 and (victim / "inner").is_dir()
    victim.chmod(0o700)


# the scope's boundary ---------------------------------------------------------------------------


def test_prefix_siblings_are_watched_canary_dirs_beside_each_scope_dir(workspace: Workspace) -> None:
    layer = workspace.layer()
    siblings = [c for c in workspace.watched if c.kind == "sibling"]
    assert [c.relpath for c in siblings] == [f"scope/0-project{suffix}" for suffix in ("-backup", "2", "_old", ".bak")]
    for canary in siblings:
        (name,) = canary.names
        assert name.startswith("fzgcanary") and (layer.outside / canary.relpath / name).is_file()
        assert canary.markers[0] in (layer.outside / canary.relpath / "fuzzgate-canary.txt").read_text()
    before = layer.snapshot()
    (layer.outside / "scope" / "0-project-backup" / "new.txt").write_text("x")
    changes = layer.changes(before, layer.snapshot())
    assert [(c.action, c.canary.kind if c.canary else None) for c in changes] == [("created", "sibling")]


def test_planted_links_lead_from_every_scope_dir_to_watched_canaries(workspace: Workspace, project: Path) -> None:
    layer = workspace.layer()
    mapped = layer.scope_map[project]
    boundary = workspace.boundary
    assert (boundary.dir_link, boundary.file_link) == ("archive", "notes.txt")
    linked = {c.relpath: c for c in workspace.watched if c.kind == "linked"}
    assert (mapped / "archive").resolve() == layer.outside / "fuzzgate-linked-dir"
    assert linked["fuzzgate-linked.txt"].markers[0] in (mapped / "notes.txt").read_text()
    before = layer.snapshot()
    (mapped / "archive" / "through.txt").write_text("x")
    (mapped / "notes.txt").write_text("overwritten")
    changes = {c.path.relative_to(layer.outside).as_posix(): c for c in layer.changes(before, layer.snapshot())}
    assert set(changes) == {"fuzzgate-linked-dir/through.txt", "fuzzgate-linked.txt"}
    assert changes["fuzzgate-linked.txt"].canary == linked["fuzzgate-linked.txt"]
    assert linked["fuzzgate-linked.txt"].aliases == ("notes.txt",)


def test_planted_link_names_never_shadow_the_users_files(project: Path) -> None:
    (project / "archive").mkdir()
    (project / "notes.txt").write_text("mine\n")
    workspace = Workspace([project], "t", isolate=False, cwd=project)
    assert (workspace.boundary.dir_link, workspace.boundary.file_link) == ("archive-1", "notes-1.txt")
    mapped = workspace.layer().scope_map[project]
    assert (mapped / "notes.txt").read_text() == "mine\n" and not (mapped / "archive").is_symlink()
    workspace.close()


@pytest.mark.parametrize("isolate", [False, True])
def test_the_users_links_out_of_the_scope_lead_to_watched_stand_ins(
    tmp_path: Path, project: Path, isolate: bool
) -> None:
    private = tmp_path / "private"
    private.mkdir()
    (private / "secret.txt").write_text("the user's\n")
    os.symlink(private, project / "src" / "shared")
    os.symlink(private / "secret.txt", project / "key")
    os.symlink(project / "src", project / "by-path")
    os.symlink(tmp_path / "gone", project / "dangling")
    workspace = Workspace([project], "t", isolate=isolate, cwd=project)
    layer = workspace.layer()
    # Without the sandbox the links are in the copy; with it, in the overlay's upper dir, which
    # lies over the user's files in the jail.
    base = layer.dir / "jail" / "upper-0" if isolate else layer.scope_map[project]
    stand_ins = {c.aliases[0]: c for c in workspace.watched if c.kind == "link"}
    assert set(stand_ins) == {"shared", "key", "dangling"}
    for link in ("src/shared", "key", "dangling"):
        target = Path(os.readlink(base / link))
        assert target == layer.outside / stand_ins[Path(link).name].relpath
    assert (base / "src" / "shared" / "fuzzgate-canary.txt").is_file()
    assert stand_ins["key"].markers[0] in (base / "key").read_text()
    assert not (base / "dangling").exists()
    # An absolute link into the scope leads to the layer's copy of that path.
    assert os.readlink(base / "by-path") == str(layer.scope_map[project] / "src")
    before = layer.snapshot()
    (base / "dangling").write_text("through the link")
    (changed,) = layer.changes(before, layer.snapshot())
    assert changed.canary == stand_ins["dangling"] and changed.action == "created"
    assert [p.name for p in private.iterdir()] == ["secret.txt"]
    workspace.close()


def test_name_tokens_are_unique_and_only_names(workspace: Workspace) -> None:
    names = [name for canary in workspace.watched for name in canary.names]
    assert len(set(names)) == len(names) > 5
    assert set(names).isdisjoint(workspace.markers())
    layer = workspace.layer()
    top = next(c for c in workspace.watched if c.kind == "name")
    assert (layer.outside / top.relpath).is_file() and top.names == (top.relpath,)


# the watch: a walk only when something changed ----------------------------------------------------


def test_a_layer_with_nothing_changed_is_not_walked_again(workspace: Workspace) -> None:
    layer = workspace.layer()
    assert sys.platform != "linux" or layer._watch is not None, "inotify is there on Linux"
    first = layer.snapshot()
    if layer._watch is not None:
        assert layer.snapshot() is first, "no event since: the last walk stands"
    (layer.outside / "fuzzgate-canary.txt").write_text("overwritten\n")
    changes = layer.changes(first, layer.snapshot())
    assert [(c.action, c.path.name) for c in changes] == [("changed", "fuzzgate-canary.txt")]


def test_a_directory_made_since_the_last_walk_is_watched_too(workspace: Workspace) -> None:
    layer = workspace.layer()
    (layer.outside / "a" / "b").mkdir(parents=True)
    before = layer.snapshot()
    assert layer.changes(before, layer.snapshot()) == []
    (layer.outside / "a" / "b" / "c.txt").write_text("deep\n")
    middle = layer.snapshot()
    assert [c.path.name for c in layer.changes(before, middle)] == ["c.txt"]
    (layer.outside / "a" / "b" / "c.txt").write_text("deeper\n")
    assert [(c.action, c.path.name) for c in layer.changes(middle, layer.snapshot())] == [("changed", "c.txt")]


def test_without_inotify_every_snapshot_walks(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("fuzzgate.sandbox.workspace.open_watch", lambda: None)
    layer = workspace.layer()
    before = layer.snapshot()
    again = layer.snapshot()
    assert again is not before and again == before
    (layer.outside / ".env").write_text("changed\n")
    assert [c.path.name for c in layer.changes(before, layer.snapshot())] == [".env"]


def test_a_watch_that_cannot_watch_a_directory_never_vouches() -> None:
    from fuzzgate.sandbox.watch import Watch

    class Refusing:
        def add_watch(self, path: str, mask: int) -> int:
            raise OSError(28, "No space left on device")  # the watch limit

        def read(self, timeout: int = 0) -> list[object]:
            return []

    watch = Watch(Refusing())
    watch.cover(["/nowhere"])
    assert watch.changed() and watch.changed()
