"""A server started by a launcher that fetches its package (`npx -y PACKAGE`, `uvx PACKAGE`), the
way most MCP client configs name servers: in the sandbox the package managers are told they are
offline, so what is cached or installed runs at once, and what is not fails at once with the fix in
the error, instead of npm retrying an unreachable registry until the start-up timeout."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from fuzzgate.config.model import SandboxMode, TargetConfig, TargetKind
from fuzzgate.sandbox.jail import OFFLINE_ENV, offline_miss, package_runner, sandbox_unavailable
from tests.sandbox.starting import start_error

ROOTS_READER = Path(__file__).resolve().parents[1] / "servers" / "roots_reader.py"

needs_sandbox = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("unshare") is None or sandbox_unavailable() is not None,
    reason="needs the sandbox and util-linux unshare",
)


@pytest.mark.parametrize(
    ("command", "args", "runner"),
    [
        ("npx", ["-y", "@modelcontextprotocol/server-everything"], "npx"),
        ("/usr/local/bin/uvx", ["mcp-server-time"], "uvx"),
        ("pipx", ["run", "mcp-server-git"], "pipx run"),
        ("npm", ["exec", "some-server"], "npm exec"),
        ("uv", ["tool", "run", "mcp-server-time"], "uv tool run"),
        ("pnpm", ["dlx", "some-server"], "pnpm dlx"),
        ("pipx", ["install", "x"], None),
        ("uv", ["run", "server.py"], None),
        ("npm", [], None),
        ("python", ["server.py"], None),
        (None, [], None),
    ],
)
def test_a_launcher_that_fetches_its_package_is_told_apart(
    command: str | None, args: list[str], runner: str | None
) -> None:
    assert package_runner(command, args) == runner


def test_a_package_manager_s_offline_miss_is_recognised() -> None:
    npm = "npm error request to https://registry.npmjs.org/x failed: cache mode is 'only-if-cached' but no cached"
    uv = "  cause: Because x was not found in the cache and you require x, we can conclude that ..."
    assert offline_miss(["npm error code ENOTCACHED"]) and offline_miss([npm]) and offline_miss([uv])
    assert not offline_miss(["ConnectionRefusedError: [Errno 111] Connection refused", "x"])


def _start_checking(tmp_path: Path, check: str, sandbox: SandboxMode, env: dict[str, str] | None = None) -> bool:
    """Whether a server that first exits unless `check` (a Python expression) holds starts."""
    script = tmp_path / "server.py"
    script.write_text(
        f"import os, runpy, sys\nif not ({check}):\n    sys.exit(9)\n"
        f"runpy.run_path({str(ROOTS_READER)!r}, run_name='__main__')\n"
    )
    target = TargetConfig(
        kind=TargetKind.STDIO, command=sys.executable, args=(str(script),), cwd=tmp_path, sandbox=sandbox,
        env=env or {},
    )  # fmt: skip
    return start_error(target) is None


@needs_sandbox
def test_in_the_sandbox_package_managers_are_offline_unless_the_target_says_otherwise(tmp_path: Path) -> None:
    every = " and ".join(f"os.environ.get({k!r}) == {v!r}" for k, v in OFFLINE_ENV.items())
    assert _start_checking(tmp_path, every, SandboxMode.REQUIRED)
    assert _start_checking(tmp_path, "os.environ.get('UV_OFFLINE') == '0'", SandboxMode.REQUIRED, {"UV_OFFLINE": "0"})
    # Outside the sandbox the network is the server's: nothing is set.
    nothing = " and ".join(f"{k!r} not in os.environ" for k in OFFLINE_ENV)
    assert _start_checking(tmp_path, nothing, SandboxMode.OFF)


@needs_sandbox
def test_npx_with_a_package_in_no_cache_fails_at_once_with_the_fix(tmp_path: Path) -> None:
    npx = shutil.which("npx")
    assert npx is not None, "npx (Node.js) is part of the test environment: scripts/install-system-packages.sh"
    target = TargetConfig(
        kind=TargetKind.STDIO, command=npx, args=("-y", "fuzzgate-test-package-never-published-7f3a"), cwd=tmp_path,
        sandbox=SandboxMode.REQUIRED,
    )  # fmt: skip
    error = start_error(target)
    assert error is not None
    assert "`npx` fetches the package when it starts, and in the sandbox it has no network" in error.message
    assert "\n" not in error.message and "no answer to initialize" not in error.message
    assert error.hint is not None and error.hint.startswith("run the command once outside the sandbox")
    assert error.detail is not None and "ENOTCACHED" in error.detail


def test_a_package_installed_above_the_scope_is_found(tmp_path: Path) -> None:
    """`npx mcp-server-everything` in a directory whose parent has it installed: the launcher finds
    it by hand, not from fuzzgate's copy of the scope, and "install it" was no advice."""
    from fuzzgate.sandbox.jail import installed_above

    project = tmp_path / "servers" / "everything"
    project.mkdir(parents=True)
    modules = tmp_path / "servers" / "node_modules"
    (modules / ".bin").mkdir(parents=True)
    (modules / ".bin" / "mcp-server-everything").write_text("")
    (modules / "@modelcontextprotocol" / "server-memory").mkdir(parents=True)
    (modules / "@modelcontextprotocol" / "server-memory" / "package.json").write_text("{}")
    scope = (project,)
    assert installed_above("npx", ["-y", "mcp-server-everything", "stdio"], scope) == tmp_path / "servers"
    assert installed_above("npx", ["@modelcontextprotocol/server-memory@1.0.0"], scope) == tmp_path / "servers"
    assert installed_above("npm", ["exec", "mcp-server-everything"], scope) == tmp_path / "servers"
    # Not installed above, not a Node launcher, or no package named: nothing to say.
    assert installed_above("npx", ["mcp-server-other"], scope) is None
    assert installed_above("uvx", ["mcp-server-everything"], scope) is None
    assert installed_above("node", ["index.js"], scope) is None
    assert installed_above("npx", ["-y"], scope) is None
