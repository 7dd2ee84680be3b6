"""Coverage of a fuzzgate run measured independently of the run: its `--trace` replayed, call by call
and in order, against the same server started under coverage.py (`covserve.py`), with the coverage
so far read at chosen calls. Used by bench/corpus.py for every feedback mode alike.

    python covreplay.py --trace T --data-dir D --out R.json [--at N ...] [--restart-after TOOL#CASE ...]
                        [--outside DIR --scope DIR ... [--cwd NAME]] -- COMMAND ...

COMMAND is the server's command line with `{data}` and `{control}` where covserve.py's `--data` and
`--control` go; each server life gets its own. The replay follows the run: a new server life after
each call fuzzgate restarted the server after (the console's "restarted the server (TOOL case N:
...)" lines, passed as `--restart-after`), and whenever the replayed server dies. A call the run saw
time out is given `--hang-wait` seconds, then the replay goes on. Only tool calls are replayed
(resources, prompts and raw protocol messages are counted as skipped); every call's outcome class
is compared with the run's (`agreement` in the result: `same`, or `RUN->REPLAY`), the replay's
fidelity.

Paths are put back where the replay's server finds them. fuzzgate gives each server life a
throwaway layer, `.../fuzzgate-XXXX/s<N>/outside/` holding canaries and, as `scope/<i>-<name>/`,
a copy (or overlay) of each scope dir, with the server's arguments and roots rewritten to them;
probes go towards `outside` (written `@@FUZZGATE_OUTSIDE@@` in the trace). The replay builds the
same layout afresh for each server life under `--outside` (canaries like fuzzgate's: a text file, a
`.env` file, a git repository; each `--scope` dir copied to `scope/<i>-<name>`, `<i>` as the trace
numbers it), rewrites every layer path in a call's arguments to it (so `scope/1-x/../..` lands where
it landed), lists the copies as roots, and starts the server in the copy of its working directory
(`--cwd NAME`) with `{scope:NAME}` in COMMAND replaced by that copy's path.

What the counts are: the union over all server lives of coverage.py's arcs (`(from, to)` line pairs,
negative for entry and exit) and of the lines they touch, in the measured files only, less the
bench servers' ground-truth plumbing (`NOT_SERVER_CODE`). Lines a server
ran in the call that killed it with `os._exit` are lost (no handler runs); see covserve.py.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types import ListRootsResult, Root

from coverage import CoverageData

ANSWERED = ("ok", "tool_error", "rpc_error", "output_invalid")
"""A run's outcome statuses that mean the server answered; `closed` and `timeout` are the others."""


# ------------------------------------------------------------------------------- reading the data


NOT_SERVER_CODE = ("_truth.py", "_scope.py")
"""Files of bench/servers that are the benchmark's plumbing, not the code under test: never counted
(`_truth`'s SDK-drop recorder runs only for a request no SDK client can send, so a replay would
miss it)."""

Lines = frozenset[tuple[str, int]]
Arcs = frozenset[tuple[str, int, int]]


@dataclass
class CoverageReader:
    """The union of the data files under one directory (`*.cov.*`), each read again only when it
    changed (a live server's file grows with every flush)."""

    directory: Path
    _seen: dict[Path, tuple[tuple[int, int], Lines, Arcs]] = field(default_factory=dict)

    def read(self) -> tuple[set[tuple[str, int]], set[tuple[str, int, int]]]:
        """(lines, arcs) covered so far."""
        lines: set[tuple[str, int]] = set()
        arcs: set[tuple[str, int, int]] = set()
        for path in sorted(self.directory.glob("*.cov.*")):
            stat = path.stat()
            stamp = (stat.st_mtime_ns, stat.st_size)
            cached = self._seen.get(path)
            if cached is None or cached[0] != stamp:
                cached = (stamp, *_read_one(path))
                self._seen[path] = cached
            lines |= cached[1]
            arcs |= cached[2]
        return lines, arcs


def _read_one(path: Path) -> tuple[Lines, Arcs]:
    data = CoverageData(basename=str(path))
    try:
        data.read()
    except Exception:  # a file cut short by a kill mid-write: what it held is lost, not the replay
        return frozenset(), frozenset()
    files = [f for f in data.measured_files() if os.path.basename(f) not in NOT_SERVER_CODE]
    lines = {(f, n) for f in files for n in data.lines(f) or ()}
    arcs = {(f, a, b) for f in files for a, b in data.arcs(f) or ()}
    return frozenset(lines), frozenset(arcs)


def count(directory: Path) -> dict[str, int]:
    lines, arcs = CoverageReader(directory).read()
    return {"lines": len(lines), "arcs": len(arcs), "files": len({f for f, _ in lines})}


# ------------------------------------------------------------------------------- one server life


@dataclass
class Life:
    number: int
    data: Path
    control: Path
    stack: contextlib.AsyncExitStack
    client: Client


def _flush(control: Path) -> bool:
    """Ask a live server's covserve to save its data; False when it cannot (the server is gone)."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(10)
            sock.connect(str(control))
            sock.sendall(b"flush\n")
            return sock.makefile("rb").readline() == b"ok\n"
    except OSError:
        return False


def _classify(exc: BaseException) -> str:
    for leaf in _leaves(exc):
        if isinstance(leaf, MCPError):
            return "closed" if leaf.error.code == -32000 else "rpc_error"
        if isinstance(leaf, RuntimeError) and "structured content" in str(leaf):
            return "output_invalid"
    return "unsendable"


def _encodable(arguments: dict[str, Any]) -> bool:
    """Whether the SDK's stdio writer can send these arguments: a lone surrogate (fuzzgate sends
    one through its own framing) fails its UTF-8 encoding and takes the client down with it. The
    server drops such a request unparsed (SDK-DROP), so skipping it loses no coverage."""
    try:
        json.dumps(arguments, ensure_ascii=False).encode("utf-8")
    except (UnicodeEncodeError, ValueError):
        return False
    return True


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


@dataclass
class Layer:
    """The replay's stand-in for fuzzgate's per-life layer (module docstring)."""

    outside: Path
    scopes: dict[str, tuple[int, Path]]
    """name -> (the index the trace gives it, the original dir)."""
    cwd: str | None = None

    def copy_of(self, name: str) -> Path:
        index, _ = self.scopes[name]
        return self.outside / "scope" / f"{index}-{name}"

    def rebuild(self) -> None:
        shutil.rmtree(self.outside, ignore_errors=True)
        make_outside(self.outside)
        for name, (_, original) in self.scopes.items():
            shutil.copytree(original, self.copy_of(name), symlinks=True)

    def localize(self, value: Any) -> Any:
        """`value` with fuzzgate's layer paths and outside placeholder rewritten to this layer."""
        if isinstance(value, dict):
            return {k: self.localize(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.localize(v) for v in value]
        if not isinstance(value, str):
            return value
        return _LAYER.sub(str(self.outside), value).replace(_OUTSIDE, str(self.outside))

    def fill(self, arg: str) -> str:
        for name in self.scopes:
            arg = arg.replace("{scope:" + name + "}", str(self.copy_of(name)))
        return arg


@dataclass
class Replay:
    command: list[str]
    data_dir: Path
    layer: Layer | None
    hang_wait_s: float
    call_timeout_s: float
    lives: int = 0
    life: Life | None = None
    stderr: Any = None

    async def start(self) -> Life:
        self.lives += 1
        data = self.data_dir / f"l{self.lives:04d}.cov"
        control = self.data_dir / f"l{self.lives:04d}.sock"
        argv = [a.replace("{data}", str(data)).replace("{control}", str(control)) for a in self.command]
        env = {k: v for k, v in os.environ.items() if k != "BENCH_GROUND_TRUTH"}
        cwd, listed = str(Path.cwd()), []
        if self.layer is not None:
            self.layer.rebuild()  # a fresh layer per server life, as fuzzgate gives one
            argv = [self.layer.fill(a) for a in argv]
            listed = [self.layer.copy_of(name) for name in self.layer.scopes]
            cwd = str(self.layer.copy_of(self.layer.cwd)) if self.layer.cwd else cwd
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=cwd)
        roots = ListRootsResult(roots=[Root.model_validate({"uri": r.as_uri(), "name": r.name}) for r in listed])

        async def list_roots(context: Any) -> ListRootsResult:
            return roots

        # No cancel scope around entering or leaving the client: it opens task groups that must
        # close in the scope they opened in. The SDK bounds its own shutdown (stdin closed, 2 s,
        # SIGTERM, 2 s, SIGKILL); the bench servers all start.
        stack = contextlib.AsyncExitStack()
        await stack.__aenter__()
        try:
            client = await stack.enter_async_context(
                Client(stdio_client(params, errlog=self.stderr), mode="auto", list_roots_callback=list_roots)
            )
        except BaseException:
            with contextlib.suppress(Exception):
                await stack.aclose()
            raise
        self.life = Life(self.lives, data, control, stack, client)
        return self.life

    async def stop(self) -> None:
        if self.life is None:
            return
        life, self.life = self.life, None
        _flush(life.control)
        with contextlib.suppress(Exception):  # a server that died leaves its error in the client's group
            await life.stack.aclose()

    def flush(self) -> None:
        if self.life is not None:
            _flush(self.life.control)

    async def call(self, tool: str, arguments: Any, recorded: str) -> str:
        """Send one call on the live server (starting one when none is); the outcome class."""
        life = self.life or await self.start()
        if not isinstance(arguments, dict) or not _encodable(arguments):
            return "unsendable"
        wait = self.hang_wait_s if recorded == "timeout" else self.call_timeout_s
        try:
            with anyio.fail_after(wait):
                result = await life.client.call_tool(tool, arguments)
            return "tool_error" if result.is_error else "ok"
        except TimeoutError:
            self.flush()
            return "timeout"
        except Exception as exc:
            outcome = _classify(exc)
            if outcome == "closed":
                await self.stop()
            return outcome


async def replay(
    records: list[dict[str, Any]],
    run: Replay,
    at: list[int],
    restart_after: set[tuple[str, int]],
) -> dict[str, Any]:
    """Replay `records`; the coverage after each call index in `at` (0-based counts of calls done)."""
    reader = CoverageReader(run.data_dir)
    points: list[dict[str, Any]] = []
    agreement: Counter[str] = Counter()
    skipped = 0
    wanted = sorted(set(at))
    started = time.monotonic()

    def checkpoint(done: int) -> None:
        run.flush()
        lines, arcs = reader.read()
        points.append({"calls": done, "lines": len(lines), "arcs": len(arcs)})

    for index, record in enumerate(records):
        while wanted and wanted[0] <= index:
            checkpoint(wanted.pop(0))
        recorded = str(record.get("status"))
        if record.get("surface", "tool") != "tool" or recorded not in (*ANSWERED, "closed", "timeout"):
            skipped += 1
            continue
        tool = str(record["tool"])
        if recorded == "closed":
            run.flush()  # what this life ran so far, before the call that may kill it
        arguments = run.layer.localize(record.get("arguments")) if run.layer else record.get("arguments")
        got = await run.call(tool, arguments, recorded)
        agreement["same" if got == recorded else f"{recorded}->{got}"] += 1
        if (tool, int(record.get("case", -1))) in restart_after or recorded == "closed":
            await run.stop()
    await run.stop()
    lines, arcs = reader.read()
    for done in wanted:
        points.append({"calls": done, "lines": len(lines), "arcs": len(arcs)})
    return {
        "points": points,
        "final": {"calls": len(records), "lines": len(lines), "arcs": len(arcs), "files": len({f for f, _ in lines})},
        "lives": run.lives,
        "skipped": skipped,
        "agreement": dict(agreement),
        "replay_s": round(time.monotonic() - started, 1),
    }


_LAYER = re.compile(r"(?:/[^/\s\"']+)*?/fuzzgate-\w+/s\d+/outside(?=/|$|[\s\"'])")
_SCOPE_INDEX = re.compile(r"/fuzzgate-\w+/s\d+/outside/scope/(\d+)-([^/\s\"']+)")
_OUTSIDE = "@@FUZZGATE_OUTSIDE@@"


def scope_indexes(records: list[dict[str, Any]]) -> dict[str, int]:
    """name -> the index fuzzgate's layer gave that scope dir, as the trace's arguments show it."""
    found: dict[str, int] = {}
    for record in records:
        for match in _SCOPE_INDEX.finditer(json.dumps(record.get("arguments"))):
            found.setdefault(match.group(2), int(match.group(1)))
    return found


def make_outside(path: Path) -> None:
    """A directory like fuzzgate's watched `outside`: a text file, a `.env` file, a git repository."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "fuzzgate-canary.txt").write_text("replay canary\n")
    (path / ".env").write_text("REPLAY_CANARY=1\n")
    repo = path / "fuzzgate-canary-repo"
    if not repo.exists():
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(path), "GIT_AUTHOR_NAME": "replay",
               "GIT_AUTHOR_EMAIL": "r@example.invalid", "GIT_COMMITTER_NAME": "replay",
               "GIT_COMMITTER_EMAIL": "r@example.invalid"}  # fmt: skip
        repo.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=repo, env=env, check=False, capture_output=True)
        (repo / "README").write_text("canary\n")
        subprocess.run(["git", "add", "README"], cwd=repo, env=env, check=False, capture_output=True)
        subprocess.run(["git", "commit", "-q", "-m", "canary"], cwd=repo, env=env, check=False, capture_output=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--trace", type=Path, required=True)
    p.add_argument("--data-dir", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--at", type=int, action="append", default=[], help="a call count to read coverage after")
    p.add_argument("--restart-after", action="append", default=[], help="TOOL#CASE")
    p.add_argument("--scope", type=Path, action="append", default=[], help="a scope dir (copied per life)")
    p.add_argument("--cwd", help="the scope dir (by name) the server starts in")
    p.add_argument("--outside", type=Path, help="the replay's layer (made afresh per life)")
    p.add_argument("--hang-wait", type=float, default=1.0)
    p.add_argument("--call-timeout", type=float, default=10.0)
    p.add_argument("command", nargs=argparse.REMAINDER)
    ns = p.parse_args()
    command = ns.command[1:] if ns.command[:1] == ["--"] else ns.command
    records = [json.loads(line) for line in ns.trace.read_text(encoding="utf-8").splitlines() if line.strip()]
    restarts = {(tool, int(case)) for tool, _, case in (r.rpartition("#") for r in ns.restart_after)}
    ns.data_dir.mkdir(parents=True, exist_ok=True)
    with (ns.data_dir / "servers.log").open("w") as stderr:
        layer = None
        if ns.outside is not None:
            indexes = scope_indexes(records)
            scopes = {p.name: (indexes.get(p.name, i), p) for i, p in enumerate(ns.scope)}
            layer = Layer(ns.outside, scopes, ns.cwd)
        run = Replay(command, ns.data_dir, layer, ns.hang_wait, ns.call_timeout, stderr=stderr)
        result = anyio.run(replay, records, run, ns.at, restarts)
    ns.out.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
