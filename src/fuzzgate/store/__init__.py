"""The store stage: findings kept between runs (the baseline) and the diff against them."""

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

__all__ = [
    "BASELINE_FORMAT",
    "Baseline",
    "BaselineEntry",
    "BaselineUpgrade",
    "Classification",
    "CorpusDatabase",
    "DirectoryDatabase",
    "InMemoryDatabase",
    "MultiplexedDatabase",
    "ReadOnlyDatabase",
    "classify",
    "write_atomic",
]
