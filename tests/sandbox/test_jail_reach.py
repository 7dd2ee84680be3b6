"""The sandbox, really started, against what a read-only mount does not stop: connecting to a
listening Unix socket and opening a device node for writing. Real sockets, a real loop device, as
root, as root of a user namespace, and as a normal user (with a supplementary group) in one."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fuzzgate.sandbox import _jail_view
from fuzzgate.sandbox.jail import jailed
from fuzzgate.sandbox.removal import remove_tree
from fuzzgate.sandbox.workspace import Layer, Workspace, workdir_base

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux namespaces")

CODE = """
import errno, json, os, socket, sys
def attempt(action):
    try:
        action()
        return "ok"
    except OSError as exc:
        return errno.errorcode[exc.errno]
def connect(path):
    def action():
        with socket.socket(socket.AF_UNIX) as sock:
            sock.connect(path)
    return attempt(action)
def open_rw(path):
    return attempt(lambda: os.close(os.open(path, os.O_RDWR)))
paths = json.loads(sys.argv[1])
print(json.dumps({
    "sockets": {name: connect(path) for name, path in paths["sockets"].items()},
    "devices": {name: open_rw(path) for name, path in paths["devices"].items()},
    "dev": sorted(os.listdir("/dev")) if paths["jailed"] else [],
    "null": attempt(lambda: open("/dev/null", "w").write("x")) if paths["jailed"] else "",
    "pty": attempt(lambda: [os.close(fd) for fd in os.openpty()]) if paths["jailed"] else "",
}))
"""

RELATIVE_BINDER = """
import socket, sys
sock = socket.socket(socket.AF_UNIX)
sock.bind("rel.sock")
sock.listen(8)
print("bound", flush=True)
sys.stdin.read()
"""

NOBODY = 65534
GROUP = 4242
"""A supplementary group of the normal user, as `docker` is for a CI user."""


@pytest.fixture(autouse=True)
def _unmeasured(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in test_jail.py: coverage's subprocess patch must not start in the jailed processes."""
    for name in list(os.environ):
        if name.startswith("COVERAGE_"):
            monkeypatch.delenv(name)


@pytest.fixture
def area(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="fuzzgate-reach-test-", dir=workdir_base()))
    (path / "project").mkdir()
    (path / "home").mkdir()
    monkeypatch.setenv("HOME", str(path / "home"))
    yield path
    remove_tree(path)


@pytest.fixture
def run_dir() -> Iterator[Path]:
    """A directory under /run, where the host's service sockets live."""
    if not Path("/run").is_dir() or not os.access("/run", os.W_OK):
        pytest.skip("needs a writable /run (root)")
    path = Path(tempfile.mkdtemp(prefix="fuzzgate-reach-test-", dir="/run"))
    path.chmod(0o755)
    yield path
    remove_tree(path)


def _listen(path: Path, held: list[socket.socket]) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    sock.listen(8)
    held.append(sock)
    return str(path)


@pytest.fixture
def held() -> Iterator[list[socket.socket]]:
    sockets: list[socket.socket] = []
    yield sockets
    for sock in sockets:
        sock.close()


@pytest.fixture
def loop_device(area: Path) -> Iterator[str]:
    losetup = shutil.which("losetup")
    if os.geteuid() != 0 or losetup is None or not Path("/dev/loop-control").exists():
        pytest.skip("needs root, losetup and /dev/loop-control")
    image = area / "disk.img"
    image.write_bytes(b"\0" * (1 << 20))
    device = subprocess.run([losetup, "-f", "--show", str(image)], capture_output=True, text=True, check=True)
    path = device.stdout.strip()
    yield path
    subprocess.run([losetup, "-d", path], check=False)


def _jail_command(python: str, layer: Layer, workspace: Workspace, paths: dict[str, Any], userns: bool) -> list[str]:
    command, args = jailed(
        python, ["-c", textwrap.dedent(CODE), json.dumps(paths)], layer, scope=workspace.scope, userns=userns
    )
    # The jail's own first process runs on the interpreter given, too (the unprivileged case needs
    # one its user can run).
    return [command, *(python if arg == sys.executable else arg for arg in args)]


def _report(done: subprocess.CompletedProcess[bytes]) -> Any:
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stdout)


@pytest.mark.parametrize("userns", [False, True], ids=["root", "user-namespace"])
def test_host_sockets_and_devices_are_out_of_reach(
    area: Path, run_dir: Path, held: list[socket.socket], loop_device: str, userns: bool
) -> None:
    project, home = area / "project", area / "home"
    sockets = {
        "run": _listen(run_dir / "docker.sock", held),
        "elsewhere": _listen(area / "srv" / "app.sock", held),
        "home": _listen(home / ".gnupg" / "S.gpg-agent", held),
        "scope": _listen(project / "db.sock", held),
    }
    # Bound by a relative path: /proc/net/unix says "rel.sock", not where; it was reachable.
    (area / "rel").mkdir()
    binder = subprocess.Popen(
        [sys.executable, "-c", RELATIVE_BINDER], cwd=area / "rel", stdout=subprocess.PIPE, stdin=subprocess.PIPE
    )
    assert binder.stdout is not None and binder.stdout.readline() == b"bound\n"
    sockets["relative"] = str(area / "rel" / "rel.sock")
    # The same block device, made where the read-only view shows it: outside /dev and in the scope.
    rdev = os.stat(loop_device).st_rdev
    for place in (area / "srv" / "disk", project / "disk"):
        os.mknod(place, 0o600 | stat.S_IFBLK, rdev)
    devices = {"loop": loop_device, "elsewhere": str(area / "srv" / "disk"), "scope": str(project / "disk")}
    bare = subprocess.run(
        [
            sys.executable,
            "-c",
            textwrap.dedent(CODE),
            json.dumps({"sockets": sockets, "devices": devices, "jailed": 0}),
        ],
        capture_output=True,
        timeout=60,
    )
    # Without the jail all of it is reachable: what the jailed run shows is the jail's doing.
    assert _report(bare)["sockets"] == dict.fromkeys(sockets, "ok")
    assert _report(bare)["devices"] == dict.fromkeys(devices, "ok")
    workspace = Workspace([project], "reach", isolate=True, cwd=project)
    try:
        layer = workspace.layer()
        paths = {"sockets": sockets, "devices": {**devices, "scope": "disk"}, "jailed": 1}
        argv = _jail_command(sys.executable, layer, workspace, paths, userns)
        report = _report(subprocess.run(argv, capture_output=True, cwd=layer.cwd, timeout=60))
    finally:
        workspace.close()
        binder.kill()
        binder.wait()
    assert report["sockets"]["run"] == "ENOENT"
    for name in ("elsewhere", "home", "scope", "relative"):
        assert report["sockets"][name] == "ECONNREFUSED", name
    assert report["devices"] == {"loop": "ENOENT", "elsewhere": "EACCES", "scope": "EACCES"}
    assert report["dev"] == sorted([*_jail_view.DEVICES, "fd", "stdin", "stdout", "stderr", "ptmx", "pts", "shm"])
    assert report["null"] == report["pty"] == "ok"
    with open(loop_device, "rb") as disk:
        assert disk.read(4096) == b"\0" * 4096


def _runnable_by_others(path: str) -> bool:
    real = Path(path).resolve()
    for part in (real, *real.parents):
        mode = part.stat().st_mode
        if not mode & stat.S_IXOTH or (part == real and not mode & stat.S_IROTH):
            return False
    return True


def test_a_normal_user_reaches_neither_its_own_run_dir_nor_a_group_socket(
    area: Path, run_dir: Path, held: list[socket.socket]
) -> None:
    """The `/run/user/$UID/bus` case (`systemd-run --user` leaves any sandbox) and the
    `docker.sock` case (a root-owned 0660 socket, reached through a supplementary group)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to start a process as another user")
    python = next(
        (p for p in (sys.executable, "/usr/bin/python3") if Path(p).exists() and _runnable_by_others(p)), None
    )
    if python is None:
        pytest.skip("no Python interpreter the other user can run")
    user_dir = run_dir / "user" / str(NOBODY)
    sockets = {"bus": _listen(user_dir / "bus", held), "docker": _listen(run_dir / "docker.sock", held)}
    os.chown(sockets["bus"], NOBODY, NOBODY)
    user_dir.chmod(0o700)
    os.chown(user_dir, NOBODY, NOBODY)
    os.chown(sockets["docker"], 0, GROUP)
    os.chmod(sockets["docker"], 0o660)
    as_user: dict[str, Any] = {"user": NOBODY, "group": NOBODY, "extra_groups": [GROUP], "timeout": 60}
    bare = subprocess.run(
        [python, "-c", textwrap.dedent(CODE), json.dumps({"sockets": sockets, "devices": {}, "jailed": 0})],
        capture_output=True,
        **as_user,
    )
    assert _report(bare)["sockets"] == {"bus": "ok", "docker": "ok"}
    project = area / "project"
    workspace = Workspace([project], "reach", isolate=True, cwd=project)
    try:
        layer = workspace.layer()
        for directory, _dirs, files in os.walk(area):
            for name in (directory, *(os.path.join(directory, f) for f in files)):
                os.chown(name, NOBODY, NOBODY, follow_symlinks=False)
        for directory, _dirs, files in os.walk(workspace.root):
            for name in (directory, *(os.path.join(directory, f) for f in files)):
                os.chown(name, NOBODY, NOBODY, follow_symlinks=False)
        paths = {"sockets": sockets, "devices": {}, "jailed": 1}
        argv = _jail_command(python, layer, workspace, paths, userns=True)
        report = _report(subprocess.run(argv, capture_output=True, cwd=layer.cwd, **as_user))
    finally:
        workspace.close()
    assert report["sockets"] == {"bus": "ENOENT", "docker": "ENOENT"}
    assert report["null"] == "ok"
