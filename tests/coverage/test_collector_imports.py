"""The collector's imports on a real interpreter (`coverage/collector/imports.py`): with coverage.py's C
tracer, a module that is not measured is imported with no trace function, and every module-level
line of the measured modules is measured all the same, also after an unmeasured import and in a
measured module that an unmeasured one imports."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import anyio
import pytest

from fuzzgate.coverage.channel import CallCoverage
from tests.coverage.test_coverage_probes import start_measured

pytestmark = pytest.mark.skipif(sys.version_info >= (3, 12), reason="the C tracer runs on Python 3.11 only")

SERVER = """
import json, sys
sys.path.insert(0, LIB)
import outside                      # not measured; it imports `called_back`, which is
AFTER_OUTSIDE = 1                   # measured again once the import is over
import sibling                      # measured: its module-level lines too
import json as again                # already imported: nothing happens

def main():
    for line in sys.stdin:
        request = json.loads(line)
        answer = {
            "outside traced at import": outside.TRACED,
            "called_back traced at import": sibling.CALLED_BACK_TRACED,
            "sibling traced at import": sibling.TRACED,
            "outside loader": type(outside.__loader__).__name__,
            "outside spec loader": type(outside.__spec__.loader).__name__,
            "traced now": sys.gettrace() is not None,
        }
        sys.stdout.write(json.dumps(answer) + "\\n")
        sys.stdout.flush()

if __name__ == "__main__":
    main()
"""
SIBLING = """
import sys
TRACED = sys.gettrace() is not None
import called_back
CALLED_BACK_TRACED = called_back.TRACED
LAST = "sibling"
"""
CALLED_BACK = """
import sys
TRACED = sys.gettrace() is not None
"""
OUTSIDE = """
import sys
TRACED = sys.gettrace() is not None
import called_back
VALUE = 2
"""


def _layout(tmp_path: Path) -> Path:
    server = tmp_path / "server"
    lib = tmp_path / "lib"
    server.mkdir()
    lib.mkdir()
    (server / "main.py").write_text(f"LIB = {str(lib)!r}\n" + textwrap.dedent(SERVER))
    (server / "sibling.py").write_text(SIBLING)
    (server / "called_back.py").write_text(CALLED_BACK)
    (lib / "outside.py").write_text(OUTSIDE)
    return server / "main.py"


def _drive(main: Path) -> tuple[dict[str, object], CallCoverage | None, bytes]:
    channel, process = start_measured(sys.executable, main, main.parent)
    stdin, stdout, stderr = process.stdin, process.stdout, process.stderr
    assert stdin is not None and stdout is not None and stderr is not None

    async def body() -> tuple[dict[str, object], CallCoverage | None]:
        info = await channel.hello(10)
        assert info is not None and info.core == "CTracer"
        stdin.write(b"{}\n")
        stdin.flush()
        answer = json.loads(stdout.readline())
        return answer, await channel.collect(10)

    try:
        answer, collected = anyio.run(body)
    finally:
        channel.close()
        stdin.close()
        process.wait(10)
    return answer, collected, stderr.read()


def _module_lines(path: Path) -> set[int]:
    """The lines of `path` that run at import: every line at the left margin with code on it."""
    lines = path.read_text().splitlines()
    return {n for n, text in enumerate(lines, 1) if text and not text[0].isspace() and not text.startswith(("#", ")"))}


def test_unmeasured_modules_import_untraced_and_measured_ones_are_measured_whole(tmp_path: Path) -> None:
    main = _layout(tmp_path)
    answer, collected, stderr = _drive(main)
    assert stderr == b""
    assert answer == {
        "outside traced at import": False,
        "called_back traced at import": True,
        "sibling traced at import": True,
        "outside loader": "SourceFileLoader",
        "outside spec loader": "SourceFileLoader",
        "traced now": True,
    }
    assert collected is not None
    for name in ("main.py", "sibling.py", "called_back.py"):
        wanted = {f"{name}:{n}" for n in _module_lines(main.parent / name)}
        assert wanted and wanted <= collected.lines, (name, sorted(wanted - collected.lines))
    assert not {line for line in collected.lines if line.startswith("outside")}
