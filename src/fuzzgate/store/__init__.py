"""The store stage: findings kept between runs (the baseline), the diff against them, the corpus of
inputs, and the shared store of many workers (`SharedStore`; its Redis backend is
`fuzzgate.store.redis_db`).

- In: findings, corpus entries and records to keep; a directory or a `redis://` URL.
- Out: `Baseline` entries, `classify` (new / known / fixed), `CorpusStore`, `SharedStore` views.
- Never: run anything; the files (and the store) are the source of truth, and reading them never
  needs a server.

- `database.py`: an `ExampleDatabase`-shaped key → set-of-values store (directory, in-memory,
  read-only, multiplexed), with idempotent save, fetch, delete and move; atomic writes.
- `baseline.py`: `Baseline` entries as one reviewable JSON file per fingerprint (format 2: scheme,
  signature, generated_by; format 1 read), matched under the current scheme by re-derived
  fingerprint, `Baseline.upgrade`; `diff.py`: `classify` → new / known / fixed.
- `corpus_store.py`: one directory per target, one reviewable JSON file per entry; loading never
  raises and says why it starts cold; writes before deletes.
- `shared.py`, `records.py`: HypoFuzz's design: all state that matters (corpus, findings, per-tool
  statistics, workers) as sets of small JSON values under `fuzzgate/1/...` keys of any
  `CorpusDatabase`; one record per worker and fingerprint, one stats snapshot per worker, each
  replaced new-first. Views fold them: one finding per fingerprint with the smallest repro and the
  strongest evidence, the latest snapshot per worker, statistics kept apart by environment
  (fuzzgate version, server version, commit) while inputs are shared; a value that does not parse
  is skipped with its reason.
- `layout.py`: the shared store's keys under `fuzzgate/1/...`; `fold.py`: how its views fold many
  workers' values (the latest per identity, one `StoredFinding` per fingerprint).
- `set_directory.py` (a directory per key, a file per value, atomic writes) and `redis_db.py` (Redis
  sets, one transaction per move, bounded retry with backoff, the password never printed) are its
  backends; `location.py` is what they share with `shared.py`: a URL or a directory (`is_url`),
  `mask_url` (masks the userinfo's and the query's credentials) and `StoreError`. The backends
  import it, never `shared.py`, which opens them.
"""

from __future__ import annotations

from fuzzgate.model.files import write_atomic
from fuzzgate.store.baseline import BASELINE_FORMAT, Baseline, BaselineEntry, BaselineUpgrade
from fuzzgate.store.database import (
    CorpusDatabase,
    DirectoryDatabase,
    InMemoryDatabase,
    MultiplexedDatabase,
    ReadOnlyDatabase,
)
from fuzzgate.store.diff import Classification, classify
from fuzzgate.store.set_directory import SetDirectoryDatabase
from fuzzgate.store.shared import (
    Environment,
    FindingRecord,
    SharedStore,
    StatsSnapshot,
    StoredFinding,
    StoreError,
    WorkerInfo,
    new_worker_id,
)

__all__ = [
    "BASELINE_FORMAT",
    "Baseline",
    "BaselineEntry",
    "BaselineUpgrade",
    "Classification",
    "CorpusDatabase",
    "DirectoryDatabase",
    "Environment",
    "FindingRecord",
    "InMemoryDatabase",
    "MultiplexedDatabase",
    "ReadOnlyDatabase",
    "SetDirectoryDatabase",
    "SharedStore",
    "StatsSnapshot",
    "StoreError",
    "StoredFinding",
    "WorkerInfo",
    "classify",
    "new_worker_id",
    "write_atomic",
]
