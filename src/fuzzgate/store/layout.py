"""The shared store's layout: the keys under `fuzzgate/1/` (targets, and per target its corpus,
findings and statistics; workers), the kinds of value in the order they are counted, and the short
name of a stored value used in messages."""

from __future__ import annotations

import hashlib

from fuzzgate.store.records import STORE_FORMAT

PREFIX = f"fuzzgate/{STORE_FORMAT}/"
"""Every key of the layout starts with this; keys outside it are not the store's and are left alone."""
KINDS = ("targets", "corpus", "findings", "stats", "workers")
"""The kinds of value, in the order `SharedStore.copy_to` counts them."""


def _key(*parts: str) -> bytes:
    return (PREFIX + "/".join(parts)).encode("utf-8")


TARGETS_KEY = _key("targets")
WORKERS_KEY = _key("workers")


def corpus_key(target: str) -> bytes:
    return _key("corpus", target)


def findings_key(target: str) -> bytes:
    return _key("findings", target)


def stats_key(target: str) -> bytes:
    return _key("stats", target)


def value_id(value: bytes) -> str:
    """A short name of a stored value for messages (the set-directory backend's file stem)."""
    return hashlib.sha256(value).hexdigest()[:16]


def split_key(key: bytes) -> tuple[str, str]:
    """(kind, target) of a layout key; target is "" for the store-wide keys."""
    text = key.decode("utf-8", "backslashreplace").removeprefix(PREFIX)
    kind, _, target = text.partition("/")
    return kind, target
