"""bench-jobs: a job-runner MCP server (MCPServer) with a planted hang, a slow call, a bug behind an
enum/example conjunction, stdout corruption and a stateful double-cancel. Bugs JOB-1 .. JOB-5.

    python jobs.py              # stdio; set BENCH_GROUND_TRUTH=FILE to record triggered bugs
"""

from __future__ import annotations

import zlib
from enum import StrEnum
from typing import Annotated, Literal

import _truth
import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

app = MCPServer("bench-jobs", version="1.0.0", instructions="Queue, watch and cancel batch jobs.")
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False)

JobId = Annotated[int, Field(ge=1, le=8, description="A job in the current batch (1..8).", examples=[3])]


@app.tool(annotations=READ_ONLY)
async def wait_for_job(
    job_id: JobId,
    mode: Annotated[Literal["poll", "block"], Field(description="'block' waits for the job lock.")] = "poll",
) -> str:
    """Wait for a job to finish, or poll its state once."""
    if mode == "block":
        # JOB-1: waits on a lock the scheduler never releases.
        _truth.triggered("JOB-1")
        await anyio.sleep_forever()
    return f"job {job_id}: running"


@app.tool(annotations=READ_ONLY)
async def estimate_runtime(
    nodes: Annotated[int, Field(ge=1, le=64, description="Cluster nodes to plan for.", examples=[4])],
    hours_of_input: Annotated[float, Field(ge=0, le=1000)] = 1.0,
) -> str:
    """Estimate how long a job takes on a number of nodes."""
    if nodes >= 48:
        # JOB-2: large clusters are planned by brute force.
        _truth.triggered("JOB-2")
        await anyio.sleep(3.0)
    return f"about {hours_of_input / nodes * 60:.1f} minutes on {nodes} nodes"


class Queue(StrEnum):
    DEFAULT = "default"
    BATCH = "batch"
    GPU = "gpu"


_GPU_RESERVATIONS: dict[str, str | None] = {"nightly-rebuild": None, "training": "pool-a"}


@app.tool(annotations=WRITES)
def schedule_job(
    label: Annotated[str, Field(min_length=1, max_length=64, examples=["nightly-rebuild"])],
    queue: Queue = Queue.DEFAULT,
    priority: Annotated[int, Field(ge=0, le=9)] = 5,
) -> str:
    """Queue a job under a label."""
    pool = "shared"
    if queue is Queue.GPU and label in _GPU_RESERVATIONS:
        if label == "nightly-rebuild":
            # JOB-3: the nightly reservation has no pool yet; None.upper() raises.
            _truth.triggered("JOB-3")
        pool = _GPU_RESERVATIONS[label].upper()  # type: ignore[union-attr]
    return f"queued {label!r} on {queue.value} ({pool}), priority {priority}"


@app.tool(annotations=READ_ONLY)
def tail_log(
    job_id: JobId,
    lines: Annotated[int, Field(ge=1, le=500)] = 20,
    follow: Annotated[bool, Field(description="Keep printing new lines.")] = False,
) -> str:
    """The last lines of a job's log."""
    text = "\n".join(f"[job {job_id}] step {n} ok" for n in range(1, min(lines, 5) + 1))
    if follow:
        # JOB-4: follow mode echoes the log to the process's stdout, which is the JSON-RPC stream.
        _truth.triggered("JOB-4")
        _truth.write_real_stdout(f"[job {job_id}] following log...\n")
    return text


_QUEUED = {n: f"job-{n}" for n in range(1, 9)}


@app.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True))
def cancel_job(job_id: JobId) -> str:
    """Cancel a queued job (it stays in the history)."""
    if job_id not in _QUEUED:
        # JOB-5: cancelling twice pops a job that is no longer queued (KeyError).
        _truth.triggered("JOB-5")
    name = _QUEUED.pop(job_id)
    return f"{name} cancelled"


# ------------------------------------------------------------------------------------------ clean


class State(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"


@app.tool(annotations=READ_ONLY)
def list_jobs(state: State = State.QUEUED, limit: Annotated[int, Field(ge=1, le=50)] = 10) -> list[str]:
    """Jobs in a state."""
    if state is State.QUEUED:
        return sorted(_QUEUED.values())[:limit]
    return [f"job-{n}" for n in range(1, 9) if zlib.crc32(f"{state}{n}".encode()) % 2][:limit]


@app.tool(annotations=READ_ONLY)
def job_status(job_id: JobId) -> str:
    """A job's state."""
    return f"job {job_id}: {'queued' if job_id in _QUEUED else 'cancelled'}"


@app.tool(annotations=READ_ONLY)
def parse_cron(expression: Annotated[str, Field(max_length=100, examples=["0 3 * * *"])]) -> str:
    """Check a five-field cron expression."""
    fields = expression.split()
    if len(fields) != 5:
        raise ToolError(f"expected 5 fields, got {len(fields)}")
    return "fields: " + " | ".join(fields)


# ------------------------------------------------------------------------------------ destructive


@app.tool(annotations=ToolAnnotations(destructive_hint=True, read_only_hint=False))
def purge_finished_jobs(older_than_days: Annotated[int, Field(ge=0, le=365)] = 7) -> str:
    """Remove finished jobs and their logs."""
    _truth.destructive("purge_finished_jobs")
    return "purged"


if __name__ == "__main__":
    app.run("stdio")
