"""The set-directory backend: a browsable tree of key directories holding one file per value."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzgate.model.corpus import CorpusEntry, slug
from fuzzgate.store.corpus_store import entry_bytes
from fuzzgate.store.set_directory import SetDirectoryDatabase, quote_part, unquote_part, value_name
from fuzzgate.store.shared import SharedStore, StoreError, corpus_key


def test_layout_is_a_directory_per_key_and_a_file_per_value(tmp_path: Path) -> None:
    db = SetDirectoryDatabase(tmp_path)
    db.save(b"fuzzgate/1/corpus/srv", b"one")
    db.save(b"fuzzgate/1/corpus/srv", b"two")
    directory = tmp_path / "fuzzgate" / "1" / "corpus" / "srv"
    assert sorted(os.listdir(directory)) == sorted([value_name(b"one"), value_name(b"two")])
    assert (directory / value_name(b"one")).read_bytes() == b"one"
    assert list(db.keys()) == [b"fuzzgate/1/corpus/srv"]
    assert sorted(db.fetch(b"fuzzgate/1/corpus/srv")) == [b"one", b"two"]


@pytest.mark.parametrize(
    ("target", "directory"),
    [
        ("my server", "my%20server"),
        ("a/b", "a%2Fb"),
        ("..", "%2E."),
        (".hidden", "%2Ehidden"),
        ("", "%"),
        ("naïve", "na%C3%AFve"),
        ("100%", "100%25"),
    ],
)
def test_unsafe_key_parts_are_quoted_reversibly(tmp_path: Path, target: str, directory: str) -> None:
    part = target.encode("utf-8")
    assert quote_part(part) == directory
    assert unquote_part(directory) == part
    db = SetDirectoryDatabase(tmp_path / "db")
    key = b"corpus/" + part + b"/x"
    db.save(key, b"v")
    assert list(db.keys()) == [key]
    assert db.directory(key).resolve().is_relative_to((tmp_path / "db").resolve())


@given(st.binary(max_size=40))
def test_quoting_maps_every_part_back(part: bytes) -> None:
    name = quote_part(part)
    assert "/" not in name and name not in (".", "..") and not name.startswith(".")
    assert unquote_part(name) == part


def test_a_missing_directory_is_empty_and_reading_creates_nothing(tmp_path: Path) -> None:
    db = SetDirectoryDatabase(tmp_path / "nope")
    assert list(db.keys()) == []
    assert list(db.fetch(b"a/b")) == []
    db.delete(b"a/b", b"v")
    assert not (tmp_path / "nope").exists()


def test_dotfiles_readmes_and_empty_directories_are_not_values(tmp_path: Path) -> None:
    db = SetDirectoryDatabase(tmp_path)
    db.save(b"k/x", b"v")
    (tmp_path / "README.md").write_text("about this store")
    (tmp_path / "k" / "x" / ".0123.json.tmp").write_text("half")
    (tmp_path / "k" / "x" / "notes.txt").write_text("hi")
    (tmp_path / "k" / "x" / "README.json").write_text("{}")
    (tmp_path / "k" / "empty").mkdir()
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "a.json").write_text("{}")
    assert list(db.keys()) == [b"k/x"]
    assert list(db.fetch(b"k/x")) == [b"v"]
    db.delete(b"k/x", b"v")
    assert list(db.keys()) == []


def test_json_objects_and_other_values_are_named_for_viewers() -> None:
    assert value_name(b'{"format": 1}').endswith(".json")
    assert value_name(b"files server").endswith(".txt")
    assert value_name(b"a") != value_name(b"b")


def test_a_file_edited_by_hand_is_still_a_value(tmp_path: Path) -> None:
    db = SetDirectoryDatabase(tmp_path)
    db.save(b"k", b"v")
    (tmp_path / "k" / value_name(b"v")).write_bytes(b"edited")
    assert list(db.fetch(b"k")) == [b"edited"]
    db.save(b"k", b"v")  # the file no longer holds v: written again
    assert list(db.fetch(b"k")) == [b"v"]


def test_a_file_in_place_of_the_root_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "store").write_text("not a directory")
    db = SetDirectoryDatabase(tmp_path / "store")
    with pytest.raises(StoreError, match="is a file"):
        list(db.keys())
    with pytest.raises(StoreError, match="cannot be written"):
        db.save(b"k", b"v")


_keys = st.sampled_from([b"a", b"a/b", b"c d"])
_values = st.sampled_from([b"x", b"y", b"{}\n"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("save"), _keys, _keys, _values),
            st.tuples(st.just("delete"), _keys, _keys, _values),
            st.tuples(st.just("move"), _keys, _keys, _values),
        ),
        max_size=25,
    )
)
def test_behaves_like_a_dict_of_sets(ops: list[tuple[str, bytes, bytes, bytes]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db, model = SetDirectoryDatabase(Path(tmp)), dict[bytes, set[bytes]]()
        for name, key, dest, value in ops:
            if name == "save":
                db.save(key, value)
                model.setdefault(key, set()).add(value)
            elif name == "delete":
                db.delete(key, value)
                model.get(key, set()).discard(value)
            else:
                db.move(key, dest, value)
                model.get(key, set()).discard(value)
                model.setdefault(dest, set()).add(value)
            for k in (b"a", b"a/b", b"c d"):
                assert set(db.fetch(k)) == model.get(k, set())
            assert set(db.keys()) == {k for k, v in model.items() if v}


def test_the_shared_store_in_a_directory_reads_as_the_run_corpus_layout(tmp_path: Path) -> None:
    store = SharedStore.open(str(tmp_path / "store"))
    entry = CorpusEntry(tool="read_file", arguments={"path": "a"})
    assert store.add_corpus("files server", [entry]) == 1
    directory = tmp_path / "store" / "fuzzgate" / "1" / "corpus" / "files%20server"
    (file,) = directory.iterdir()
    assert file.read_bytes() == entry_bytes(entry)
    assert slug("files server")  # the run corpus names the target by slug; the store by its full name
    assert list(store.db.fetch(corpus_key("files server"))) == [entry_bytes(entry)]
    reopened = SharedStore.open(str(tmp_path / "store"))
    assert reopened.targets() == ["files server"]
    assert reopened.corpus("files server").entries == (entry,)
