"""What a server fuzzgate started runs on, read from its processes: the MCP SDK, for the checks that
tell the SDK's symptoms from the server's (`check.sdk`).

A Python interpreter maps the extension modules it imports (`pydantic_core`, which every release of
the Python SDK depends on, among them) from the `site-packages` directories it imports from; the
SDK's distribution metadata (`mcp-X.Y.Z.dist-info`) lies in one of them. `/proc/PID/maps` names
those files as the process sees them, and `/proc/PID/root` leads to that view (the jail's own mount
namespace). A Node.js process maps no JavaScript file: its SDK is the `@modelcontextprotocol/sdk`
that Node.js's `require` finds from the script it runs (the `node_modules` beside the script and
above it, after the links to it are followed), else in a `NODE_PATH` directory, with the version its
`package.json` gives. Where there is no /proc, or the server is neither, nothing is known.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from fuzzgate.check.sdk import TYPESCRIPT_SDK, Sdk, installed_sdk, package_json_version
from fuzzgate.sandbox.process_tree import ProcessTable

_SITE_PACKAGES = re.compile(r"\s(/\S*?/(?:site|dist)-packages)/")
_MAPS_BYTES = 1 << 20


def server_sdk(leader: int | None) -> Sdk | None:
    """The SDK the server started as process `leader` (or one of its descendants, the server behind
    a launcher or fuzzgate's jail) runs on, if it can be read: the Python SDK it imports from, or
    the TypeScript SDK a Node.js process loads."""
    if leader is None:
        return None
    table = ProcessTable.read()
    for pid in sorted(table.descendants({leader})):
        for directory in _site_packages(pid):
            sdk = installed_sdk(_seen_by(pid, directory))
            if sdk is not None:
                return sdk
        sdk = _node_sdk(pid)
        if sdk is not None:
            return sdk
    return None


_NODE_SDK_PACKAGE = f"{TYPESCRIPT_SDK}/package.json"


def _node_sdk(pid: int) -> Sdk | None:
    """The TypeScript SDK Node.js process `pid` loads, as `require` finds it from its script."""
    argv = _nul_separated(f"/proc/{pid}/cmdline")
    if not argv or not Path(argv[0]).name.startswith("node"):
        return None
    try:
        cwd = os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return None
    # The first argument that names a file is the script (or a preloaded module beside it).
    for argument in argv[1:]:
        if argument.startswith("-"):
            continue
        script = Path(_seen_by(pid, os.path.join(cwd, argument)))
        try:
            if not script.is_file():
                continue
            script = script.resolve()
        except OSError:
            continue
        found = _first_file(directory / "node_modules" / _NODE_SDK_PACKAGE for directory in script.parents)
        if found is not None:
            return Sdk(TYPESCRIPT_SDK, package_json_version(str(found)))
        break
    paths = _environment(pid).get("NODE_PATH", "").split(os.pathsep)
    found = _first_file(Path(_seen_by(pid, entry)) / _NODE_SDK_PACKAGE for entry in paths if entry)
    return Sdk(TYPESCRIPT_SDK, package_json_version(str(found))) if found is not None else None


def _first_file(candidates: Iterable[Path]) -> Path | None:
    for candidate in candidates:
        try:
            if candidate.is_file():
                return candidate
        except OSError:
            continue
    return None


def _nul_separated(path: str) -> list[str]:
    try:
        data = Path(path).read_bytes()
    except OSError:
        return []
    return [part.decode("utf-8", "surrogateescape") for part in data.split(b"\0") if part]


def _environment(pid: int) -> dict[str, str]:
    return dict(entry.split("=", 1) for entry in _nul_separated(f"/proc/{pid}/environ") if "=" in entry)


def _site_packages(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as maps:
            text = maps.read(_MAPS_BYTES)
    except OSError:
        return []
    return list(dict.fromkeys(_SITE_PACKAGES.findall(text)))


def _seen_by(pid: int, directory: str) -> str:
    """`directory` (or a file) as process `pid` sees it, when fuzzgate can look through its root."""
    through_root = f"/proc/{pid}/root{directory}"
    try:
        if Path(through_root).exists():
            return through_root
    except OSError:
        pass
    return directory
