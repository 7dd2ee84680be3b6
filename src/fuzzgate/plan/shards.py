"""`--shard I/N`: which share of a split run fuzzes each tool, prompt and resource.

A share is a jump consistent hash of a tool's surface and name only (`shard_of`), so a tool keeps
its share whatever the server adds or removes, on every machine and Python version; `merge` and the
reports read a skipped tool's share from its reason (`shard_reason`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from fuzzgate.config.model import Shard
from fuzzgate.model.findings import Finding, Surface
from fuzzgate.record.results import SHARD_REASON_PREFIX, Status, SurfaceEntry


def _jump_hash(key: int, buckets: int) -> int:
    """Lamping and Veach's jump consistent hash: the bucket in [0, buckets) of a 64-bit key. Growing
    from N to N+1 buckets moves only a 1/(N+1) share of the keys, all of them to the new bucket."""
    bucket, jump = -1, 0
    while jump < buckets:
        bucket = jump
        key = (key * 2862933555777941757 + 1) & 0xFFFFFFFFFFFFFFFF
        jump = int((bucket + 1) * (float(1 << 31) / float((key >> 33) + 1)))
    return bucket


def shard_of(surface: Surface, name: str, count: int) -> int:
    """The share (1-based) of `count` that fuzzes `name`: a hash of its surface and name only, so a
    tool keeps its share however many tools the server adds or removes, on every machine and
    Python version. The server as a whole (its protocol probes, its transport findings) is share 1's."""
    if surface is Surface.SERVER:
        return 1
    digest = hashlib.sha256(f"{surface.value}:{name}".encode("utf-8", "surrogatepass")).digest()
    return _jump_hash(int.from_bytes(digest[:8], "big"), count) + 1


def in_shard(surface: Surface, name: str, shard: Shard | None) -> bool:
    """Whether a run with `--shard` `shard` (None: no sharding) owns `name`."""
    return shard is None or shard_of(surface, name, shard.count) == shard.index


def shard_reason(surface: Surface, name: str, shard: Shard) -> str:
    """Why a sharded run skips `name`: `merge` and the reports read which share fuzzed it."""
    return f"{SHARD_REASON_PREFIX}{shard_of(surface, name, shard.count)}/{shard.count}"


def owned_baseline(baseline: Sequence[Finding], shard: Shard | None) -> list[Finding]:
    """The baseline entries a run with `shard` replays and may call fixed: those of its own tools.
    Another share's entries are that share's business (its tools, its budget)."""
    return [entry for entry in baseline if in_shard(entry.surface, entry.name, shard)]


def shard_split(shard: Shard, decisions: Sequence[SurfaceEntry]) -> str:
    """`fuzzgate tools --shard I/N`: how many of what an unsharded run would fuzz each share takes."""
    taken = [
        shard_of(e.surface, e.name, shard.count)
        for e in decisions
        if e.status is Status.FUZZED or (e.reason or "").startswith(SHARD_REASON_PREFIX)
    ]
    shares = ", ".join(f"{i}/{shard.count}: {taken.count(i)}" for i in range(1, shard.count + 1))
    return (
        f"shard {shard} fuzzes {taken.count(shard.index)} of {len(taken)} ({shares}); "
        "shard 1 also sends the protocol probes"
    )
