"""`fuzzgate run` started in a directory that a mount namespace then shadows, as
`netjail.sh --rw DIR` does (the README advises running fuzzgate inside it for servers that reach
the network): the process keeps the directory below, on a read-only mount, while the path names the
writable one on top. Relative paths (the default corpus, `--out out`) must land on the writable one:
they once failed after the whole run, with a traceback, while the outputs' check had passed."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import SERVERS

pytestmark = pytest.mark.e2e

UNSHARE = shutil.which("unshare")


def test_relative_outputs_land_in_the_directory_the_path_names(tmp_path: Path) -> None:
    assert UNSHARE is not None, "unshare (util-linux) is needed: CI installs it"
    work, alias = tmp_path / "work", tmp_path / "alias"
    work.mkdir()
    alias.mkdir()
    fuzzgate = [
        sys.executable, "-m", "fuzzgate", "run", "--command", sys.executable, f"--arg={SERVERS / 'fast_server.py'}",
        "--cases", "20", "--budget", "60s", "--seed", "1", "--sandbox", "off", "--out", "out",
    ]  # fmt: skip
    w, a = shlex.quote(str(work)), shlex.quote(str(alias))
    # `alias` keeps a writable view of `work`; `work` becomes read-only, the shell moves into it, and
    # the writable view is mounted on top: the shell's directory is the read-only one below.
    script = (
        f"mount --make-rprivate / && mount --bind {w} {a} && mount --bind {w} {w}"
        f" && mount -o remount,bind,ro {w} && cd {w} && mount --bind {a} {w}"
        f" && if touch probe 2>/dev/null; then echo 'the directory is not shadowed' >&2; exit 99; fi"
        f" && exec {shlex.join(fuzzgate)}"
    )
    namespace = ["--mount"] if os.geteuid() == 0 else ["--mount", "--map-root-user"]
    done = subprocess.run(
        [UNSHARE, *namespace, "sh", "-c", script], capture_output=True, text=True, timeout=240, check=False
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    report = json.loads((work / "out" / "report.json").read_text())
    assert report["calls"] > 0
    assert "cannot be written" not in json.dumps(report["corpus"]), report["corpus"]
    assert (work / ".fuzzgate" / "corpus").is_dir()
