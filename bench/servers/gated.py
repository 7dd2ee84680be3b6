"""bench-gated: an MCP server (MCPServer) confined to `--root DIR` whose bugs sit behind a check only an
accepted value gets past. Bugs GAT-1, GAT-2.

    python gated.py --root DIR    # stdio; BENCH_GROUND_TRUTH=FILE records triggered bugs

- `build_project(project_id, flags)`: refuses an id `list_projects` does not list (opaque `prj_...`,
  named by no schema or description), then pastes the flags into `sh -c` (GAT-1);
- `zone_time(timezone)`: refuses a zone it does not know; `ZONE/NAME` of a known ZONE looks NAME up
  in a table that lacks it (GAT-2).

The clean look-alikes `build_project_safe` (the flags stay one argument of `echo`) and
`zone_time_safe` (an unknown part is refused) go through the same checks.
"""

from __future__ import annotations

import subprocess
from typing import Annotated

import _scope
import _truth
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

ROOT = _scope.root_from_argv(__doc__)
app = MCPServer("bench-gated", version="1.0.0")
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
PROJECTS = ("prj_7f3a91", "prj_c04e2b")
ZONES = frozenset(
    {"UTC", "Europe/London", "Europe/Paris", "Europe/Berlin", "Asia/Tokyo", "Asia/Kolkata", "Asia/Shanghai",
     "America/New_York", "America/Chicago", "America/Los_Angeles", "America/Sao_Paulo", "Australia/Sydney",
     "Africa/Cairo", "Etc/UTC", "Europe/Madrid", "Europe/Rome", "Asia/Singapore", "Asia/Dubai", "Pacific/Auckland"}
)  # fmt: skip
SUB_ZONES: dict[str, dict[str, str]] = {"Europe/London": {"City": "+00:00"}}
SHELL_SYNTAX = frozenset(";&|`$<>\n")

ProjectId = Annotated[str, Field(max_length=100, description="The project's id.")]
Flags = Annotated[str, Field(max_length=300, description="Extra build flags.", examples=["release"])]
Zone = Annotated[str, Field(max_length=100, description="IANA timezone name, e.g. 'Europe/London'.")]


def _project(project_id: str) -> str:
    if project_id not in PROJECTS:
        raise ToolError(f"unknown project {project_id!r}")
    return project_id


def _run(command: str | list[str], *, shell: bool = False) -> str:
    try:
        done = subprocess.run(
            command, shell=shell, cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=5
        )
    except (ValueError, subprocess.TimeoutExpired):
        raise ToolError("the build failed") from None
    if done.returncode != 0:
        raise ToolError(f"the build failed (exit {done.returncode})")
    return done.stdout.strip()


@app.tool(annotations=READ_ONLY)
def list_projects() -> dict[str, list[dict[str, str]]]:
    """The projects."""
    return {"projects": [{"project_id": p} for p in PROJECTS]}


@app.tool(annotations=READ_ONLY)
def build_project(project_id: ProjectId, flags: Flags) -> str:
    """Build a project."""
    known = _project(project_id)
    if SHELL_SYNTAX & set(flags):
        _truth.triggered("GAT-1")  # the flags are pasted into a shell command line
    return _run(f"echo building {known} {flags}", shell=True)


@app.tool(annotations=READ_ONLY)
def build_project_safe(project_id: ProjectId, flags: Flags) -> str:
    """Build a project (the flags stay one argument)."""
    known = _project(project_id)
    return _run(["echo", "building", known, flags])


def _zone(timezone: str) -> tuple[str, str]:
    if timezone in ZONES:
        return timezone, ""
    head, _, name = timezone.rpartition("/")
    if head in ZONES and name:
        return head, name
    raise ToolError(f"unknown time zone {timezone!r}")


@app.tool(annotations=READ_ONLY)
def zone_time(timezone: Zone) -> dict[str, str]:
    """The UTC offset of a time zone."""
    zone, name = _zone(timezone)
    if name:
        if name not in SUB_ZONES.get(zone, {}):
            _truth.triggered("GAT-2")
        return {"zone": zone, "offset": SUB_ZONES.get(zone, {})[name]}
    return {"zone": zone, "offset": "+00:00"}


@app.tool(annotations=READ_ONLY)
def zone_time_safe(timezone: Zone) -> dict[str, str]:
    """The UTC offset of a time zone (an unknown part is refused)."""
    zone, name = _zone(timezone)
    if name:
        offset = SUB_ZONES.get(zone, {}).get(name)
        if offset is None:
            raise ToolError(f"{zone} has no part {name!r}")
        return {"zone": zone, "offset": offset}
    return {"zone": zone, "offset": "+00:00"}


if __name__ == "__main__":
    app.run()
