"""process_tree against plain processes: trees that leave their session, lose their parent, keep
forking, or are orphaned to a subreaper are found and killed, and fuzzgate's own children are not."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from fuzzgate.sandbox.process_tree import CUSTODY, ProcessTable, ProcessTree

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

# A child in a session of its own (setsid) that records its pid and sleeps.
SESSION_LEADER = """
import os, sys, time
os.setsid()
open(os.path.join(sys.argv[1], f"{os.getpid()}.pid"), "w").write("")
time.sleep(300)
"""
# A child that stays in its parent's session and process group.
PLAIN_CHILD = """
import os, sys, time
open(os.path.join(sys.argv[1], f"{os.getpid()}.pid"), "w").write("")
time.sleep(300)
"""


def _spawn_code(code: str, pid_dir: Path) -> str:
    return f"subprocess.Popen([sys.executable, '-c', {code!r}, {str(pid_dir)!r}])"


def _leader(pid_dir: Path, *children: str, then: str = "time.sleep(300)") -> subprocess.Popen[bytes]:
    """A server-like process in a session of its own, starting `children`, then doing `then`."""
    body = "\n".join(["import subprocess, sys, time", *(_spawn_code(c, pid_dir) for c in children), then])
    process = subprocess.Popen([sys.executable, "-c", body], start_new_session=True)
    CUSTODY.adopt(process.pid, server=True)
    return process


def _wait_for_pids(pid_dir: Path, count: int) -> list[int]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        pids = [int(p.stem) for p in pid_dir.glob("*.pid")]
        if len(pids) >= count:
            return pids
        time.sleep(0.05)
    raise AssertionError(f"only {list(pid_dir.glob('*.pid'))} started")


def _alive(pid: int) -> bool:
    """Running or stopped, not a zombie or gone."""
    info = ProcessTable.read().processes.get(pid)
    return info is not None and info.state not in "ZX"


@pytest.fixture
def pid_dir(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    # Whatever a failed test left behind.
    for path in tmp_path.glob("*.pid"):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(int(path.stem), signal.SIGKILL)


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.wait(timeout=10)
    CUSTODY.release(process.pid)


def test_a_child_that_left_the_session_dies_with_its_running_parent(pid_dir: Path) -> None:
    leader = _leader(pid_dir, SESSION_LEADER, PLAIN_CHILD)
    children = _wait_for_pids(pid_dir, 2)
    tree = ProcessTree(leader.pid)
    anyio.run(tree.kill)
    _stop(leader)
    assert leader.returncode == -9
    assert [pid for pid in children if _alive(pid)] == []


def test_session_members_are_found_after_their_parent_died(pid_dir: Path) -> None:
    # The leader exits at once: its child is re-parented, but stays in the leader's session.
    leader = _leader(pid_dir, PLAIN_CHILD, then="time.sleep(1)")
    [child] = _wait_for_pids(pid_dir, 1)
    _stop(leader)
    assert _alive(child)
    anyio.run(ProcessTree(leader.pid).kill)
    assert not _alive(child)


def test_a_remembered_child_dies_even_after_leaving_session_and_parent(pid_dir: Path) -> None:
    leader = _leader(pid_dir, SESSION_LEADER, then="time.sleep(3)")
    [child] = _wait_for_pids(pid_dir, 1)
    tree = ProcessTree(leader.pid)
    tree.remember()
    _stop(leader)
    assert _alive(child)
    anyio.run(tree.kill)
    assert not _alive(child)


def test_a_tree_that_keeps_forking_is_killed_whole(pid_dir: Path) -> None:
    # Every new child leaves the session at once, and would leave its parent too once that is
    # killed: only freezing the tree before killing any of it gets them all.
    spawner = f"""
import os
for _ in range(500):
    if os.fork() == 0:
        os.setsid()
        open(os.path.join({str(pid_dir)!r}, f"{{os.getpid()}}.pid"), "w").write("")
        time.sleep(300)
    time.sleep(0.002)
time.sleep(300)
"""
    leader = _leader(pid_dir, then=spawner)
    _wait_for_pids(pid_dir, 5)
    anyio.run(ProcessTree(leader.pid).kill)
    _stop(leader)
    time.sleep(0.3)  # a child forked but not yet frozen would have written its pid file by now
    survivors = [int(p.stem) for p in pid_dir.glob("*.pid") if _alive(int(p.stem))]
    assert survivors == []


def test_a_name_with_spaces_and_parentheses_is_parsed() -> None:
    rename = "import ctypes, time; ctypes.CDLL(None).prctl(15, b'a) (b c', 0, 0, 0); print(flush=True); time.sleep(60)"
    process = subprocess.Popen([sys.executable, "-c", rename], stdout=subprocess.PIPE)
    try:
        assert process.stdout is not None and process.stdout.readline()
        assert (Path(f"/proc/{process.pid}/comm").read_text()).strip() == "a) (b c"
        info = ProcessTable.read().processes[process.pid]
        assert (info.ppid, info.sid) == (os.getpid(), os.getsid(0)) and info.state in "SR"
    finally:
        process.kill()
        process.wait()


# Run in a process of its own: a subreaper collects orphans for the rest of its life, which the test
# process must not do. Each script starts with this: the process made a subreaper, and `orphan`, a
# double-forked daemon re-parented to it.
ORPHAN_PRELUDE = """
import json, os, subprocess, sys, time
import anyio
from fuzzgate.sandbox.process_tree import CUSTODY, become_subreaper, kill_orphans

pid_dir = sys.argv[1]
assert become_subreaper()
daemon = '''
import os, sys, time
if os.fork():
    os._exit(0)
os.setsid()
if os.fork():
    os._exit(0)
open(os.path.join(sys.argv[1], f"{os.getpid()}.pid"), "w").write("")
time.sleep(300)
'''
quiet = subprocess.DEVNULL
subprocess.run([sys.executable, "-c", daemon, pid_dir], check=True, stdout=quiet, stderr=quiet)
while not os.listdir(pid_dir):
    time.sleep(0.05)
[name] = os.listdir(pid_dir)
orphan = int(name.split(".")[0])


# A child of this process that is no orphan: it stands for a server or the generation worker.
def sleeper():
    return subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(300)"], start_new_session=True, stdout=quiet, stderr=quiet
    )
"""


def _in_a_subreaper(script: str, pid_dir: Path) -> dict[str, bool]:
    """Run `ORPHAN_PRELUDE` and then `script`, which prints a JSON object last."""
    run = subprocess.run(
        [sys.executable, "-c", ORPHAN_PRELUDE + textwrap.dedent(script), str(pid_dir)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    return dict(json.loads(run.stdout))


def test_a_double_forked_daemon_is_adopted_killed_and_reaped(pid_dir: Path) -> None:
    found = _in_a_subreaper(
        """
        own = sleeper()
        CUSTODY.adopt(own.pid, server=False)
        adopted = int(open(f"/proc/{orphan}/stat").read().rsplit(")", 1)[1].split()[1]) == os.getpid()
        anyio.run(kill_orphans)
        gone = not os.path.exists(f"/proc/{orphan}")
        own_alive = own.poll() is None
        own.kill()
        own.wait()
        print(json.dumps({"adopted": adopted, "gone": gone, "own_alive": own_alive}))
        """,
        pid_dir,
    )
    # Re-parented to the subreaper, killed and reaped (no zombie left), and the registered child spared.
    assert found == {"adopted": True, "gone": True, "own_alive": True}


def test_orphans_left_while_a_start_ran_die_when_that_start_is_cancelled(pid_dir: Path) -> None:
    # A server is buried while another's start is under way (a warm spare, at the run's end): its
    # orphans cannot be told from the child being started, so they are left; then that start is
    # cancelled. The start is held open by standing in for `anyio.open_process`, the only stand-in.
    found = _in_a_subreaper(
        """
        from fuzzgate.sandbox.owned_process import LaunchSpec, OwnedProcess

        spec = LaunchSpec(sys.executable, ("-c", "import time; time.sleep(300)"), dict(os.environ), None)


        async def held(*args, **kwargs):
            await anyio.sleep_forever()


        async def main():
            server = OwnedProcess(spec)
            await server.start()
            spare = OwnedProcess(spec)
            anyio.open_process = held
            async with anyio.create_task_group() as group:
                group.start_soon(spare.start)
                await anyio.sleep(0.2)
                await server.stop()
                left = os.path.exists(f"/proc/{orphan}")
                group.cancel_scope.cancel()
            return left


        left_at_burial = anyio.run(main)
        print(json.dumps({"left_at_burial": left_at_burial, "gone": not os.path.exists(f"/proc/{orphan}")}))
        """,
        pid_dir,
    )
    assert found == {"left_at_burial": True, "gone": True}


def test_the_last_call_kills_orphans_a_server_left_in_custody_held_back(pid_dir: Path) -> None:
    # A server whose reaping outlasted its burial's wait stays in custody: every later burial's
    # orphans are held back by it, and only the CLI's last call (`last=True`) kills them.
    found = _in_a_subreaper(
        """
        stale = sleeper()
        CUSTODY.adopt(stale.pid, server=True)
        anyio.run(kill_orphans)
        held_back = os.path.exists(f"/proc/{orphan}")
        anyio.run(lambda: kill_orphans(last=True))
        gone = not os.path.exists(f"/proc/{orphan}")
        own_alive = stale.poll() is None
        stale.kill()
        stale.wait()
        print(json.dumps({"held_back": held_back, "gone": gone, "own_alive": own_alive}))
        """,
        pid_dir,
    )
    assert found == {"held_back": True, "gone": True, "own_alive": True}
