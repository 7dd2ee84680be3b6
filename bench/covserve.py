"""Run a Python MCP server under coverage.py: the benchmarks' own measure of the code a fuzzer
reached (bench/corpus.py), independent of any coverage fuzzgate collects itself.

    python covserve.py --data PREFIX --source DIR|PACKAGE [--source ...] [--control SOCKET]
                       (--module NAME | SCRIPT) [ARG ...]

- Branch coverage (coverage.py's arcs) of the code under each `--source` (a directory, or an
  importable package's name: coverage.py's `source`; no glob characters, so the command line
  survives a fuzzer that hands it to a shell), written to `PREFIX.<host>.<pid>.<random>`: one
  SQLite file per process, read with `covreplay.CoverageReader`. No config file is read: the
  repository's `[tool.coverage]` is for its tests.
- The data is saved on a normal exit, on SIGTERM and SIGINT, and on SIGABRT or SIGSEGV sent with
  `kill` (how the planted crashes die); the signal is then raised again with its default action,
  so the process dies as it would have. `os._exit` (another planted crash) skips every handler:
  whatever the process ran since the last save is lost.
- With `--control SOCKET`, a Unix socket on which each line `flush` saves the data so far and is
  answered `ok`: the replay driver asks for it between calls. With `--autosave S`, the data is
  saved every S seconds as well: mcp-fuzzer ends its servers with SIGKILL, which no handler sees,
  so only what was saved before it counts (at most the last S seconds are lost).
- A save never clears the tracer's data (coverage.py's `flush_data` would, and arcs the server
  records between its copy and its clear would be lost when a save runs while the server works):
  every save writes everything so far, which the SQLite file merges. The threads that save start
  before coverage does, so they are not measured.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import runpy
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from types import FrameType

import coverage

FATAL = (signal.SIGTERM, signal.SIGINT, signal.SIGABRT, signal.SIGSEGV)


_LOCK = threading.Lock()


def _save(cov: list[coverage.Coverage]) -> None:
    if cov:
        with _LOCK:
            cov[0].get_data()  # the tracer's data into the SQLite file


def _serve_control(path: Path, ready: threading.Event, cov: list[coverage.Coverage]) -> None:
    path.unlink(missing_ok=True)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(path))
        server.listen(4)
        ready.set()
        while True:
            conn, _ = server.accept()
            with conn, conn.makefile("rwb") as stream:
                for line in stream:
                    if line.strip() == b"flush":
                        _save(cov)
                        stream.write(b"ok\n")
                        stream.flush()


def _autosave(every_s: float, cov: list[coverage.Coverage]) -> None:
    while True:
        time.sleep(every_s)
        with contextlib.suppress(Exception):
            _save(cov)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--data", required=True, help="data file prefix")
    p.add_argument("--source", action="append", required=True, help="a measured directory or package")
    p.add_argument("--control", type=Path, help="Unix socket answering `flush`")
    p.add_argument("--autosave", type=float, help="save every this many seconds too")
    p.add_argument("--module", help="run this module as __main__ (like python -m)")
    p.add_argument("argv", nargs=argparse.REMAINDER, help="SCRIPT [ARG ...], or the module's ARG ...")
    ns = p.parse_args()
    holder: list[coverage.Coverage] = []
    if ns.control is not None:
        ready = threading.Event()
        threading.Thread(target=_serve_control, args=(ns.control, ready, holder), daemon=True).start()
        ready.wait(10)
    if ns.autosave:
        threading.Thread(target=_autosave, args=(ns.autosave, holder), daemon=True).start()
    cov = coverage.Coverage(data_file=ns.data, data_suffix=True, branch=True, source=ns.source, config_file=False)

    def save_and_die(signum: int, frame: FrameType | None) -> None:
        with contextlib.suppress(Exception):  # dying as planned matters more than the last data
            cov.stop()
            cov.save()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    for signum in FATAL:
        signal.signal(signum, save_and_die)
    args = list(ns.argv)
    if args and args[0] == "--":
        args = args[1:]
    cov.start()
    # The collector's own method, shadowed: saves must not clear what they copied (docstring).
    cov._collector._clear_data = lambda: None  # type: ignore[method-assign,union-attr]
    holder.append(cov)
    try:
        if ns.module:
            sys.argv = [ns.module, *args]
            runpy.run_module(ns.module, run_name="__main__", alter_sys=True)
        else:
            script = os.path.abspath(args[0])
            sys.argv = [script, *args[1:]]
            sys.path[0] = os.path.dirname(script)
            runpy.run_path(script, run_name="__main__")
    finally:
        cov.stop()
        cov.save()


if __name__ == "__main__":
    main()
