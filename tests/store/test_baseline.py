"""The baseline: reviewable, byte-stable files, nothing secret, loud about corrupt files."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzgate.model.errors import BaselineError
from fuzzgate.model.findings import Details, Finding, Kind, Repro, Severity, Step, Surface
from fuzzgate.store.baseline import BASELINE_FORMAT, Baseline, BaselineEntry
from fuzzgate.store.database import InMemoryDatabase, MultiplexedDatabase, ReadOnlyDatabase
from fuzzgate.triage.fingerprint import fingerprint
from fuzzgate.triage.versions import GeneratorVersions
from tests import strategies
from tests.report_schema import BASELINE, assert_conforms

SECRET = "ghp_s3cr3tT0k3nValue"


def make_finding(fingerprint: str = "a1b2c3d4", **changes: object) -> Finding:
    finding = Finding(
        kind=Kind.CRASH,
        severity=Severity.CRITICAL,
        surface=Surface.TOOL,
        name="divide",
        message="ZeroDivisionError: division by zero — ünïcode",
        fingerprint=fingerprint,
        repro=Repro(seed=7, case_index=3, arguments={"a": 1, "b": 0}, transport="stdio", schema_valid=True),
        details=Details(
            error=f"Traceback ... API_KEY={SECRET}",
            stderr=f"env: API_KEY={SECRET}\nZeroDivisionError",
            frames=("server.py:12 in divide", "server.py:30 in handle"),
            location=("server.py", 12),
        ),
        count=5,
        replays=3,
        reproduced=3,
        flaky=False,
    )
    return replace(finding, **changes)  # type: ignore[arg-type]


def test_a_missing_directory_is_an_empty_baseline_and_stays_missing(tmp_path: Path) -> None:
    baseline = Baseline.open(tmp_path / ".fuzzgate" / "baseline")
    assert baseline.entries() == []
    assert baseline.get("a1b2c3d4") is None
    assert not (tmp_path / ".fuzzgate").exists()


def test_record_get_remove_round_trip(tmp_path: Path) -> None:
    baseline = Baseline.open(tmp_path)
    finding = make_finding()
    entry = baseline.record(finding)
    assert baseline.get("a1b2c3d4") == entry
    assert baseline.entries() == [entry]
    assert entry.to_finding() == replace(
        finding,
        details=Details(frames=finding.details.frames, location=finding.details.location),
        count=1,
        replays=0,
        reproduced=0,
    )
    assert baseline.remove("a1b2c3d4") is True
    assert baseline.remove("a1b2c3d4") is False
    assert baseline.entries() == []
    assert os.listdir(tmp_path) == []


def test_the_file_is_canonical_pretty_json_without_run_to_run_noise(tmp_path: Path) -> None:
    Baseline.open(tmp_path).record(make_finding())
    raw = (tmp_path / "a1b2c3d4.json").read_text(encoding="utf-8")
    data = json.loads(raw)
    assert raw == json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    assert data["fuzzgate_baseline"] == BASELINE_FORMAT
    assert "ünïcode" in raw
    assert set(data) == {
        "fuzzgate_baseline",
        "fingerprint",
        "kind",
        "severity",
        "surface",
        "name",
        "message",
        "repro",
        "frames",
        "location",
        "fingerprint_scheme",
        "signature",
        "generated_by",
    }
    assert data["location"] == {"path": "server.py", "line": 12}
    assert data["frames"] == ["server.py:12 in divide", "server.py:30 in handle"]


def test_recording_the_same_finding_again_gives_the_same_bytes(tmp_path: Path) -> None:
    baseline = Baseline.open(tmp_path)
    baseline.record(make_finding())
    first = (tmp_path / "a1b2c3d4.json").read_bytes()
    # Another run hits the same bug more often, replays it differently: nothing stored changes.
    baseline.record(make_finding(count=99, replays=5, reproduced=4, flaky=True))
    assert (tmp_path / "a1b2c3d4.json").read_bytes() == first
    other = tmp_path / "elsewhere"
    Baseline.open(other).record(make_finding())
    assert (other / "a1b2c3d4.json").read_bytes() == first


def test_nothing_that_could_hold_a_secret_is_stored(tmp_path: Path) -> None:
    Baseline.open(tmp_path).record(make_finding())
    raw = (tmp_path / "a1b2c3d4.json").read_text(encoding="utf-8")
    assert SECRET not in raw
    assert "stderr" not in raw
    assert "Traceback" not in raw


def test_recording_a_different_repro_replaces_the_entry(tmp_path: Path) -> None:
    baseline = Baseline.open(tmp_path)
    baseline.record(make_finding())
    smaller = make_finding(repro=Repro(seed=8, case_index=0, arguments={"b": 0}, transport="stdio"))
    baseline.record(smaller)
    assert os.listdir(tmp_path) == ["a1b2c3d4.json"]
    entry = baseline.get("a1b2c3d4")
    assert entry is not None and entry.repro == smaller.repro


def test_entries_are_ordered_by_fingerprint_and_other_files_are_ignored(tmp_path: Path) -> None:
    baseline = Baseline.open(tmp_path)
    for fp in ("ff00", "0a0a", "77aa"):
        baseline.record(make_finding(fp))
    (tmp_path / "README.md").write_text("Accepted fuzzgate findings. Review like code.\n")
    assert [e.fingerprint for e in baseline.entries()] == ["0a0a", "77aa", "ff00"]
    assert [f.fingerprint for f in baseline.findings()] == ["0a0a", "77aa", "ff00"]


def _valid() -> dict[str, object]:
    return BaselineEntry.of(make_finding()).to_json()


def _without(key: str) -> dict[str, object]:
    data = _valid()
    del data[key]
    return data


def _with(**changes: object) -> dict[str, object]:
    return {**_valid(), **changes}


def _dumps(obj: object) -> bytes:
    return json.dumps(obj).encode()


CORRUPT: dict[str, tuple[bytes, str]] = {
    "bad json": (b'{"kind": "crash",', "is not valid JSON"),
    "empty": (b"", "is not valid JSON"),
    "not utf-8": (b'{"message": "\xff\xfe"}', "is not UTF-8"),
    "nested too deeply": (b"[" * 100_000 + b"]" * 100_000, "is not usable JSON (nested too deeply)"),
    "array": (_dumps([1, 2]), "holds an array, not a JSON object"),
    "marker true": (_dumps(_with(fuzzgate_baseline=True)), "reads formats 1 to 2"),
    "marker zero": (_dumps(_with(fuzzgate_baseline=0)), "reads formats 1 to 2"),
    "no marker": (_dumps(_without("fuzzgate_baseline")), '"fuzzgate_baseline": 2 marker'),
    "no scheme": (_dumps(_without("fingerprint_scheme")), 'missing "fingerprint_scheme"'),
    "signature not a list": (_dumps(_with(signature="trace")), '"signature" of the wrong type'),
    "signature of another bug": (
        _dumps(_with(signature=["trace", "other.py:elsewhere"])),
        'a "signature" that does not give its fingerprint under fuzzgate/2',
    ),
    "generated_by without fuzzgate": (_dumps(_with(generated_by={"hypothesis": "6.0"})), 'bad "generated_by"'),
    "missing kind": (_dumps(_without("kind")), 'missing "kind"'),
    "unknown kind": (_dumps(_with(kind="explosion")), 'unknown kind "explosion"'),
    "unknown severity": (_dumps(_with(severity="urgent")), 'unknown severity "urgent"'),
    "missing repro": (_dumps(_without("repro")), 'missing "repro"'),
    "seed as string": (
        _dumps(_with(repro={**Repro(1, 2, {}, "stdio").to_json(), "seed": "7"})),
        '"repro.seed" of the wrong type: expected an integer, found a string',
    ),
    "seed as bool": (
        _dumps(_with(repro={**Repro(1, 2, {}, "stdio").to_json(), "seed": True})),
        '"repro.seed" of the wrong type',
    ),
    "missing arguments": (
        _dumps(_with(repro={"seed": 1, "case_index": 2, "transport": "stdio"})),
        'missing "repro.arguments"',
    ),
    "message null": (
        _dumps(_with(message=None)),
        '"message" of the wrong type: expected a string, found null',
    ),
    "frames not a list": (_dumps(_with(frames="server.py")), '"frames" of the wrong type'),
    "bad location": (_dumps(_with(location={"path": "server.py"})), 'missing "location.line"'),
    "wrong fingerprint": (_dumps(_with(fingerprint="0000")), 'holds fingerprint "0000"'),
}


@pytest.mark.parametrize("case", sorted(CORRUPT))
def test_a_corrupt_file_is_an_error_naming_the_file_and_the_fix(tmp_path: Path, case: str) -> None:
    content, what = CORRUPT[case]
    Baseline.open(tmp_path).record(make_finding("ok11"))
    (tmp_path / "a1b2c3d4.json").write_bytes(content)
    with pytest.raises(BaselineError) as caught:
        Baseline.open(tmp_path).entries()
    error = caught.value
    assert str(tmp_path / "a1b2c3d4.json") in error.message
    assert what in error.message
    assert error.hint is not None and "fuzzgate baseline accept" in error.hint
    with pytest.raises(BaselineError):
        Baseline.open(tmp_path).get("a1b2c3d4")


def test_a_directory_named_like_an_entry_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "a1b2c3d4.json").mkdir()
    with pytest.raises(BaselineError, match="is a directory"):
        Baseline.open(tmp_path).entries()


def test_a_link_to_nothing_named_like_an_entry_is_an_error_never_ignored(tmp_path: Path) -> None:
    Baseline.open(tmp_path).record(make_finding("ok11"))
    (tmp_path / "a1b2c3d4.json").symlink_to("/nonexistent")
    for read in (Baseline.entries, Baseline.findings, Baseline.upgrade):
        with pytest.raises(BaselineError, match="symbolic link to a missing file") as caught:
            read(Baseline.open(tmp_path))
        assert str(tmp_path / "a1b2c3d4.json") in caught.value.message


def test_a_file_instead_of_the_baseline_directory_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "baseline").write_text("{}")
    with pytest.raises(BaselineError, match="not a directory"):
        Baseline.open(tmp_path / "baseline").entries()


def test_baseline_works_on_any_database() -> None:
    memory = InMemoryDatabase()
    baseline = Baseline(memory)
    baseline.record(make_finding())
    baseline.record(make_finding(message="changed"))
    assert list(memory.keys()) == [b"a1b2c3d4"]
    assert len(list(memory.fetch(b"a1b2c3d4"))) == 1
    entry = baseline.get("a1b2c3d4")
    assert entry is not None and entry.message == "changed"


def test_a_multiplexed_baseline_records_everywhere(tmp_path: Path) -> None:
    memory = InMemoryDatabase()
    baseline = Baseline(MultiplexedDatabase(Baseline.open(tmp_path).db, memory))
    baseline.record(make_finding())
    assert (tmp_path / "a1b2c3d4.json").exists()
    assert list(memory.keys()) == [b"a1b2c3d4"]
    assert [e.fingerprint for e in baseline.entries()] == ["a1b2c3d4"]


def test_a_read_only_baseline_does_not_write(tmp_path: Path) -> None:
    baseline = Baseline(ReadOnlyDatabase(Baseline.open(tmp_path).db))
    baseline.record(make_finding())
    assert os.listdir(tmp_path) == []


def _fingerprinted(finding: Finding) -> Finding:
    """`finding` with the fingerprint its signature gives, so the entry keeps the signature."""
    if finding.signature is None:
        return finding
    return replace(finding, fingerprint=fingerprint(finding.kind, finding.surface, finding.name, finding.signature))


_versions = st.none() | st.builds(
    GeneratorVersions, fuzzgate=st.text(max_size=8), hypothesis=st.none() | st.text(max_size=8)
)


@given(strategies.findings.map(_fingerprinted), _versions)
def test_entries_survive_a_round_trip_through_bytes(finding: Finding, generated_by: GeneratorVersions | None) -> None:
    entry = BaselineEntry.of(finding, generated_by=generated_by)
    assert entry.signature == finding.signature and entry.generated_by == generated_by
    data = entry.to_bytes()
    assert_conforms(json.loads(data), "a baseline entry", BASELINE)
    assert BaselineEntry.from_bytes(data) == entry
    assert BaselineEntry.from_bytes(data).to_bytes() == data
    assert (
        BaselineEntry.of(
            replace(finding, count=finding.count + 1, flaky=not finding.flaky), generated_by=generated_by
        ).to_bytes()
        == data
    )
    # What a replay of the entry sends is what the finding recorded, every field of the repro but
    # the arguments fuzzing sent before verification shrank them (the run's record, not the bug's).
    read = BaselineEntry.from_bytes(data).to_finding()
    assert read.repro == replace(finding.repro, original_arguments=None)
    assert read.details == Details(frames=finding.details.frames, location=finding.details.location)


def test_a_sequence_repro_survives_the_round_trip(tmp_path: Path) -> None:
    # The earlier calls, the failing call's tool (a server-wide finding) and the workspace the
    # arguments were written for: without them a replay of the entry is a different request.
    repro = Repro(
        seed=7,
        case_index=3,
        arguments={"id": 1, "path": "/w/s1/outside/x"},
        transport="stdio",
        prefix=(Step("create_item", {"name": "a"}), Step("delete_item", {"id": 1}, schema_valid=False)),
        tool="get_item",
        workspace="/w/s1/outside",
    )
    baseline = Baseline.open(tmp_path)
    baseline.record(make_finding(repro=repro))
    assert Baseline.open(tmp_path).findings()[0].repro == repro


def test_a_redacted_repro_and_what_its_replies_brought_survive_the_round_trip(tmp_path: Path) -> None:
    # A replay rebinds the values the earlier calls' replies brought (here the marker a secret id
    # was redacted to); without them the entry's replay sends another request, and proves nothing.
    repro = Repro(
        seed=7,
        case_index=3,
        arguments={"id": "[REDACTED]"},
        transport="stdio",
        prefix=(
            Step("create_item", {"name": "a"}, produced=("[REDACTED]", 3)),
            Step("delete_item", {"id": "[REDACTED]"}),
        ),
        redacted=True,
    )
    baseline = Baseline.open(tmp_path)
    baseline.record(make_finding(repro=repro))
    assert Baseline.open(tmp_path).findings()[0].repro == repro


@pytest.mark.parametrize(
    "prefix", [{"tool": "x"}, [{"arguments": {}}], [{"tool": 1, "arguments": {}}], [{"tool": "x", "arguments": []}]]
)
def test_a_malformed_prefix_is_a_clear_error(tmp_path: Path, prefix: object) -> None:
    baseline = Baseline.open(tmp_path)
    baseline.record(make_finding())
    [path] = tmp_path.glob("*.json")
    data = json.loads(path.read_text())
    data["repro"]["prefix"] = prefix
    path.write_text(json.dumps(data))
    with pytest.raises(BaselineError, match="prefix"):
        Baseline.open(tmp_path).findings()


def test_accepting_findings_on_a_full_disk_writes_none_of_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    baseline = Baseline.open(tmp_path)
    baseline.record(make_finding("aaaa1111", name="kept"))
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    synced = 0
    real_fsync = os.fsync

    def fsync_until_full(fd: int) -> None:
        nonlocal synced
        synced += 1
        if synced == 3:  # the third new entry: the disk is full
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync_until_full)
    findings = [make_finding(f"bbbb{n}000", name=f"tool{n}") for n in range(4)]
    with pytest.raises(BaselineError, match="No space left on device") as caught:
        Baseline.open(tmp_path).record_all(findings)
    assert "none of the 4 files was written" in caught.value.message
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # no entry, no temporary
    monkeypatch.setattr(os, "fsync", real_fsync)
    recorded = Baseline.open(tmp_path).record_all(findings)
    stored = [e.fingerprint for e in Baseline.open(tmp_path).entries()]
    assert stored == ["aaaa1111", *(e.fingerprint for e in recorded)]
