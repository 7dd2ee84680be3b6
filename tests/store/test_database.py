"""The CorpusDatabase contract, its backends and wrappers, and atomic writes."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzgate.model.errors import BaselineError
from fuzzgate.store.database import (
    CorpusDatabase,
    DirectoryDatabase,
    InMemoryDatabase,
    MultiplexedDatabase,
    ReadOnlyDatabase,
    write_atomic,
)
from fuzzgate.store.redis_db import RedisDatabase
from fuzzgate.store.set_directory import SetDirectoryDatabase

Factory = Callable[[Path], CorpusDatabase]

SET_BACKENDS: dict[str, Factory] = {
    "memory": lambda _: InMemoryDatabase(),
    "multiplexed": lambda _: MultiplexedDatabase(InMemoryDatabase(), InMemoryDatabase()),
    "set-directory": lambda tmp: SetDirectoryDatabase(tmp / "sets"),
}
ALL_BACKENDS: dict[str, Factory] = {**SET_BACKENDS, "directory": lambda tmp: DirectoryDatabase(tmp / "db")}


@pytest.fixture(params=sorted([*ALL_BACKENDS, "redis"]))
def db(request: pytest.FixtureRequest, tmp_path: Path) -> CorpusDatabase:
    if request.param == "redis":
        # A real redis-server (tests/redis_server.py); a missing binary fails the test.
        server = request.getfixturevalue("redis_server")
        return RedisDatabase.from_url(server.url, retry_for=5)
    return ALL_BACKENDS[request.param](tmp_path)


# --- the contract every backend keeps ------------------------------------------------------------


def test_fetch_of_an_unknown_key_is_empty(db: CorpusDatabase) -> None:
    assert list(db.fetch(b"nothing")) == []
    assert list(db.keys()) == []


def test_save_is_idempotent(db: CorpusDatabase) -> None:
    db.save(b"k1", b"v")
    db.save(b"k1", b"v")
    assert list(db.fetch(b"k1")) == [b"v"]
    assert list(db.keys()) == [b"k1"]


def test_delete_removes_the_value_and_ignores_absent_ones(db: CorpusDatabase) -> None:
    db.save(b"k1", b"v")
    db.delete(b"k1", b"other")
    assert list(db.fetch(b"k1")) == [b"v"]
    db.delete(b"k1", b"v")
    db.delete(b"k1", b"v")
    db.delete(b"never", b"v")
    assert list(db.fetch(b"k1")) == []
    assert list(db.keys()) == []


def test_move_leaves_the_value_only_under_dest(db: CorpusDatabase) -> None:
    db.save(b"src", b"v")
    db.move(b"src", b"dest", b"v")
    assert list(db.fetch(b"src")) == []
    assert list(db.fetch(b"dest")) == [b"v"]
    # Like Hypothesis: the value ends up under dest even if src never held it.
    db.move(b"absent", b"other", b"w")
    assert list(db.fetch(b"other")) == [b"w"]
    db.move(b"dest", b"dest", b"v")
    assert list(db.fetch(b"dest")) == [b"v"]


@pytest.mark.parametrize("backend", sorted(SET_BACKENDS))
def test_set_backends_hold_several_values_per_key(backend: str, tmp_path: Path) -> None:
    db = SET_BACKENDS[backend](tmp_path)
    db.save(b"k", b"a")
    db.save(b"k", b"b")
    assert sorted(db.fetch(b"k")) == [b"a", b"b"]
    db.delete(b"k", b"a")
    assert list(db.fetch(b"k")) == [b"b"]


_keys = st.sampled_from([b"a", b"b", b"c1"])
_values = st.sampled_from([b"x", b"y", b"{}\n"])
_ops = st.lists(
    st.one_of(
        st.tuples(st.just("save"), _keys, _values),
        st.tuples(st.just("delete"), _keys, _values),
        st.tuples(st.just("move"), st.tuples(_keys, _keys), _values),
    ),
    max_size=25,
)


def _apply(db: CorpusDatabase, model: dict[bytes, set[bytes]], op: tuple[object, ...], *, single: bool) -> None:
    name, key, value = op
    assert isinstance(value, bytes)
    if name == "save":
        assert isinstance(key, bytes)
        db.save(key, value)
        model[key] = {value} if single else model.get(key, set()) | {value}
    elif name == "delete":
        assert isinstance(key, bytes)
        db.delete(key, value)
        model[key] = model.get(key, set()) - {value}
    else:
        assert isinstance(key, tuple)
        src, dest = key
        db.move(src, dest, value)
        if src != dest:
            model[src] = model.get(src, set()) - {value}
        model[dest] = {value} if single else model.get(dest, set()) | {value}


def _check(db: CorpusDatabase, model: dict[bytes, set[bytes]]) -> None:
    for key in (b"a", b"b", b"c1"):
        assert set(db.fetch(key)) == model.get(key, set())
    assert set(db.keys()) == {k for k, v in model.items() if v}


@given(_ops)
def test_in_memory_database_behaves_like_a_dict_of_sets(ops: list[tuple[object, ...]]) -> None:
    db, model = InMemoryDatabase(), dict[bytes, set[bytes]]()
    for op in ops:
        _apply(db, model, op, single=False)
        _check(db, model)


@settings(max_examples=60, deadline=None)
@given(_ops)
def test_directory_database_behaves_like_a_dict_of_sets_of_one(ops: list[tuple[object, ...]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db, model = DirectoryDatabase(Path(tmp) / "db"), dict[bytes, set[bytes]]()
        for op in ops:
            _apply(db, model, op, single=True)
            _check(db, model)


# --- DirectoryDatabase -----------------------------------------------------------------------------


def test_directory_layout_is_one_json_file_per_key_holding_the_value(tmp_path: Path) -> None:
    db = DirectoryDatabase(tmp_path / "baseline")
    db.save(b"abc123", b'{"x": 1}\n')
    assert os.listdir(tmp_path / "baseline") == ["abc123.json"]
    assert (tmp_path / "baseline" / "abc123.json").read_bytes() == b'{"x": 1}\n'
    assert db.describe(b"abc123") == str(tmp_path / "baseline" / "abc123.json")


def test_a_second_value_replaces_the_first(tmp_path: Path) -> None:
    db = DirectoryDatabase(tmp_path)
    db.save(b"k", b"old")
    db.save(b"k", b"new")
    assert list(db.fetch(b"k")) == [b"new"]


def test_reading_never_creates_the_directory(tmp_path: Path) -> None:
    where = tmp_path / "not" / "yet"
    db = DirectoryDatabase(where)
    assert list(db.keys()) == []
    assert list(db.fetch(b"k")) == []
    db.delete(b"k", b"v")
    assert not where.exists()
    db.save(b"k", b"v")
    assert (where / "k.json").read_bytes() == b"v"


def test_files_that_are_not_entries_are_ignored(tmp_path: Path) -> None:
    db = DirectoryDatabase(tmp_path)
    db.save(b"real", b"v")
    (tmp_path / "README.md").write_text("what this directory is")
    (tmp_path / ".hidden.json").write_text("{}")
    (tmp_path / ".real.json.x1y2.tmp").write_text("half")
    (tmp_path / "notes").mkdir()
    assert list(db.keys()) == [b"real"]


@pytest.mark.parametrize("key", [b"../escape", b"a/b", b".hidden", b"", b"sp ace", "é".encode()])
def test_keys_that_are_not_safe_file_names_are_refused(tmp_path: Path, key: bytes) -> None:
    with pytest.raises(ValueError, match="file name"):
        DirectoryDatabase(tmp_path).save(key, b"v")


def test_a_directory_where_an_entry_should_be_is_an_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "k.json").mkdir()
    db = DirectoryDatabase(tmp_path)
    assert list(db.keys()) == [b"k"]
    with pytest.raises(BaselineError, match="is a directory") as caught:
        list(db.fetch(b"k"))
    assert str(tmp_path / "k.json") in caught.value.message


def test_a_link_to_a_missing_file_where_an_entry_should_be_is_an_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "k.json").symlink_to(tmp_path / "nowhere.json")
    db = DirectoryDatabase(tmp_path)
    assert list(db.keys()) == [b"k"]
    with pytest.raises(BaselineError, match="is a symbolic link to a missing file") as caught:
        list(db.fetch(b"k"))
    assert str(tmp_path / "k.json") in caught.value.message


def test_a_file_where_the_directory_should_be_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "baseline").write_text("oops")
    with pytest.raises(BaselineError, match="not a directory") as caught:
        list(DirectoryDatabase(tmp_path / "baseline").keys())
    assert str(tmp_path / "baseline") in caught.value.message


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_file_is_an_error_naming_it(tmp_path: Path) -> None:
    db = DirectoryDatabase(tmp_path)
    db.save(b"k", b"v")
    (tmp_path / "k.json").chmod(0)
    with pytest.raises(BaselineError, match="cannot be read"):
        list(db.fetch(b"k"))


# --- atomic writes ---------------------------------------------------------------------------------


def _leftovers(directory: Path) -> list[str]:
    return sorted(name for name in os.listdir(directory) if name.endswith(".tmp"))


def _fail(*args: object, **kwargs: object) -> None:
    raise OSError(28, "No space left on device")


@pytest.mark.parametrize("step", ["replace", "fsync"])
def test_a_failed_write_leaves_the_old_file_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    db = DirectoryDatabase(tmp_path)
    db.save(b"k", b"old content")
    monkeypatch.setattr(os, step, _fail)
    with pytest.raises(BaselineError, match="cannot be written") as caught:
        db.save(b"k", b"new content that never lands")
    assert str(tmp_path / "k.json") in caught.value.message
    monkeypatch.undo()
    assert (tmp_path / "k.json").read_bytes() == b"old content"
    assert _leftovers(tmp_path) == []


def test_a_failed_first_write_leaves_no_file_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "replace", _fail)
    with pytest.raises(BaselineError):
        DirectoryDatabase(tmp_path).save(b"k", b"v")
    monkeypatch.undo()
    assert os.listdir(tmp_path) == []


def test_an_interrupt_mid_write_cleans_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(tmp_path / "out" / "report.md", b"partial")
    monkeypatch.undo()
    assert os.listdir(tmp_path / "out") == []


def test_write_atomic_creates_the_directory_and_readable_files(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "file.txt"
    write_atomic(target, b"one")
    write_atomic(target, b"two")
    assert target.read_bytes() == b"two"
    assert target.stat().st_mode & 0o644 == 0o644
    assert _leftovers(target.parent) == []


# --- wrappers --------------------------------------------------------------------------------------


def test_read_only_database_reads_through_and_ignores_writes() -> None:
    inner = InMemoryDatabase()
    inner.save(b"k", b"v")
    db = ReadOnlyDatabase(inner)
    db.save(b"k2", b"v")
    db.delete(b"k", b"v")
    db.move(b"k", b"k3", b"v")
    assert list(db.fetch(b"k")) == [b"v"]
    assert list(db.keys()) == [b"k"]
    assert list(inner.keys()) == [b"k"]


def test_multiplexed_database_reads_the_union_and_writes_to_all(tmp_path: Path) -> None:
    local, shared = DirectoryDatabase(tmp_path), InMemoryDatabase()
    shared.save(b"only_shared", b"s")
    db = MultiplexedDatabase(local, shared)
    db.save(b"both", b"v")
    assert list(local.fetch(b"both")) == [b"v"]
    assert list(shared.fetch(b"both")) == [b"v"]
    assert sorted(db.keys()) == [b"both", b"only_shared"]
    assert list(db.fetch(b"only_shared")) == [b"s"]
    assert db.describe(b"both").startswith(str(tmp_path / "both.json"))
    db.delete(b"both", b"v")
    assert list(db.fetch(b"both")) == []


def test_multiplexed_fetch_does_not_repeat_a_value_held_twice() -> None:
    a, b = InMemoryDatabase(), InMemoryDatabase()
    a.save(b"k", b"v")
    b.save(b"k", b"v")
    assert list(MultiplexedDatabase(a, b).fetch(b"k")) == [b"v"]


def test_read_only_wrapper_protects_one_member_of_a_multiplexed_store(tmp_path: Path) -> None:
    committed = DirectoryDatabase(tmp_path)
    scratch = InMemoryDatabase()
    db = MultiplexedDatabase(ReadOnlyDatabase(committed), scratch)
    db.save(b"k", b"v")
    assert list(committed.keys()) == []
    assert list(db.fetch(b"k")) == [b"v"]
