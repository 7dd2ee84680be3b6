"""A process writing to a shared store the way a worker does, printing `ack <i>` after each round the
store acknowledged: tests kill it, restart Redis under it, and check nothing acknowledged is lost.

    python tests/store/store_writer.py STORE WORKER ROUNDS [PAUSE_S]

PAUSE_S (default 0) paces the rounds, so a test can kill the writer in the middle of its work.
"""

from __future__ import annotations

import sys
import time

from fuzzgate.model.corpus import CorpusEntry
from fuzzgate.model.findings import Finding, Kind, Repro, Severity, Surface
from fuzzgate.store.shared import Environment, FindingRecord, SharedStore, StatsSnapshot, ToolStats, WorkerInfo

TARGET = "srv"
FINGERPRINTS = ("fp0", "fp1", "fp2")


def finding(fingerprint: str, size: int, count: int) -> Finding:
    return Finding(
        kind=Kind.CRASH,
        severity=Severity.HIGH,
        surface=Surface.TOOL,
        name="divide",
        message="ZeroDivisionError",
        fingerprint=fingerprint,
        repro=Repro(seed=1, case_index=size, arguments={"pad": "x" * size}, transport="stdio"),
        count=count,
        replays=1,
        reproduced=1,
    )


def main(spec: str, worker: str, rounds: int, pause: float) -> None:
    store = SharedStore.open(spec, retry_for=120)
    environment = Environment("0.0.0", "example 1.0", None)
    started = time.time()
    hits = dict.fromkeys(FINGERPRINTS, 0)
    for i in range(rounds):
        fingerprint = FINGERPRINTS[i % len(FINGERPRINTS)]
        hits[fingerprint] += 1
        store.add_corpus(TARGET, [CorpusEntry(tool="divide", arguments={"worker": worker, "i": i})])
        # Later rounds find smaller repros: the fold must keep the smallest of any worker.
        record = FindingRecord(
            TARGET, finding(fingerprint, rounds - i, hits[fingerprint]), "confirmed", worker, environment, started,
            time.time(),
        )  # fmt: skip
        store.record_findings([record])
        stats = {"divide": ToolStats(calls=i + 1)}
        store.write_stats(StatsSnapshot(worker, TARGET, environment, i + 1, time.time(), stats))
        store.heartbeat(WorkerInfo(worker, "test", 0, started, time.time(), (TARGET,)))
        print(f"ack {i}", flush=True)
        time.sleep(pause)
    store.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]) if len(sys.argv) > 4 else 0.0)
