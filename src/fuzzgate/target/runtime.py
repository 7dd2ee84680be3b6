"""What a server fuzzgate started runs on, read from its processes: the MCP SDK, for the checks that
tell the SDK's symptoms from the server's (`check.sdk`).

A Python interpreter maps the extension modules it imports (`pydantic_core`, which every release of
the Python SDK depends on, among them) from the `site-packages` directories it imports from; the
SDK's distribution metadata (`mcp-X.Y.Z.dist-info`) lies in one of them. `/proc/PID/maps` names
those files as the process sees them, and `/proc/PID/root` leads to that view (the jail's own mount
namespace). Where there is no /proc, or the server is no Python process, nothing is known: a
Node.js server maps no JavaScript file, and its SDK is known from a stack trace only.
"""

from __future__ import annotations

import re
from pathlib import Path

from fuzzgate.check.sdk import Sdk, installed_sdk
from fuzzgate.sandbox.process_tree import ProcessTable

_SITE_PACKAGES = re.compile(r"\s(/\S*?/(?:site|dist)-packages)/")
_MAPS_BYTES = 1 << 20


def server_sdk(leader: int | None) -> Sdk | None:
    """The Python SDK the server started as process `leader` (or one of its descendants, the
    server behind a launcher or fuzzgate's jail) imports from, if it can be read."""
    if leader is None:
        return None
    table = ProcessTable.read()
    for pid in sorted(table.descendants({leader})):
        for directory in _site_packages(pid):
            sdk = installed_sdk(_seen_by(pid, directory))
            if sdk is not None:
                return sdk
    return None


def _site_packages(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as maps:
            text = maps.read(_MAPS_BYTES)
    except OSError:
        return []
    return list(dict.fromkeys(_SITE_PACKAGES.findall(text)))


def _seen_by(pid: int, directory: str) -> str:
    """`directory` as process `pid` sees it, when fuzzgate can look through its root."""
    through_root = f"/proc/{pid}/root{directory}"
    try:
        if Path(through_root).is_dir():
            return through_root
    except OSError:
        pass
    return directory
