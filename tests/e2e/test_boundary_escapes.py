"""`fuzzgate run` against a server whose path checks are almost right (tests/servers/boundary.py):
escapes that only show at the scope's boundary (a prefix sibling of the scope dir, a symbolic link
in the scope, a listing naming files outside) are found, say which boundary and which argument,
and their clean twins, which resolve the real path and check it, stay silent. With the sandbox
when it works here, and with `--sandbox off`.

The server's root is fuzzgate's working directory, so the scope is that one directory.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import ROOT, fuzzgate

pytestmark = pytest.mark.e2e

SERVER = ROOT / "tests" / "servers" / "boundary.py"
SEED = "11"


@dataclass(frozen=True)
class Escape:
    signature: list[str]
    boundary: str
    """A regex on the message: which boundary it crossed."""


BUGGY = {
    "read_doc": Escape(["read", "path"], r"answered with the content of the sibling canary .* a prefix sibling"),
    "save_doc": Escape(["write", "path"], r"(created|changed) .*<outside>/scope/0-root-\w+-backup/.* a prefix sibling"),
    "open_note": Escape(["read", "path"], r"content of the linked canary .* through the symbolic link `archive`"),
    "write_note": Escape(
        ["write", "path"], r"<outside>/fuzzgate-linked.* through the symbolic link `(archive|notes\.txt)`"
    ),
    # A name, not content: the listing holds no canary's content.
    "list_folder": Escape(["read", "path"], r"^answered with the name of a file planted outside its scope, .*listing"),
}
CLEAN = ("read_doc_safe", "save_doc_safe", "open_note_safe", "write_note_safe", "list_folder_safe")


def _run(base: Path, name: str, *args: str) -> Any:
    root = base / f"root-{name}"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "guide.md").write_text("# Guide\n")
    # The user's own link out of the scope: each layer points it at a watched stand-in instead.
    private = base / f"private-{name}"
    private.mkdir()
    (private / "secret.txt").write_text("not the server's\n")
    (root / "shared").symlink_to(private)
    workdir = base / f"workdir-{name}"
    workdir.mkdir()
    tools = [arg for tool in (*BUGGY, *CLEAN) for arg in ("--include", tool)]
    run = fuzzgate(
        "run", "--command", sys.executable, f"--arg={SERVER}", "--arg=--root", f"--arg={root}", *tools,
        "--seed", SEED, "--cases", "100", "--replays", "1", "--shrink-tries", "0", "--budget", "150s", *args,
        "--baseline", str(base / f"baseline-{name}"), "--corpus", str(base / f"corpus-{name}"),
        cwd=root, out=base / f"out-{name}", env={"FUZZGATE_WORKDIR": str(workdir)},
    )  # fmt: skip
    assert sorted(p.name for p in root.iterdir()) == ["docs", "shared"], "the user's files changed"
    assert [p.name for p in private.iterdir()] == ["secret.txt"]
    assert (private / "secret.txt").read_text() == "not the server's\n"
    assert list(workdir.iterdir()) == []
    return run


def _assert_found(run: Any) -> None:
    assert run.code == 1, run.stdout + run.stderr
    for tool, escape in BUGGY.items():
        found = [f for f in run.findings(name=tool) if f["kind"] == "scope_escape"]
        assert [f["signature"] for f in found] == [escape.signature], (tool, found)
        finding = found[0]
        assert re.search(escape.boundary, finding["message"]), (tool, finding["message"])
        assert "(argument `path` = " in finding["message"], finding["message"]
        assert finding["reproduced"] > 0 and not finding["unconfirmed"], finding
        # `--shrink-tries 0`: the repro is the call fuzzing sent, and no server was started to shrink it.
        assert "original_arguments" not in finding["repro"], finding["repro"]
    noisy = [f for f in run.report["findings"] if f["name"] in CLEAN and f["kind"] in ("scope_escape", "injection")]
    assert noisy == []
    entries = {e["name"]: e["status"] for e in run.report["entries"]}
    assert {tool: entries[tool] for tool in CLEAN} == dict.fromkeys(CLEAN, "fuzzed")


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("boundary")


def test_boundary_escapes_are_found_and_clean_twins_stay_silent(base: Path) -> None:
    _assert_found(_run(base, "auto"))


def test_boundary_escapes_without_the_sandbox(base: Path) -> None:
    run = _run(base, "off", "--sandbox", "off")
    assert run.report["containment"].startswith('not sandboxed (sandbox = "off")')
    _assert_found(run)
