"""The store stage: findings kept between runs (the baseline), the diff against them, and the shared
store of many workers (`SharedStore`; its Redis backend is `fuzzgate.store.redis_db`)."""

from __future__ import annotations

from fuzzgate.files import write_atomic
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
