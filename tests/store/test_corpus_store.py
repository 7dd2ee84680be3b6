"""The corpus store: one reviewable file per entry, loads that never fail, writes that leave it whole."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fuzzgate.model.corpus import CorpusEntry
from fuzzgate.model.findings import Step, Surface
from fuzzgate.store import corpus_store
from fuzzgate.store.corpus_store import CorpusStore, CorpusWriteError, entry_bytes, targets


def entry(tool: str = "echo", **arguments: object) -> CorpusEntry:
    return CorpusEntry(
        tool=tool,
        arguments=dict(arguments),
        origin="conform",
        signal="coverage",
        features=2,
        environment={"fuzzgate": "0.9.0", "server": "demo 1.0"},
    )


def files(directory: Path) -> list[str]:
    return sorted(os.listdir(directory))


def test_an_added_entry_is_one_canonical_file_named_by_its_key(tmp_path: Path) -> None:
    store = CorpusStore(tmp_path / "corpus", "my server")
    e = entry(text="hi", n=1)
    assert store.add(e) is True
    assert store.path == tmp_path / "corpus" / "my-server"
    assert files(store.path) == [f"{e.key}.json"]
    text = (store.path / f"{e.key}.json").read_text(encoding="utf-8")
    assert text.endswith("}\n")
    assert text == json.dumps(json.loads(text), sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    assert (store.path / f"{e.key}.json").read_bytes() == entry_bytes(e)
    assert store.load().entries == (e,)


def test_adding_an_entry_twice_writes_it_once(tmp_path: Path) -> None:
    store = CorpusStore(tmp_path, "t")
    e = entry(text="hi")
    assert store.add(e) is True
    # Another origin or environment is still the same input.
    assert store.add(CorpusEntry(tool="echo", arguments={"text": "hi"}, origin="mutate:x:/text")) is False
    assert CorpusStore(tmp_path, "t").add(e) is False
    assert store.load().entries == (e,)


def test_entries_load_sorted_by_key_whatever_the_order_they_were_added(tmp_path: Path) -> None:
    store = CorpusStore(tmp_path, "t")
    added = [entry("b", x=i) for i in range(5)] + [entry("a", x=i) for i in range(5)]
    for e in added:
        store.add(e)
    loaded = CorpusStore(tmp_path, "t").load()
    assert [e.key for e in loaded.entries] == sorted(e.key for e in added)
    assert loaded.skipped == ()
    assert loaded.cold is None


def test_a_sequence_and_another_surface_round_trip(tmp_path: Path) -> None:
    store = CorpusStore(tmp_path, "t")
    e = CorpusEntry(
        tool="file:///{name}",
        arguments={"name": "a"},
        surface=Surface.RESOURCE,
        prefix=(Step("create", {"name": "a"}, produced=("id-1",)),),
    )
    store.add(e)
    assert store.load().entries == (e,)


def test_the_cap_counts_entries_per_tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(corpus_store, "MAX_ENTRIES_PER_TOOL", 3)
    store = CorpusStore(tmp_path, "t")
    assert [store.add(entry("echo", n=i)) for i in range(5)] == [True, True, True, False, False]
    assert store.add(entry("other", n=0)) is True
    # A prompt of the same name is another subject.
    assert store.add(CorpusEntry(tool="echo", arguments={}, surface=Surface.PROMPT)) is True
    # The cap holds across stores (it counts what is on disk), and frees up when an entry goes.
    again = CorpusStore(tmp_path, "t")
    assert again.add(entry("echo", n=9)) is False
    again.remove(entry("echo", n=0))
    assert again.add(entry("echo", n=9)) is True
    assert len([e for e in again.load().entries if e.tool == "echo" and e.surface is Surface.TOOL]) == 3


def test_the_documented_cap() -> None:
    assert corpus_store.MAX_ENTRIES_PER_TOOL == 256


def test_a_missing_directory_is_a_cold_start(tmp_path: Path) -> None:
    load = CorpusStore(tmp_path / "nowhere", "t").load()
    assert load.entries == ()
    assert load.skipped == ()
    assert load.cold == f"no corpus at {tmp_path / 'nowhere' / 't'} yet"
    assert not (tmp_path / "nowhere").exists()  # reading creates nothing


def test_an_empty_directory_is_a_cold_start(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "README.md").write_text("kept by fuzzgate\n")
    load = CorpusStore(tmp_path, "t").load()
    assert (load.entries, load.skipped) == ((), ())
    assert load.cold == f"no entries in {tmp_path / 't'} yet"


def test_a_file_in_the_directorys_place_is_a_cold_start_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "t").write_text("not a directory")
    load = CorpusStore(tmp_path, "t").load()
    assert load.entries == ()
    assert load.cold == f"{tmp_path / 't'} is a file, not a corpus directory"
    below = CorpusStore(tmp_path / "t", "u").load()
    assert below.cold == f"{tmp_path / 't'} is a file, not a directory (the corpus is to be at {tmp_path / 't' / 'u'})"


def test_unreadable_files_are_skipped_with_their_reason_and_the_rest_loads(tmp_path: Path) -> None:
    store = CorpusStore(tmp_path, "t")
    good = [entry(n=1), entry(n=2)]
    for e in good:
        store.add(e)
    bad = {
        "aa-notjson.json": b"{not json",
        "ab-binary.json": b"\xff\xfe{}",
        "ac-later.json": json.dumps({"format": 2, "tool": "x", "arguments": {}}).encode(),
        "ad-list.json": b"[1, 2]",
        "ae-noargs.json": json.dumps({"format": 1, "tool": "x"}).encode(),
        # More digits than Python converts: a ValueError of its own, which ended `run` and `corpus list`.
        "ag-hugeint.json": b'{"format": 1, "tool": "x", "arguments": {"n": ' + b"9" * 5001 + b"}}",
    }
    for name, data in bad.items():
        (store.path / name).write_bytes(data)
    (store.path / "af-dir.json").mkdir()
    (store.path / ".echo-1234.json.abc.tmp").write_bytes(b"half an entry")  # an interrupted write

    load = CorpusStore(tmp_path, "t").load()
    assert load.entries == tuple(sorted(good, key=lambda e: e.key))
    assert load.cold is None
    reasons = dict(line.split(": ", 1) for line in load.skipped)
    assert sorted(reasons) == sorted(str(store.path / n) for n in [*bad, "af-dir.json"])
    assert reasons[str(store.path / "aa-notjson.json")].startswith("not valid JSON (")
    assert reasons[str(store.path / "ab-binary.json")] == "not UTF-8 text (bad byte at offset 0)"
    assert reasons[str(store.path / "ac-later.json")] == "format 2, this fuzzgate reads format 1"
    assert reasons[str(store.path / "ad-list.json")] == "not a JSON object"
    assert reasons[str(store.path / "ae-noargs.json")].startswith("malformed entry (KeyError")
    assert reasons[str(store.path / "af-dir.json")] == "a directory, not an entry file"
    assert reasons[str(store.path / "ag-hugeint.json")].startswith("not usable JSON (Exceeds the limit (4300 digits)")


def test_a_directory_of_only_unreadable_files_is_cold_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "x.json").write_text("{")
    load = CorpusStore(tmp_path, "t").load()
    assert load.cold == f"none of the 1 file(s) in {tmp_path / 't'} could be read"
    assert len(load.skipped) == 1


def test_a_too_large_file_is_skipped_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(corpus_store, "MAX_ENTRY_BYTES", 64)
    store = CorpusStore(tmp_path, "t")
    store.path.mkdir()
    (store.path / "big.json").write_bytes(entry_bytes(entry(text="x" * 100)))
    assert store.load().skipped == (f"{store.path / 'big.json'}: larger than 64 bytes, not an entry",)


def test_a_corrupt_file_under_an_entrys_key_is_overwritten_by_add(tmp_path: Path) -> None:
    store = CorpusStore(tmp_path, "t")
    e = entry(n=1)
    store.path.mkdir()
    (store.path / f"{e.key}.json").write_text("{half")
    assert store.add(e) is True
    assert store.load().entries == (e,)


def test_an_entry_written_by_hand_under_another_name_is_read_and_removed(tmp_path: Path) -> None:
    store = CorpusStore(tmp_path, "t")
    e = entry(text="seed")
    store.path.mkdir()
    (store.path / "my seed.json").write_text(json.dumps(e.to_json()))
    assert store.load().entries == (e,)
    assert store.add(e) is True  # its own key's file did not exist
    assert store.load().entries == (e,)  # the same input once
    store.remove(e)
    assert files(store.path) == []


def test_write_errors_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "t").write_text("a file where the directory should be")
    store = CorpusStore(tmp_path, "t")
    with pytest.raises(CorpusWriteError) as info:
        store.add(entry(n=1))
    assert str(tmp_path / "t") in info.value.message
    assert info.value.hint is not None


def test_an_interrupted_write_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = CorpusStore(tmp_path, "t")
    old = entry(n=1)
    store.add(old)
    before = files(store.path)

    def fail(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(CorpusWriteError) as info:
        store.add(entry(n=2))
    assert "No space left on device" in info.value.message
    assert str(store.path) in info.value.message
    monkeypatch.undo()
    assert files(store.path) == before
    assert CorpusStore(tmp_path, "t").load().entries == (old,)


def test_move_writes_the_new_entry_before_deleting_the_old(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = CorpusStore(tmp_path, "t")
    old, new = entry(text="long text"), entry(text="")
    store.add(old)

    def interrupted(stem: str) -> bool:
        raise KeyboardInterrupt

    monkeypatch.setattr(store, "_delete", interrupted)
    with pytest.raises(KeyboardInterrupt):
        store.move(old, new)
    assert {e.key for e in CorpusStore(tmp_path, "t").load().entries} == {old.key, new.key}
    monkeypatch.undo()
    store.move(old, new)
    assert CorpusStore(tmp_path, "t").load().entries == (new,)


def test_move_onto_an_entry_already_there_just_removes_the_old_one(tmp_path: Path) -> None:
    store = CorpusStore(tmp_path, "t")
    a, b = entry(n=1), entry(n=2)
    store.add(a)
    store.add(b)
    store.move(a, b)
    assert store.load().entries == (b,)


def test_replace_makes_the_corpus_exactly_the_kept_entries(tmp_path: Path) -> None:
    store = CorpusStore(tmp_path, "t")
    old = [entry(n=i) for i in range(4)]
    for e in old:
        store.add(e)
    (store.path / "zz-newer.json").write_text(json.dumps({"format": 2}))
    keep = [old[1], old[3], entry(n=10)]
    assert store.replace(keep) == (1, 2)
    loaded = CorpusStore(tmp_path, "t").load()
    assert loaded.entries == tuple(sorted(keep, key=lambda e: e.key))
    # A file this fuzzgate cannot read may be a newer one's entry: never deleted.
    assert (store.path / "zz-newer.json").exists()
    assert store.replace(keep) == (0, 0)


def test_replace_into_a_missing_directory_creates_it(tmp_path: Path) -> None:
    store = CorpusStore(tmp_path / "corpus", "t")
    assert store.replace([entry(n=1)]) == (1, 0)
    assert store.load().entries == (entry(n=1),)


def test_an_interrupted_replace_leaves_a_superset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = CorpusStore(tmp_path, "t")
    old = [entry(n=i) for i in range(4)]
    for e in old:
        store.add(e)
    keep = [old[0], entry(n=10), entry(n=11)]
    deletions: list[str] = []
    real_delete = store._delete

    def delete_once_then_fail(stem: str) -> bool:
        if deletions:
            raise CorpusWriteError(f"{stem} cannot be deleted (simulated)")
        deletions.append(stem)
        return real_delete(stem)

    monkeypatch.setattr(store, "_delete", delete_once_then_fail)
    with pytest.raises(CorpusWriteError):
        store.replace(keep)
    on_disk = {e.key for e in CorpusStore(tmp_path, "t").load().entries}
    # Every kept entry is there, and what was not deleted yet is still there too.
    assert {e.key for e in keep} <= on_disk
    assert on_disk == ({e.key for e in old} | {e.key for e in keep}) - set(deletions)
    assert len(deletions) == 1


def test_replace_drops_a_hand_written_copy_of_a_kept_entry(tmp_path: Path) -> None:
    store = CorpusStore(tmp_path, "t")
    e = entry(text="seed")
    store.path.mkdir()
    (store.path / "seed.json").write_text(json.dumps(e.to_json()))
    assert store.replace([e]) == (1, 1)
    assert files(store.path) == [f"{e.key}.json"]


def test_targets_lists_directories_holding_entries(tmp_path: Path) -> None:
    assert targets(tmp_path / "missing") == []
    CorpusStore(tmp_path, "beta").add(entry(n=1))
    CorpusStore(tmp_path, "alpha").add(entry(n=1))
    (tmp_path / "empty").mkdir()
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "x.json").write_text("{}")
    (tmp_path / "stray.json").write_text("{}")
    assert targets(tmp_path) == ["alpha", "beta"]
    # A listed name opens the same store: slugs are stable.
    assert CorpusStore(tmp_path, "alpha").load().entries == (entry(n=1),)


def test_a_target_directory_opened_directly(tmp_path: Path) -> None:
    CorpusStore(tmp_path, "shard one").add(entry(n=1))
    store = CorpusStore.at(tmp_path / "shard-one")
    assert store.path == tmp_path / "shard-one"
    assert store.load().entries == (entry(n=1),)
