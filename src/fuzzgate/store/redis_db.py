"""A `CorpusDatabase` in Redis, shared by workers on many machines (Hypothesis's `RedisExampleDatabase`).

Each key is a Redis set of that name (`SADD`, `SMEMBERS`, `SREM`), so the keys read as they are
written: `redis-cli SMEMBERS fuzzgate/1/corpus/<target>`. Every key that was ever written is also a
member of the registry set `<prefix>fuzzgate:registry`, which `keys()` reads instead of scanning a
database other programs may share; a registered key whose set emptied is not listed (Redis drops
an empty set). Writes of one call go in one `MULTI` transaction; a batch (`save_many`) in one round
trip.

Every operation is a set operation, idempotent, so a lost connection is simply retried: with
exponential backoff (0.1 s doubling, at most 5 s between tries) for up to `retry_for` seconds, then
`StoreError` naming the URL (password masked) and the cause. A worker passes a long `retry_for` and
so survives a Redis restart; a CLI command a short one. What Redis acknowledged survives its restart
only if Redis persists it (`appendonly yes`, `appendfsync always`; see docs/store.md).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from typing import TypeVar

import redis
from redis.backoff import NoBackoff
from redis.exceptions import AuthenticationError, BusyLoadingError, RedisError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

from fuzzgate.store.database import CorpusDatabase
from fuzzgate.store.location import StoreError, mask_url

FIRST_DELAY = 0.1
MAX_DELAY = 5.0
SOCKET_TIMEOUT = 10.0
"""Seconds a command may wait for Redis: a larger value than any set operation needs, small enough
that a half-open connection (a Redis host that vanished) is noticed and retried."""
HEALTH_CHECK_INTERVAL = 15
"""A connection idle this long is pinged before use, so a Redis restart in between is noticed
before a command is sent on the dead connection."""
BATCH = 1000
"""Values per `SADD` in `save_many`: one round trip for a typical corpus, no huge commands."""

_T = TypeVar("_T")
_CONNECT_ERROR = re.compile(r"Error -?\d+ connecting to \S+?\.\s+(.*?)\.?$")
"""redis-py's "Error 111 connecting to 127.0.0.1:6390. Connection refused.": the address ends at the
first ". " (an address has dots, never a dot and a space)."""


class RedisDatabase(CorpusDatabase):
    """Keys are Redis sets (see the module docstring). `url` names the server in messages."""

    def __init__(
        self, client: redis.Redis, *, url: str = "redis", retry_for: float = 30.0, prefix: bytes = b""
    ) -> None:
        self.client = client
        self.url = mask_url(url)
        self.retry_for = retry_for
        self.prefix = prefix
        self.registry = prefix + b"fuzzgate:registry"

    @classmethod
    def from_url(cls, url: str, *, retry_for: float = 30.0, prefix: bytes = b"") -> RedisDatabase:
        """A database on the Redis server at `url` (`redis://`, `rediss://`, `unix://`). Nothing is
        sent until the first operation."""
        # TCP only: a Unix socket connection takes no keepalive option.
        tcp = {} if url.startswith("unix:") else {"socket_keepalive": True}
        try:
            client = redis.Redis.from_url(
                url,
                socket_timeout=SOCKET_TIMEOUT,
                socket_connect_timeout=SOCKET_TIMEOUT,
                health_check_interval=HEALTH_CHECK_INTERVAL,
                # This class retries (longer, with its own backoff); redis-py's own retries would
                # only hide how long an operation has been failing.
                retry=Retry(NoBackoff(), 0),
                **tcp,
            )
        except ValueError as exc:
            raise StoreError(
                f"{mask_url(url)}: not a Redis URL ({exc})",
                hint="use redis://HOST:PORT/DB, rediss://... or unix:///path/to/redis.sock",
            ) from None
        return cls(client, url=url, retry_for=retry_for, prefix=prefix)

    def __repr__(self) -> str:
        return f"RedisDatabase({self.url!r})"

    def describe(self, key: bytes) -> str:
        return f"{self.url} {self._key(key).decode('utf-8', 'backslashreplace')}"

    def _key(self, key: bytes) -> bytes:
        return self.prefix + key

    # --- the contract -----------------------------------------------------------------------------

    def save(self, key: bytes, value: bytes) -> None:
        self.save_many(key, [value])

    def save_many(self, key: bytes, values: Iterable[bytes]) -> None:
        """Save every one of `values` under `key`, in one round trip per `BATCH` values."""
        values = list(values)

        def run() -> None:
            for start in range(0, len(values), BATCH):
                pipe = self.client.pipeline(transaction=True)
                pipe.sadd(self._key(key), *values[start : start + BATCH])
                pipe.sadd(self.registry, key)
                pipe.execute()

        if values:
            self._retry("write", run)

    def fetch(self, key: bytes) -> Iterable[bytes]:
        members = self._retry("read", lambda: self.client.smembers(self._key(key)))
        return sorted(members)  # type: ignore[arg-type]  # sync client: a set of bytes

    def delete(self, key: bytes, value: bytes) -> None:
        self._retry("write", lambda: self.client.srem(self._key(key), value))

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        def run() -> None:
            # Not SMOVE: it does nothing when `src` lacks the value, and the contract wants it
            # under `dest` either way. One transaction, so never in neither place.
            pipe = self.client.pipeline(transaction=True)
            pipe.sadd(self._key(dest), value)
            if src != dest:
                pipe.srem(self._key(src), value)
            pipe.sadd(self.registry, dest)
            pipe.execute()

        self._retry("write", run)

    def keys(self) -> Iterable[bytes]:
        def run() -> list[bytes]:
            # A client made without decode_responses gives bytes.
            registered = sorted(bytes(key) for key in self.client.smembers(self.registry))  # type: ignore[arg-type]
            pipe = self.client.pipeline(transaction=False)
            for key in registered:
                pipe.exists(self._key(key))
            present = pipe.execute()
            return [key for key, there in zip(registered, present, strict=True) if there]

        return self._retry("list keys", run)

    # --- the connection ---------------------------------------------------------------------------

    def ping(self) -> None:
        """Raise `StoreError` unless the server answers (within `retry_for`)."""
        self._retry("connect", self.client.ping)

    def close(self) -> None:
        self.client.close()

    def _retry(self, what: str, operation: Callable[[], _T]) -> _T:
        """Run `operation`, retrying lost connections with backoff for up to `retry_for` seconds."""
        deadline = time.monotonic() + self.retry_for
        delay = FIRST_DELAY
        while True:
            try:
                return operation()
            except AuthenticationError as exc:
                raise StoreError(
                    f"{self.url}: authentication failed ({exc})", hint="check the user and password in the URL"
                ) from None
            except (RedisConnectionError, RedisTimeoutError, BusyLoadingError) as exc:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise self._unreachable(what, exc) from None
                time.sleep(min(delay, left))
                delay = min(delay * 2, MAX_DELAY)
            except RedisError as exc:
                raise StoreError(f"{self.url}: cannot {what} ({_cause(exc)})") from None

    def _unreachable(self, what: str, exc: RedisError) -> StoreError:
        doing = "connect" if isinstance(exc, RedisConnectionError) and not isinstance(exc, BusyLoadingError) else what
        return StoreError(
            f"{self.url}: cannot {doing} ({_cause(exc)}; retried for {self.retry_for:g} s)",
            hint=f"check that Redis is running and reachable at {self.url}",
        )


def _cause(exc: RedisError) -> str:
    text = str(exc).strip() or type(exc).__name__
    match = _CONNECT_ERROR.match(text)
    return match.group(1) if match and match.group(1) else text.rstrip(".")
