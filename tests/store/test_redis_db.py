"""The Redis backend against a real redis-server: the shared store over it, restarts, unreachable servers."""

from __future__ import annotations

import threading
import time

import pytest
import redis

from fuzzgate.model.corpus import CorpusEntry
from fuzzgate.store.redis_db import RedisDatabase
from fuzzgate.store.shared import SharedStore, StoreError, WorkerInfo, corpus_key
from tests.redis_server import RedisServer, free_port
from tests.store.test_shared import record, snapshot


def test_keys_are_redis_sets_named_as_written(redis_server: RedisServer) -> None:
    db = RedisDatabase.from_url(redis_server.url, retry_for=5)
    db.save(b"fuzzgate/1/corpus/srv", b"a")
    db.save_many(b"fuzzgate/1/corpus/srv", [b"b", b"c"])
    client = redis.Redis.from_url(redis_server.url)
    assert client.smembers("fuzzgate/1/corpus/srv") == {b"a", b"b", b"c"}
    # Other programs' keys in the same database are not the store's.
    client.set("someone-else", "x")
    client.sadd("another-set", "y")
    assert list(db.keys()) == [b"fuzzgate/1/corpus/srv"]
    db.close()


def test_a_prefix_keeps_two_stores_apart_in_one_database(redis_server: RedisServer) -> None:
    a = RedisDatabase.from_url(redis_server.url, prefix=b"a:")
    b = RedisDatabase.from_url(redis_server.url, prefix=b"b:")
    a.save(b"k", b"1")
    assert list(b.keys()) == [] and list(b.fetch(b"k")) == []
    assert list(a.keys()) == [b"k"]


def test_the_shared_store_over_redis(redis_server: RedisServer) -> None:
    store = SharedStore.open(redis_server.url, retry_for=5)
    other = SharedStore.open(redis_server.url, retry_for=5)
    store.record_findings([record("w1", count=2)])
    other.record_findings([record("w2", count=3, arguments={"a": 0, "b": 0})])
    store.write_stats(snapshot("w1", 1))
    store.write_stats(snapshot("w1", 2))
    store.heartbeat(WorkerInfo("w1", "h", 1, 1.0, 2.0, ("srv",)))
    entries = [CorpusEntry(tool="divide", arguments={"n": n}) for n in range(1500)]
    assert store.add_corpus("srv", entries) == 256  # the per-tool cap
    (found,) = other.findings("srv")
    assert found.finding.count == 5 and found.workers == ("w1", "w2")
    assert [s.seq for s in other.stats("srv")] == [2]
    assert [w.id for w in other.workers()] == ["w1"]
    assert len(other.corpus("srv").entries) == 256
    assert other.targets() == ["srv"]
    store.close()
    other.close()


def test_the_shared_store_over_a_unix_socket(redis_server: RedisServer) -> None:
    store = SharedStore.open(redis_server.unix_url, retry_for=5)
    store.record_findings([record("w1")])
    assert [f.workers for f in SharedStore.open(redis_server.url).findings()] == [("w1",)]
    store.close()


def test_acknowledged_writes_survive_a_redis_restart(redis_server: RedisServer) -> None:
    store = SharedStore.open(redis_server.url, retry_for=5)
    store.record_findings([record("w1")])
    store.add_corpus("srv", [CorpusEntry(tool="divide", arguments={"n": 1})])
    redis_server.restart(hard=True)  # killed: only the append-only file keeps the data
    assert len(store.findings("srv")) == 1
    assert len(store.corpus("srv").entries) == 1


def test_an_operation_during_a_restart_succeeds_when_redis_is_back(redis_server: RedisServer) -> None:
    store = SharedStore.open(redis_server.url, retry_for=60)
    store.add_corpus("srv", [CorpusEntry(tool="divide", arguments={"n": 1})])
    redis_server.kill()
    restarted = threading.Event()

    def come_back() -> None:
        time.sleep(1.0)
        redis_server.start()
        restarted.set()

    thread = threading.Thread(target=come_back)
    thread.start()
    try:
        # Sent while nothing listens: retried with backoff until Redis is back, then done.
        written = store.add_corpus("srv", [CorpusEntry(tool="divide", arguments={"n": 2})])
    finally:
        thread.join()
    assert restarted.is_set()
    assert written == 1
    assert len(store.corpus("srv").entries) == 2


def test_nothing_listening_is_a_clear_store_error() -> None:
    port = free_port()
    url = f"redis://:hunter2@127.0.0.1:{port}/0"
    store = SharedStore.open(url, retry_for=0.5)
    with pytest.raises(StoreError) as caught:
        store.targets()
    message = caught.value.message
    assert message.startswith(f"redis://:***@127.0.0.1:{port}/0: cannot connect (Connection refused")
    assert "hunter2" not in message and "\n" not in message
    assert caught.value.hint and "hunter2" not in caught.value.hint
    assert int(caught.value.exit_code) == 2


def test_a_url_that_is_not_redis_is_a_store_error() -> None:
    with pytest.raises(StoreError, match="not a Redis URL"):
        RedisDatabase.from_url("redis://127.0.0.1:notaport/0").ping()


def test_a_command_redis_refuses_is_a_store_error_at_once(redis_server: RedisServer) -> None:
    client = redis.Redis.from_url(redis_server.url)
    client.set(corpus_key("srv"), "a string, not a set")
    # Not retried (it would fail the same way): raised at once, naming the key's problem.
    store = SharedStore.open(redis_server.url, retry_for=600)
    with pytest.raises(StoreError, match="WRONGTYPE"):
        store.corpus("srv")
