"""The SDK a server's process runs on, read from /proc: a Node.js process's TypeScript SDK is the one
Node.js's `require` finds from its script (beside it or above it, through the links to it), else in
a NODE_PATH directory. Real `node` processes, started here and stopped after."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fuzzgate.check.sdk import Sdk
from fuzzgate.target.runtime import server_sdk
from tests.validators import missing

IDLE = "setInterval(() => {}, 1000);\n"


def _package(directory: Path, version: str) -> None:
    sdk = directory / "@modelcontextprotocol" / "sdk"
    sdk.mkdir(parents=True)
    (sdk / "package.json").write_text(json.dumps({"name": "@modelcontextprotocol/sdk", "version": version}))


@contextmanager
def _node(script: Path, cwd: Path, env: dict[str, str] | None = None) -> Iterator[int]:
    node = shutil.which("node")
    if node is None:
        missing("node is not installed", "install Node.js 20 or later")
    process = subprocess.Popen([node, str(script)], cwd=cwd, env=env or {})
    try:
        yield process.pid
    finally:
        process.kill()
        process.wait()


def test_the_sdk_is_the_one_beside_the_script_it_links_to(tmp_path: Path) -> None:
    project = tmp_path / "project"
    _package(project / "node_modules", "9.8.7")
    (project / "dist").mkdir()
    (project / "dist" / "server.js").write_text(IDLE)
    # As npm installs a package's command: a link in node_modules/.bin to the script.
    (project / "node_modules" / ".bin").mkdir()
    (project / "node_modules" / ".bin" / "serve").symlink_to("../../dist/server.js")
    with _node(Path("project/node_modules/.bin/serve"), cwd=tmp_path) as pid:
        assert server_sdk(pid) == Sdk("@modelcontextprotocol/sdk", "9.8.7")


def test_the_sdk_is_found_on_node_path_and_not_elsewhere(tmp_path: Path) -> None:
    (tmp_path / "server.js").write_text(IDLE)
    _package(tmp_path / "lib" / "node_modules", "1.2.3")
    with _node(tmp_path / "server.js", cwd=tmp_path, env={"NODE_PATH": str(tmp_path / "lib" / "node_modules")}) as pid:
        assert server_sdk(pid) == Sdk("@modelcontextprotocol/sdk", "1.2.3")
    with _node(tmp_path / "server.js", cwd=tmp_path) as pid:
        assert server_sdk(pid) is None


def test_a_process_that_is_not_node_has_no_typescript_sdk(tmp_path: Path) -> None:
    _package(tmp_path / "node_modules", "1.0.0")
    (tmp_path / "server.py").write_text("import time\ntime.sleep(60)\n")
    process = subprocess.Popen([sys.executable, "-S", str(tmp_path / "server.py")], cwd=tmp_path)
    try:
        assert server_sdk(process.pid) is None
    finally:
        process.kill()
        process.wait()


def test_no_process_no_sdk() -> None:
    assert server_sdk(None) is None
