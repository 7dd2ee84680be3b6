"""Run a Python MCP server under coverage.py: the benchmarks' own measure of the code a fuzzer
reached (bench/corpus.py), independent of any coverage fuzzgate collects itself.

    python covserve.py --data PREFIX --include GLOB [--include GLOB ...] [--control SOCKET]
                       (--module NAME | SCRIPT) [ARG ...]

- Branch coverage (coverage.py's arcs) of the files whose absolute path matches an `--include`
  pattern, written to `PREFIX.<host>.<pid>.<random>` (one SQLite file per process; read them all with
  `covreplay.read_coverage`). No config file is read: the repository's `[tool.coverage]` is for its
  tests.
- The data is saved on a normal exit, on SIGTERM and SIGINT, and on SIGABRT or SIGSEGV sent with
  `kill` (how the planted crashes die); the signal is then raised again with its default action,
  so the process dies as it would have. `os._exit` (another planted crash) skips every handler:
  whatever the process ran since the last save is lost.
- With `--control SOCKET`, a Unix socket on which each line `flush` saves the data so far and is
  answered `ok`: the replay driver asks for it between calls, when the server is idle. The thread
  answering it starts before coverage does, so it is not measured; coverage.py's `flush_data` is
  written for tracers running in other threads.
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
from pathlib import Path
from types import FrameType

import coverage

FATAL = (signal.SIGTERM, signal.SIGINT, signal.SIGABRT, signal.SIGSEGV)


def _serve_control(path: Path, flush: threading.Event, done: threading.Event, cov: list[coverage.Coverage]) -> None:
    path.unlink(missing_ok=True)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(path))
        server.listen(4)
        flush.set()
        while True:
            conn, _ = server.accept()
            with conn, conn.makefile("rwb") as stream:
                for line in stream:
                    if line.strip() == b"flush" and cov:
                        cov[0].get_data()  # flushes the tracer's data into the SQLite file
                        stream.write(b"ok\n")
                        stream.flush()
            if done.is_set():
                return


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--data", required=True, help="data file prefix")
    p.add_argument("--include", action="append", required=True, help="measured files (fnmatch on absolute paths)")
    p.add_argument("--control", type=Path, help="Unix socket answering `flush`")
    p.add_argument("--module", help="run this module as __main__ (like python -m)")
    p.add_argument("argv", nargs=argparse.REMAINDER, help="SCRIPT [ARG ...], or the module's ARG ...")
    ns = p.parse_args()
    holder: list[coverage.Coverage] = []
    if ns.control is not None:
        ready, done = threading.Event(), threading.Event()
        threading.Thread(target=_serve_control, args=(ns.control, ready, done, holder), daemon=True).start()
        ready.wait(10)
    cov = coverage.Coverage(data_file=ns.data, data_suffix=True, branch=True, include=ns.include, config_file=False)
    holder.append(cov)

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
