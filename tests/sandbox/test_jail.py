"""The sandbox, really started (these tests run as root, or where user namespaces work): what a
jailed server can write, see and reach, and that its pipes, exit status and processes behave as
without the jail."""

from __future__ import annotations

import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzgate.sandbox import jail
from fuzzgate.sandbox._jail_spec import Listen, Relay, Spec, parse
from fuzzgate.sandbox.jail import jailed, sandbox_unavailable
from fuzzgate.sandbox.relay import RelayDir
from fuzzgate.sandbox.removal import remove_tree
from fuzzgate.sandbox.workspace import Layer, Workspace, workdir_base

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux namespaces")

PRELUDE = """
import errno, json, os, socket, sys
def attempt(action):
    try:
        action()
        return "ok"
    except OSError as exc:
        return errno.errorcode[exc.errno]
def write(path, text="x"):
    def action():
        with open(path, "w") as handle:
            handle.write(text)
    return attempt(action)
"""


@pytest.fixture(autouse=True)
def _unmeasured(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Python processes these tests jail are not fuzzgate: coverage's subprocess patch would
    start in them and, at exit, fail to write its data file beside the checkout, which the jail
    makes read-only (CI's checkout is not under /tmp), printing a traceback on their stderr."""
    for name in list(os.environ):
        if name.startswith("COVERAGE_"):
            monkeypatch.delenv(name)


@pytest.fixture
def area() -> Iterator[Path]:
    """Not under /tmp, which the jail overlays (writable, privately): the originals must be seen
    read-only to show that they are."""
    path = Path(tempfile.mkdtemp(prefix="fuzzgate-jail-test-", dir=workdir_base()))
    yield path
    remove_tree(path)


@pytest.fixture
def project(area: Path) -> Path:
    root = area / "project"
    (root / "sub").mkdir(parents=True)
    (root / "data.txt").write_text("original\n")
    (root / "sub" / "keep.txt").write_text("keep\n")
    return root


@pytest.fixture
def home(area: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """fuzzgate's HOME, which the jail overlays."""
    path = area / "home"
    (path / ".cache").mkdir(parents=True)
    (path / ".cache" / "entry").write_text("cached\n")
    monkeypatch.setenv("HOME", str(path))
    return path


@pytest.fixture
def host_tmp() -> Iterator[Path]:
    """A directory in the host's /tmp (pytest's tmp_path follows TMPDIR, which may point elsewhere)."""
    path = Path(tempfile.mkdtemp(prefix="fuzzgate-jail-test-", dir="/tmp"))
    yield path
    remove_tree(path)


@pytest.fixture
def workspace(project: Path, home: Path) -> Iterator[Workspace]:
    workspace = Workspace([project], "jail-test", isolate=True, cwd=project)
    yield workspace
    workspace.close()


def _run(
    workspace: Workspace,
    layer: Layer,
    code: str,
    *,
    network: bool = False,
    userns: bool | None = None,
    stdin: bytes = b"",
) -> subprocess.CompletedProcess[bytes]:
    command, args = jailed(
        sys.executable,
        ["-c", PRELUDE + textwrap.dedent(code)],
        layer,
        scope=workspace.scope,
        network=network,
        userns=userns,
    )
    return subprocess.run(
        [command, *args], input=stdin, capture_output=True, cwd=layer.cwd, timeout=60, start_new_session=True
    )


def _report(done: subprocess.CompletedProcess[bytes]) -> Any:
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stdout)


def test_the_sandbox_is_available_here() -> None:
    assert sandbox_unavailable() is None


def test_without_unshare_the_reason_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    reason = sandbox_unavailable()
    assert reason is not None and "unshare not found on PATH" in reason


@pytest.mark.parametrize("userns", [False, True], ids=["root", "user-namespace"])
def test_writes_reach_only_the_scope_overlay_outside_tmp_and_home(
    workspace: Workspace, project: Path, home: Path, userns: bool
) -> None:
    layer = workspace.layer()
    before = layer.snapshot()
    report = _report(
        _run(
            workspace,
            layer,
            f"""
            home = os.environ["HOME"]
            print(json.dumps({{
                "cwd": os.getcwd(),
                "read": open("data.txt").read(),
                "scope_edit": write("data.txt", "edited by the server\\n"),
                "scope_new": write("sub/new.txt"),
                "scope_delete": attempt(lambda: os.remove("sub/keep.txt")),
                "original_scope": write({str(project / "data.txt")!r}),
                "etc": write("/etc/fuzzgate-jail-test"),
                "var_tmp": write("/var/tmp/fuzzgate-jail-test"),
                "workspace_root": write({str(workspace.root / "escape")!r}),
                "outside": write("../../escaped.txt"),
                "home": home,
                "home_read": open(os.path.join(home, ".cache", "entry")).read(),
                "home_write": write(os.path.join(home, ".cache", "entry"), "changed"),
                "home_new": write(os.path.join(home, "new")),
                "real_home": write({str(home / "direct")!r}),
                "tmp": write("/tmp/fuzzgate-jail-test"),
                "tmpdir": os.environ["TMPDIR"],
                "dev_shm": write("/dev/shm/fuzzgate-jail-test"),
                "proc_sys": write("/proc/sys/kernel/hostname", "jailed"),
            }}))
            """,
            userns=userns,
        )
    )
    assert report["cwd"] == str(layer.cwd)
    assert report["read"] == "original\n"
    assert report["scope_edit"] == report["scope_new"] == report["scope_delete"] == "ok"
    for key in ("original_scope", "etc", "var_tmp", "workspace_root", "real_home", "proc_sys"):
        assert report[key] == "EROFS", key
    assert report["outside"] == "ok"
    assert report["home"] == str(layer.home)
    assert report["home_read"] == "cached\n"
    assert report["home_write"] == report["home_new"] == report["tmp"] == report["dev_shm"] == "ok"
    assert report["tmpdir"] == "/tmp"
    # The user's files are untouched; only the escape is a change fuzzgate sees.
    assert (project / "data.txt").read_text() == "original\n"
    assert (project / "sub" / "keep.txt").exists() and not (project / "sub" / "new.txt").exists()
    assert (home / ".cache" / "entry").read_text() == "cached\n"
    assert not (home / "new").exists()
    assert not Path("/etc/fuzzgate-jail-test").exists() and not Path("/tmp/fuzzgate-jail-test").exists()
    assert not Path("/dev/shm/fuzzgate-jail-test").exists()
    changes = layer.changes(before, layer.snapshot())
    assert [(c.action, c.path) for c in changes] == [("created", layer.outside / "escaped.txt")]


def test_a_command_under_the_host_tmp_runs(workspace: Workspace, host_tmp: Path) -> None:
    """A server installed in a virtualenv under /tmp (the jail used to hide it: exit 127)."""
    server = host_tmp / "venv" / "bin" / "server"
    server.parent.mkdir(parents=True)
    server.write_text(f"#!{sys.executable}\nimport sys\nprint('ran', sys.argv[1:])\n")
    server.chmod(0o755)
    layer = workspace.layer()
    command, args = jailed(str(server), ["--flag"], layer, scope=workspace.scope)
    done = subprocess.run([command, *args], capture_output=True, cwd=layer.cwd, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"ran ['--flag']\n", b"")


@pytest.mark.parametrize("userns", [False, True], ids=["root", "user-namespace"])
def test_tmp_shows_the_host_files_and_keeps_writes_private(workspace: Workspace, host_tmp: Path, userns: bool) -> None:
    shared, doomed, new = host_tmp / "shared.txt", host_tmp / "doomed.txt", host_tmp / "new.txt"
    shared.write_text("host\n")
    doomed.write_text("host\n")
    report = _report(
        _run(
            workspace,
            workspace.layer(),
            f"""
            print(json.dumps({{
                "read": open({str(shared)!r}).read(),
                "overwrite": write({str(shared)!r}, "jailed\\n"),
                "reread": open({str(shared)!r}).read(),
                "new": write({str(new)!r}),
                "delete": attempt(lambda: os.remove({str(doomed)!r})),
                "deleted": os.path.exists({str(doomed)!r}),
                "mode": oct(os.stat("/tmp").st_mode & 0o7777),
            }}))
            """,
            userns=userns,
        )
    )
    assert report == {
        "read": "host\n",
        "overwrite": "ok",
        "reread": "jailed\n",
        "new": "ok",
        "delete": "ok",
        "deleted": False,
        "mode": oct(os.stat("/tmp").st_mode & 0o7777),
    }
    assert shared.read_text() == "host\n" and doomed.read_text() == "host\n"
    assert not new.exists()


def test_two_jails_do_not_see_each_others_tmp(workspace: Workspace, host_tmp: Path) -> None:
    first, second = host_tmp / "first.txt", host_tmp / "second.txt"
    layer = workspace.layer()
    code = f"""
    write({str(first)!r}, "first")
    print("written", flush=True)
    sys.stdin.readline()
    print(json.dumps([open({str(first)!r}).read(), os.path.exists({str(second)!r})]), flush=True)
    """
    command, args = jailed(sys.executable, ["-c", PRELUDE + textwrap.dedent(code)], layer, scope=workspace.scope)
    running = subprocess.Popen(
        [command, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=layer.cwd, start_new_session=True
    )
    try:
        assert running.stdin is not None and running.stdout is not None
        assert running.stdout.readline() == b"written\n"
        # The first jail is still running, its file written: the second does not see it.
        other = _report(
            _run(
                workspace,
                workspace.layer(),
                f"print(json.dumps([os.path.exists({str(first)!r}), write({str(second)!r}, 'second')]))",
            )
        )
        assert other == [False, "ok"]
        out, _ = running.communicate(b"\n", timeout=60)
        assert running.returncode == 0
        assert json.loads(out) == ["first", False]
    finally:
        if running.poll() is None:
            running.kill()
            running.wait()
    assert not first.exists() and not second.exists()


def test_a_tmp_that_cannot_be_overlaid_is_an_empty_tmpfs(workspace: Workspace, area: Path, host_tmp: Path) -> None:
    """overlayfs stacks at most two deep: with the host's /tmp an overlay of an overlay (as in a
    container in a container), the jail's /tmp is an empty tmpfs, and says so."""
    (host_tmp / "host.txt").write_text("host\n")
    stack = area / "stack"
    for name in ("u1", "w1", "m1", "u2", "w2"):
        (stack / name).mkdir(parents=True)
    scratch = f"/tmp/{host_tmp.name}.scratch"
    layer = workspace.layer()
    code = f"print(json.dumps([os.listdir('/tmp'), write({scratch!r}), oct(os.stat('/tmp').st_mode)]))"
    # The base interpreter, not a virtualenv's: a checkout (and its venv) under /tmp is hidden by
    # the empty tmpfs, which is the point of the test. The code needs only the standard library.
    python = os.path.realpath(sys.executable)
    assert not python.startswith("/tmp/"), python
    command, args = jailed(python, ["-I", "-c", PRELUDE + code], layer, scope=workspace.scope)
    setup = (
        f"cd {stack} && mount -t overlay o -o lowerdir=/tmp,upperdir=u1,workdir=w1 m1"
        f" && mount -t overlay o -o lowerdir=m1,upperdir=u2,workdir=w2 /tmp"
        ' && exec "$@"'
    )
    done = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", setup, "sh", command, *args],
        capture_output=True,
        cwd=layer.cwd,
        timeout=60,
    )
    assert _report(done) == [[], "ok", oct(0o41777)]
    assert b"overlayfs not available: mounting an overlay of /tmp on /tmp" in done.stderr
    assert b"empty private tmpfs instead" in done.stderr
    assert not Path(scratch).exists()


@pytest.mark.parametrize("userns", [False, True], ids=["root", "user-namespace"])
def test_a_workspace_and_scope_under_tmp_stay_reachable(
    home: Path, host_tmp: Path, monkeypatch: pytest.MonkeyPatch, userns: bool
) -> None:
    """The layer re-attached in the jail's /tmp, which still shows the host's /tmp (its upper dir
    cannot be in the layer then: that would lie inside its own lower dir)."""
    base, project, host = host_tmp / "work", host_tmp / "project", host_tmp / "host.txt"
    base.mkdir()
    project.mkdir()
    (project / "data.txt").write_text("original\n")
    host.write_text("host\n")
    monkeypatch.setenv("FUZZGATE_WORKDIR", str(base))
    workspace = Workspace([project], "t", isolate=True, cwd=project)
    layer = workspace.layer()
    assert str(layer.dir).startswith("/tmp/")
    done = _run(
        workspace,
        layer,
        f"""
        print(json.dumps([open("data.txt").read(), write("data.txt"), write("../../out.txt"),
                          open({str(host)!r}).read(), write({str(host)!r}), write({str(host_tmp / "scratch")!r}),
                          write(os.path.join(os.environ["HOME"], "h")), write({str(project / "data.txt")!r})]))
        """,
        userns=userns,
    )
    # The original project is under /tmp too: written there, privately like the rest of /tmp.
    assert _report(done) == ["original\n", "ok", "ok", "host\n", "ok", "ok", "ok", "ok"]
    assert done.stderr == b""
    assert (layer.outside / "out.txt").exists()
    assert host.read_text() == "host\n" and not (host_tmp / "scratch").exists()
    assert (project / "data.txt").read_text() == "original\n"
    workspace.close()


def test_a_cwd_inside_the_scope_is_entered_in_the_overlay(project: Path, home: Path, area: Path) -> None:
    workspace = Workspace([project], "t", isolate=True, cwd=project / "sub")
    layer = workspace.layer()
    assert layer.cwd == layer.scope_map[project] / "sub"
    report = _report(_run(workspace, layer, "print(json.dumps([os.getcwd(), sorted(os.listdir('.'))]))"))
    assert report == [str(layer.cwd), ["keep.txt"]]
    with pytest.raises(ValueError, match="not in the layer's scope"):
        jailed("true", [], layer, scope=[area])
    workspace.close()


def test_network_is_loopback_only(workspace: Workspace) -> None:
    code = """
    def connect_out():
        # A timeout would say the packet left; ENETUNREACH says there is no route at all.
        with socket.create_connection(("10.255.255.1", 80), timeout=30):
            pass
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    client = socket.create_connection(server.getsockname(), timeout=5)
    peer, _ = server.accept()
    client.sendall(b"ping")
    print(json.dumps({
        "out": attempt(connect_out) if OUT else None,
        "loopback": peer.recv(4).decode(),
        "interfaces": sorted(name for _, name in socket.if_nameindex()),
    }))
    """
    report = _report(_run(workspace, workspace.layer(), code.replace("OUT", "True")))
    assert report == {"out": "ENETUNREACH", "loopback": "ping", "interfaces": ["lo"]}
    # network=True (an HTTP target fuzzgate must reach) keeps the host's interfaces.
    with_network = _report(_run(workspace, workspace.layer(), code.replace("OUT", "False"), network=True))
    assert with_network["loopback"] == "ping"
    assert len(with_network["interfaces"]) > 1


def test_the_server_sees_only_its_own_processes_and_cannot_mount(workspace: Workspace) -> None:
    report = _report(
        _run(
            workspace,
            workspace.layer(),
            """
            import ctypes, subprocess
            libc = ctypes.CDLL(None, use_errno=True)
            failed = libc.mount(b"none", b"/mnt", b"tmpfs", 0, None) != 0
            child = subprocess.run(["sh", "-c", "echo $$"], capture_output=True, text=True).stdout.strip()
            print(json.dumps({
                "pid": os.getpid(),
                "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
                "child": int(child),
                "mount": errno.errorcode[ctypes.get_errno()] if failed else "mounted",
            }))
            """,
        )
    )
    assert report["pid"] == 2
    assert report["pids"] == [1, 2]
    assert report["child"] == 3
    assert report["mount"] == "EPERM"


def test_the_hosts_ipc_objects_and_keyrings_are_out_of_reach_and_memory_mounts_are_sized(workspace: Workspace) -> None:
    # A root server read, overwrote and deleted the host's SysV shared memory and message queues,
    # read and planted keys in the user keyring, and left IPC objects behind after the run.
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    key = 0x46475A31
    segment = libc.shmget(key, 4096, 0o1600)  # IPC_CREAT | 0600
    assert segment >= 0
    x86 = os.uname().machine == "x86_64"
    try:
        report = _report(
            _run(
                workspace,
                workspace.layer(),
                f"""
                import ctypes
                libc = ctypes.CDLL(None, use_errno=True)
                def outcome(result):
                    return "ok" if result >= 0 else errno.errorcode[ctypes.get_errno()]
                shm = outcome(libc.shmget({key}, 0, 0))
                made = outcome(libc.shmget({key + 1}, 4096, 0o1600))
                # keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0), add_key to the session keyring
                keyctl = outcome(libc.syscall({250 if x86 else 219}, 0, -4, 0))
                add_key = outcome(libc.syscall({248 if x86 else 217}, b"user", b"k", b"v", 1, -3))
                sizes = [os.statvfs(p).f_blocks * os.statvfs(p).f_frsize for p in ("/dev/shm", "/run")]
                print(json.dumps({{"shm": shm, "made": made, "keyctl": keyctl, "add_key": add_key, "sizes": sizes}}))
                """,
            )
        )
        # The private tmpfs mounts hold the host's memory: sized, not half of it each.
        assert report.pop("sizes") == [64 << 20, 16 << 20]
        assert report == {"shm": "ENOENT", "made": "ok", "keyctl": "EPERM", "add_key": "EPERM"}
        # What the server made in its own IPC namespace went with it.
        assert libc.shmget(key + 1, 0, 0) == -1
    finally:
        libc.shmctl(segment, 0, None)  # IPC_RMID
        left = libc.shmget(key + 1, 0, 0)
        if left >= 0:
            libc.shmctl(left, 0, None)


def test_stdio_passes_through_byte_exact(workspace: Workspace) -> None:
    payload = bytes(range(256)) * 4096 + b"\xff\xfe no newline at the end"
    done = _run(
        workspace,
        workspace.layer(),
        """
        data = sys.stdin.buffer.read()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        sys.stderr.write("to stderr\\n")
        """,
        stdin=payload,
    )
    assert done.returncode == 0
    assert done.stdout == payload
    assert done.stderr == b"to stderr\n"


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("sys.exit(7)", 7),
        ("os.kill(os.getpid(), signal.SIGKILL)", -signal.SIGKILL),
        ("os.kill(os.getpid(), signal.SIGTERM)", -signal.SIGTERM),
    ],
)
def test_the_exit_status_passes_through(workspace: Workspace, code: str, status: int) -> None:
    done = _run(workspace, workspace.layer(), f"import signal\n{code}")
    assert done.returncode == status


def test_a_command_that_cannot_run_says_so(workspace: Workspace) -> None:
    layer = workspace.layer()
    command, args = jailed("no-such-server-command", [], layer, scope=workspace.scope)
    done = subprocess.run([command, *args], capture_output=True, cwd=layer.cwd, timeout=60)
    assert done.returncode == 127
    assert done.stdout == b""
    assert done.stderr.decode().startswith(jail.PREFIX)


def _descendants(pid: int) -> set[int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_killing_the_jail_kills_every_process_in_it(workspace: Workspace) -> None:
    layer = workspace.layer()
    code = PRELUDE + textwrap.dedent(
        """
        import subprocess, time
        sleeper = "import time; time.sleep(300)"
        subprocess.Popen([sys.executable, "-c", sleeper])
        subprocess.Popen([sys.executable, "-c", sleeper], start_new_session=True)
        # A double-forked daemon, re-parented to the namespace's PID 1.
        subprocess.Popen([sys.executable, "-c",
            "import os, subprocess, sys; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'],"
            " start_new_session=True); os._exit(0)"]).wait()
        print("ready", flush=True)
        time.sleep(300)
        """
    )
    command, args = jailed(sys.executable, ["-c", code], layer, scope=workspace.scope)
    process = subprocess.Popen([command, *args], stdout=subprocess.PIPE, cwd=layer.cwd, start_new_session=True)
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == b"ready\n"
        deadline = time.monotonic() + 10
        inside = _descendants(process.pid)
        # Below the jail's init: the reaper, the server, two sleepers and the daemon.
        while len(inside) < 5 and time.monotonic() < deadline:
            time.sleep(0.05)
            inside = _descendants(process.pid)
        assert len(inside) == 5
        process.kill()
        process.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(_alive(pid) for pid in inside) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(pid) for pid in inside)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_sigterm_to_the_group_reaches_the_server(workspace: Workspace) -> None:
    """What `ServerProcess.stop` does: the server gets SIGTERM itself, and the jail dies of it too."""
    layer = workspace.layer()
    code = "import signal, sys, time\nprint('ready', flush=True)\ntime.sleep(300)"
    command, args = jailed(sys.executable, ["-c", code], layer, scope=workspace.scope)
    process = subprocess.Popen([command, *args], stdout=subprocess.PIPE, cwd=layer.cwd, start_new_session=True)
    assert process.stdout is not None
    assert process.stdout.readline() == b"ready\n"
    os.killpg(process.pid, signal.SIGTERM)
    assert process.wait(timeout=30) == -signal.SIGTERM
    assert not _descendants(process.pid)


def test_what_the_server_leaves_behind_dies_with_it(workspace: Workspace) -> None:
    """A child holding the server's stdout cannot keep the pipe open once the server has exited."""
    layer = workspace.layer()
    code = (
        "import subprocess, sys\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'], start_new_session=True)\n"
        "print('bye', flush=True)\n"
        "sys.exit(3)"
    )
    before = Path("/proc/self/mountinfo").read_text()
    command, args = jailed(sys.executable, ["-c", code], layer, scope=workspace.scope)
    done = subprocess.run([command, *args], capture_output=True, cwd=layer.cwd, timeout=60)
    assert (done.returncode, done.stdout) == (3, b"bye\n")
    # Nothing the jail mounted shows on the host.
    assert Path("/proc/self/mountinfo").read_text() == before


def test_an_overlay_that_cannot_be_mounted_is_copied_instead(
    workspace: Workspace, project: Path, tmp_path: Path
) -> None:
    """overlayfs stacks at most two deep: a scope dir that is already an overlay of an overlay
    cannot be overlaid again, so the jail copies it."""
    layers = tmp_path / "stack"
    for name in ("u1", "w1", "m1", "u2", "w2"):
        (layers / name).mkdir(parents=True)
    stacked = Workspace([project], "t", isolate=True, cwd=project)
    layer = stacked.layer()
    command, args = jailed(
        sys.executable,
        ["-c", PRELUDE + "print(json.dumps([open('data.txt').read(), write('data.txt'), sorted(os.listdir('.'))]))"],
        layer,
        scope=stacked.scope,
    )
    setup = (
        f"cd {layers} && mount -t overlay o -o lowerdir={project},upperdir=u1,workdir=w1 m1"
        f" && mount -t overlay o -o lowerdir=m1,upperdir=u2,workdir=w2 {project}"
        ' && exec "$@"'
    )
    done = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", setup, "sh", command, *args],
        capture_output=True,
        cwd=layer.cwd,
        timeout=60,
    )
    # The copy keeps the links the layer planted at the scope's boundary (sandbox/boundary.py).
    assert _report(done) == ["original\n", "ok", ["archive", "data.txt", "notes.txt", "sub"]]
    assert b"overlayfs not available" in done.stderr and b"copied instead" in done.stderr
    assert (project / "data.txt").read_text() == "original\n"
    stacked.close()


def test_start_overhead(workspace: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    """Measured, not asserted: printed with -s (`pytest -s -k overhead`)."""

    def timed(argv: list[str], cwd: Path) -> float:
        started = time.perf_counter()
        subprocess.run(argv, cwd=cwd, check=True)
        return time.perf_counter() - started

    bare = [timed([sys.executable, "-c", "pass"], workspace.cwd) for _ in range(10)]
    jailed_runs = []
    for _ in range(10):
        layer = workspace.layer()
        command, args = jailed(sys.executable, ["-c", "pass"], layer, scope=workspace.scope)
        jailed_runs.append(timed([command, *args], layer.cwd))
    with capsys.disabled():
        print(
            f"\nstart of `python -c pass`: bare {statistics.median(bare) * 1000:.0f} ms, "
            f"jailed {statistics.median(jailed_runs) * 1000:.0f} ms (medians of 10)"
        )


def _ask(path: Path, send: bytes = b"") -> bytes:
    """Connect to the Unix socket at `path`, send `send`, and read until the other side ends
    (nothing: the other side closed the connection before it could be used)."""
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(10)
        sock.connect(str(path))
        received = b""
        try:
            if send:
                sock.sendall(send)
                sock.shutdown(socket.SHUT_WR)
            while chunk := sock.recv(4096):
                received += chunk
        except (BrokenPipeError, ConnectionResetError):
            pass
        return received


def test_the_relay_reaches_only_the_servers_port_on_its_own_loopback(workspace: Workspace) -> None:
    """An HTTP server in the sandbox listens on the jail's loopback; the host reaches that port, and
    only that port, through the relay's Unix sockets, and a host listener on the same port is
    never what it reaches."""
    code = """
    import socket, sys
    sys.stdin.readline()
    server = socket.socket()
    server.bind(("127.0.0.1", PORT))
    server.listen()
    print("listening", flush=True)
    while True:
        peer, _ = server.accept()
        data = b""
        while chunk := peer.recv(4096):
            data += chunk
        peer.sendall(b"inside:" + data)
        peer.close()
    """
    with socket.socket() as host_listener:
        host_listener.bind(("127.0.0.1", 0))
        host_listener.listen()
        host_listener.setblocking(False)
        port = host_listener.getsockname()[1]
        layer = workspace.layer()
        layer.relay = RelayDir(workspace.root)
        command, args = jailed(
            sys.executable,
            ["-c", PRELUDE + textwrap.dedent(code).replace("PORT", str(port))],
            layer,
            scope=workspace.scope,
            relay=Relay(str(layer.relay.path), port),
        )
        jail_process = subprocess.Popen(
            [command, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=layer.cwd, start_new_session=True
        )
        try:
            deadline = time.monotonic() + 30
            while not layer.relay.ready.exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            # Nothing listens on the jail's loopback yet: not ready, and a relayed connection ends at once.
            assert _ask(layer.relay.ready) == b"0"
            assert _ask(layer.relay.socket, b"early") == b""
            assert jail_process.stdin is not None and jail_process.stdout is not None
            jail_process.stdin.write(b"go\n")
            jail_process.stdin.flush()
            assert jail_process.stdout.readline() == b"listening\n"
            assert _ask(layer.relay.ready) == b"1"
            assert _ask(layer.relay.socket, b"ping") == b"inside:ping"
            with pytest.raises(BlockingIOError):
                host_listener.accept()
        finally:
            os.killpg(jail_process.pid, signal.SIGKILL)
            jail_process.wait(timeout=10)
            relay_dir = layer.relay.path
            layer.close()
    assert not relay_dir.exists()


_PATHS = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), min_size=1, max_size=20)


@given(
    relay=st.none() | st.tuples(_PATHS, st.integers(1, 65535)),
    listen=st.none() | st.tuples(st.integers(1, 65535), st.integers(0, 1000)),
    network=st.booleans(),
    command=st.lists(_PATHS, min_size=1, max_size=3),
    hide=st.lists(_PATHS, max_size=3),
)
def test_the_spec_reaches_the_jail_whole(
    relay: tuple[str, int] | None, listen: tuple[int, int] | None, network: bool, command: list[str], hide: list[str]
) -> None:
    spec = Spec(
        writable=["/w"],
        overlays=[],
        layer="/l",
        stage="/s",
        tmp_upper="/u",
        tmp_work="/k",
        chdir="/c",
        env={"HOME": "/h"},
        network=network,
        userns=False,
        listen=Listen(*listen) if listen else None,
        relay=Relay(*relay) if relay else None,
        hide=hide,
    )
    parsed, argv = parse([*spec.to_args(), "--", *command])
    assert argv == command and parsed.network == network and parsed.hide == hide
    got_relay = (parsed.relay.directory, parsed.relay.port) if parsed.relay is not None else None
    got_listen = (parsed.listen.port, parsed.listen.fd) if parsed.listen is not None else None
    assert (got_relay, got_listen) == (relay, listen)
