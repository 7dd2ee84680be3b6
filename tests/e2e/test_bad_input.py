"""A user's environment that fuzzgate cannot use (an output path under a file, a directory it may
not write, a FIFO where a file is read) is one clear line and exit 2, said before any work starts,
never a traceback, exit 4 or a hang. Every command here stops before a server would start, so each
test is a cheap subprocess; a hang fails through the subprocess timeout instead of stalling CI."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from fuzzgate.report import json_report
from fuzzgate.store.corpus_store import CorpusStore
from fuzzgate.store.shared import SharedStore
from tests.report.report_factory import sample_report
from tests.store.test_store_cli import entries

pytestmark = pytest.mark.e2e

HANG_S = 60
"""Far above what any of these commands needs: reaching it is a hang, and fails the test."""

NO_SERVER = ("--command", "/nonexistent/mcp-server", "--cases", "1", "--feedback", "behaviour")
"""A target that cannot start: a command that got as far as starting it ends in exit 3, not 2."""


def _unprivileged() -> tuple[str, ...] | None:
    """A prefix running a command without root's power over file modes: a user namespace, where
    the files of the real root are not the process's to override (None where it cannot be made)."""
    unshare = shutil.which("unshare")
    if os.geteuid() != 0:
        return ()
    if unshare is None:
        return None
    done = subprocess.run([unshare, "--user", "true"], capture_output=True, timeout=30, check=False)
    return (unshare, "--user") if done.returncode == 0 else None


UNPRIVILEGED = _unprivileged()


def cli(*args: str, cwd: Path, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "FUZZGATE_", "WALLFACER_"))}
    return subprocess.run(
        [*prefix, sys.executable, "-m", "fuzzgate", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=HANG_S, check=False,
    )  # fmt: skip


def usage_line(done: subprocess.CompletedProcess[str], *needles: str) -> str:
    """The one error line of a usage error with exit 2 (and at most a hint after it)."""
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    lines = done.stderr.splitlines()
    assert 1 <= len(lines) <= 2 and (len(lines) == 1 or lines[1].startswith("hint:")), done.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def read_only_directory(path: Path) -> Path:
    path.mkdir()
    path.chmod(0o555)
    return path


# --- run: the outputs ------------------------------------------------------------------------------


def a_file(d: Path) -> None:
    (d / "file").touch()


def a_fifo(d: Path) -> None:
    os.mkfifo(d / "fifo")


def a_directory_named_report_json(d: Path) -> None:
    (d / "out" / "report.json").mkdir(parents=True)


@pytest.mark.parametrize(
    ("setup", "flags", "needles"),
    [
        pytest.param(a_file, ("--out", "file/out"), ("file is not a directory",), id="under-a-file"),
        pytest.param(a_fifo, ("--out", "fifo"), ("fifo is not a directory",), id="a-fifo"),
        pytest.param(
            a_directory_named_report_json, ("--out", "out"), ("report.json", "not a regular file"), id="in-the-way"
        ),
        pytest.param(a_file, ("--trace", "file/trace.jsonl"), ("file is not a directory",), id="trace-under-a-file"),
    ],
)
def test_run_refuses_outputs_it_cannot_write_before_starting_the_server(
    tmp_path: Path, setup: Callable[[Path], None], flags: tuple[str, ...], needles: tuple[str, ...]
) -> None:
    setup(tmp_path)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    done = cli("run", *NO_SERVER, *flags, cwd=tmp_path)
    # Exit 2, not the 3 of the server that cannot start: the outputs were checked first.
    usage_line(done, *needles)
    assert "fuzzing" not in done.stdout
    assert sorted(p.name for p in tmp_path.rglob("*")) == before, "something was written"


@pytest.mark.skipif(UNPRIVILEGED is None, reason="needs a user namespace (or a non-root user) to lack write access")
def test_run_refuses_an_output_directory_it_may_not_write(tmp_path: Path) -> None:
    locked = read_only_directory(tmp_path / "locked")
    assert UNPRIVILEGED is not None
    for out in (locked, locked / "new"):
        done = cli("run", *NO_SERVER, "--out", str(out), cwd=tmp_path, prefix=UNPRIVILEGED)
        usage_line(done, f"{locked} cannot be written (Permission denied)")
    assert list(locked.iterdir()) == []


# --- other commands that write -------------------------------------------------------------------


def test_merge_and_report_refuse_an_out_they_cannot_write(tmp_path: Path) -> None:
    (tmp_path / "file").touch()
    json_report.write(sample_report(tmp_path), tmp_path / "shard")
    SharedStore.open(str(tmp_path / "store")).add_corpus("calc", entries("divide", 2))
    usage_line(cli("merge", "shard", "--out", "file", cwd=tmp_path), "file is not a directory")
    usage_line(cli("merge", "shard", "--out", "file/merged", cwd=tmp_path), "file is not a directory")
    usage_line(cli("report", "--store", "store", "--out", "shard", cwd=tmp_path), "shard", "not a regular file")
    usage_line(cli("report", "--store", "store", "--out", "file/page.html", cwd=tmp_path), "file is not a directory")


def test_store_commands_refuse_a_destination_they_cannot_write(tmp_path: Path) -> None:
    (tmp_path / "file").touch()
    SharedStore.open(str(tmp_path / "store")).add_corpus("calc", entries("divide", 2))
    for args in (
        ("store", "import", "store", "--store", "file"),
        ("store", "merge", "store", "--store", "file/sub"),
        ("store", "export", "file", "--store", "store"),
        ("store", "export", "--store", "store", "--corpus-dir", "file"),
    ):
        usage_line(cli(*args, cwd=tmp_path), "file is not a directory")
    assert (tmp_path / "file").read_bytes() == b""


@pytest.mark.skipif(UNPRIVILEGED is None, reason="needs a user namespace (or a non-root user) to lack write access")
def test_store_import_refuses_a_store_directory_it_may_not_write(tmp_path: Path) -> None:
    SharedStore.open(str(tmp_path / "store")).add_corpus("calc", entries("divide", 2))
    locked = read_only_directory(tmp_path / "locked")
    assert UNPRIVILEGED is not None
    done = cli("store", "import", "store", "--store", str(locked), cwd=tmp_path, prefix=UNPRIVILEGED)
    usage_line(done, f"{locked} cannot be written (Permission denied)")


def test_work_refuses_a_store_directory_it_cannot_write_before_its_first_cycle(tmp_path: Path) -> None:
    (tmp_path / "file").touch()
    done = cli("work", "--store", "file", "--cycles", "1", *NO_SERVER, cwd=tmp_path)
    usage_line(done, "file is not a directory")


def test_corpus_merge_refuses_a_corpus_it_cannot_write_before_measuring(tmp_path: Path) -> None:
    (tmp_path / "file").touch()
    CorpusStore(tmp_path / "other", "mcp-server").add(entries("divide", 1)[0])
    done = cli("corpus", "merge", "other", "--corpus", "file", *NO_SERVER, cwd=tmp_path)
    usage_line(done, "file is not a directory")


def test_baseline_accept_refuses_a_baseline_path_under_a_file(tmp_path: Path) -> None:
    (tmp_path / "file").touch()
    json_report.write(sample_report(tmp_path), tmp_path / "out")
    done = cli("baseline", "accept", *NO_SERVER, "--out", "out", "--baseline", "file/baseline", cwd=tmp_path)
    usage_line(done, "file is not a directory")


# --- FIFOs where files are read -------------------------------------------------------------------


def test_corpus_list_skips_a_fifo_with_its_reason_instead_of_hanging(tmp_path: Path) -> None:
    CorpusStore(tmp_path / "corpus", "calc").add(entries("divide", 1)[0])
    os.mkfifo(tmp_path / "corpus" / "calc" / "divide-0000000000000000.json")
    done = cli("corpus", "list", "--corpus", "corpus", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert "calc: 1 entry" in text
    assert "divide-0000000000000000.json: cannot be read (a FIFO (named pipe), not a regular file)" in text


def test_store_show_and_report_say_a_fifo_in_the_store_instead_of_hanging(tmp_path: Path) -> None:
    SharedStore.open(str(tmp_path / "store")).add_corpus("calc", entries("divide", 2))
    [key_dir] = {p.parent for p in (tmp_path / "store").rglob("*.json") if "corpus" in p.parts}
    fifo = key_dir / "0000000000000000.json"
    os.mkfifo(fifo)
    for args in (("store", "show", "--store", "store"), ("report", "--store", "store", "--out", "page.html")):
        usage_line(cli(*args, cwd=tmp_path), fifo.name, "a FIFO (named pipe), not a regular file")


def test_a_fifo_in_the_baseline_is_named_instead_of_hanging(tmp_path: Path) -> None:
    (tmp_path / "baseline").mkdir()
    os.mkfifo(tmp_path / "baseline" / "0123456789abcdef.json")
    done = cli("baseline", "list", *NO_SERVER, "--baseline", "baseline", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "0123456789abcdef.json cannot be read (a FIFO (named pipe), not a regular file)" in done.stderr


def test_a_config_that_is_a_fifo_or_a_directory_is_named_for_what_it_is(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fuzzgate.toml")
    usage_line(cli("tools", "--config", "fuzzgate.toml", cwd=tmp_path), "FIFO", "fuzzgate.toml")
    (tmp_path / "dir").mkdir()
    usage_line(cli("tools", "--config", "dir", cwd=tmp_path), "got a directory")


def test_a_fifo_where_a_report_is_read_is_named_instead_of_hanging(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "finding.json")
    (tmp_path / "shard").mkdir()
    os.mkfifo(tmp_path / "shard" / "report.json")
    reason = "a FIFO (named pipe), not a regular file"
    for args in (
        ("replay", "finding.json", *NO_SERVER),
        ("merge", "shard", "--out", "merged"),
        ("baseline", "accept", *NO_SERVER, "--out", "shard", "--baseline", "baseline"),
    ):
        usage_line(cli(*args, cwd=tmp_path), "report.json" if "shard" in args else "finding.json", reason)


def test_work_names_an_also_config_that_is_a_fifo_instead_of_hanging(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "other.toml")
    done = cli("work", "--store", "store", "--also", "other.toml", "--cycles", "1", *NO_SERVER, cwd=tmp_path)
    usage_line(done, "other.toml", "a FIFO (named pipe), not a regular file")


def test_init_refuses_a_path_under_a_file(tmp_path: Path) -> None:
    (tmp_path / "file").touch()
    usage_line(cli("init", "file/fuzzgate.toml", cwd=tmp_path), "file is not a directory")


def test_report_refuses_a_secret_pattern_that_does_not_compile(tmp_path: Path) -> None:
    # `run` refused it; `report` ended with re.error's traceback.
    SharedStore.open(str(tmp_path / "store")).add_corpus("calc", entries("divide", 2))
    done = cli("report", "--store", "store", "--secret-pattern", "(", "--out", "page.html", cwd=tmp_path)
    usage_line(done, "--secret-pattern: expected a regular expression")
    assert not (tmp_path / "page.html").exists()


@pytest.mark.parametrize("flags", [("--cycles", "0"), ("--tools", "-3")])
def test_work_refuses_counts_below_one(tmp_path: Path, flags: tuple[str, ...]) -> None:
    # `--cycles 0` exited 0 having done nothing; `--tools 0` meant every tool.
    usage_line(cli("work", "--store", "store", *flags, "--command", "x", cwd=tmp_path), f"{flags[0]}: expected")


@pytest.mark.parametrize("name", ["n9.yaml", "fuzzgate.YML"])
def test_init_refuses_a_yaml_name_it_would_write_toml_into(tmp_path: Path, name: str) -> None:
    line = usage_line(cli("init", name, cwd=tmp_path), f"{name}: init writes TOML", "read as YAML")
    assert "usage error" in line
    assert os.listdir(tmp_path) == []
    (tmp_path / name).write_text("mine: 1\n")
    usage_line(cli("init", "--force", name, cwd=tmp_path), "init writes TOML")
    assert (tmp_path / name).read_text() == "mine: 1\n"
