"""An MCP server whose bugs sit behind a check only an accepted value gets past: a shell injection
reachable only with a project id the server itself lists, and a crash reachable only with a known
time-zone name followed by one more path segment.

    python gated.py --root DIR

- `list_projects()`: the projects' ids (opaque `prj_...`, named by no schema or description);
- `build_project(project_id, flags)`: refuses an unknown id, then runs `sh -c "echo building ID
  FLAGS"`: `$(...)`, `;`, `|` in the flags run;
- `build_project_safe(project_id, flags)`: clean: the same check, then `echo` with the flags as one
  argument;
- `zone_time(timezone)`: refuses a zone it does not know; for `ZONE/NAME` of a known ZONE it looks
  NAME up in a table that lacks it: KeyError;
- `zone_time_safe(timezone)`: clean: the same lookups, refusing an unknown part.
"""

from __future__ import annotations

import argparse
import logging
import subprocess
import sys
from pathlib import Path
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

parser = argparse.ArgumentParser()
parser.add_argument("--root", type=Path, required=True)
ROOT: Path = parser.parse_args().root.resolve()

# Plain text logs: MCPServer would draw each traceback through rich, a CPU-bound third of a second
# per exception (tests/servers/sdk_strict.py keeps rich, as most real servers on the SDK log).
logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
app = MCPServer("gated", log_level="WARNING")
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)

PROJECTS = ("prj_7f3a91", "prj_c04e2b")
ZONES = frozenset(
    {"UTC", "Europe/London", "Europe/Paris", "Europe/Berlin", "Asia/Tokyo", "Asia/Kolkata", "Asia/Shanghai",
     "America/New_York", "America/Chicago", "America/Los_Angeles", "America/Sao_Paulo", "Australia/Sydney",
     "Africa/Cairo", "Etc/UTC", "Europe/Madrid", "Europe/Rome", "Asia/Singapore", "Asia/Dubai", "Pacific/Auckland"}
)  # fmt: skip
SUB_ZONES: dict[str, dict[str, str]] = {"Europe/London": {"City": "+00:00"}}
"""The few zones with named parts; every other known zone has none."""

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
    return _run(f"echo building {known} {flags}", shell=True)  # planted: the flags are shell syntax


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
        return {"zone": zone, "offset": SUB_ZONES.get(zone, {})[name]}  # planted: KeyError
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
