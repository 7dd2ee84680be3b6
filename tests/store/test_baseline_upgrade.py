"""A fingerprint scheme change never reads as new plus fixed.

The scheme change here is the test-only `fuzzgate/next` of tests/triage/scheme_2.py, which changes
both the hash and the oracles' signatures, registered with its upgrade from the current scheme
(so an entry of fuzzgate/1 is carried through fuzzgate/2 to it). The baseline holds the format-1
files the released fuzzgate wrote for the example server's planted bugs
(tests/e2e/fixtures/baseline-format1) and a format-2 entry this version recorded. The real change
from fuzzgate/1 to fuzzgate/2 is tested at the end, with bugs whose signatures it changes. The
run's findings come from the real oracles on outcomes built from real replies
(tests/triage/fingerprint_corpus.py).
"""

from __future__ import annotations

import io
import json
import shutil
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from fuzzgate.check.secrets import Redactor
from fuzzgate.check.traceback import Frame
from fuzzgate.cli.baseline import baseline_command
from fuzzgate.config import Overrides, load_config
from fuzzgate.model.errors import BaselineError
from fuzzgate.model.findings import DEFAULT_SEVERITY, Finding, Kind, Repro, Severity, Surface
from fuzzgate.record.results import BaselineState
from fuzzgate.store.baseline import BASELINE_FORMAT, Baseline, BaselineEntry
from fuzzgate.store.database import DirectoryDatabase
from fuzzgate.store.diff import classify
from fuzzgate.triage import fingerprint as fp
from fuzzgate.triage.finding_set import FindingSet
from fuzzgate.triage.versions import GeneratorVersions
from tests.triage.fingerprint_corpus import CASES
from tests.triage.scheme_2 import SCHEME_2
from tests.triage.scheme_2 import label as v2_label

FIXTURE = Path(__file__).resolve().parents[1] / "e2e" / "fixtures" / "baseline-format1"
FIXTURE_BUGS = (
    "python sdk log, stderr",
    "python traceback as the reply",
    "schema: real message, wrong type",
    "protocol: non_json",
    "secret: github token",
    "secret: canary",
    "hang",
    "crash: exit status 1",
    "crash: exit status 3",
)
"""The corpus cases that are the fixture's nine bugs (same tool, same symptom)."""
RECORDED_BUG = "rich traceback through a lambda"
"""A bug this version records in format 2 under its scheme, before the scheme changes."""
VERSIONS = GeneratorVersions(fuzzgate="0.1.0", hypothesis="6.100.0")


def _findings(cases: tuple[str, ...]) -> list[Finding]:
    found = FindingSet(DEFAULT_SEVERITY, Redactor(()))
    for index, name in enumerate(cases):
        case = CASES[name]
        for observation in case.observe():
            found.add(
                observation, case.tool, Repro(seed=7, case_index=index, arguments=case.arguments, transport="stdio")
            )
    return [finding for finding, _ in found.items()]


@pytest.fixture
def baseline_dir(tmp_path: Path) -> Path:
    """The released format-1 files plus one entry recorded by this version, all under fuzzgate/1."""
    directory = tmp_path / "baseline"
    shutil.copytree(FIXTURE, directory)
    (recorded,) = _findings((RECORDED_BUG,))
    Baseline.open(directory).record(recorded, generated_by=VERSIONS)
    return directory


@pytest.fixture
def scheme_2(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(fp, "SCHEMES", fp.SCHEMES.with_scheme(SCHEME_2))
    monkeypatch.setattr(Frame, "label", v2_label)
    yield


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())}


def test_the_scheme_change_really_changes_every_fingerprint(baseline_dir: Path, scheme_2: None) -> None:
    stored = {path.stem for path in baseline_dir.glob("*.json")}
    now = _findings((*FIXTURE_BUGS, RECORDED_BUG))
    assert len(now) == 10
    assert not stored & {f.fingerprint for f in now}
    assert ("trace", "buggy_server.py#split_bill") in {f.signature for f in now}


def test_under_a_new_scheme_the_baseline_bugs_are_known_and_none_fixed(baseline_dir: Path, scheme_2: None) -> None:
    before = _snapshot(baseline_dir)
    run = _findings((*FIXTURE_BUGS, RECORDED_BUG))
    result = classify(run, Baseline.open(baseline_dir).findings(), set())
    assert {f.fingerprint: result.states[f.fingerprint] for f in run} == {
        f.fingerprint: BaselineState.KNOWN for f in run
    }
    assert result.fixed == ()
    assert _snapshot(baseline_dir) == before, "reading the baseline must not write it"


def test_without_the_upgrade_the_same_run_would_be_new_plus_fixed(
    baseline_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The control: what the upgrade prevents. A scheme whose upgrade cannot carry any bug over.
    monkeypatch.setattr(fp, "SCHEMES", fp.SCHEMES.with_scheme(fp.Scheme("fuzzgate/next", upgrade=lambda k, s: None)))
    monkeypatch.setattr(Frame, "label", v2_label)
    run = _findings((*FIXTURE_BUGS, RECORDED_BUG))
    result = classify(run, Baseline.open(baseline_dir).findings(), set())
    assert {result.states[f.fingerprint] for f in run} == {BaselineState.NEW}
    assert len(result.fixed) == 10


def test_baseline_upgrade_rewrites_every_entry_and_they_still_match(baseline_dir: Path, scheme_2: None) -> None:
    run = _findings((*FIXTURE_BUGS, RECORDED_BUG))
    done = Baseline.open(baseline_dir).upgrade()
    assert len(done.rewritten) == 10 and done.current == 0 and done.stranded == ()
    assert {path.stem for path in baseline_dir.glob("*.json")} == {f.fingerprint for f in run}
    for path in baseline_dir.glob("*.json"):
        data = json.loads(path.read_text())
        assert data["fuzzgate_baseline"] == BASELINE_FORMAT and data["fingerprint_scheme"] == "fuzzgate/next"
        assert data["fingerprint"] == path.stem
    # The repro and the versions that generated it are the recorded ones: nothing was regenerated.
    by_name = {entry.name: entry for entry in Baseline.open(baseline_dir).entries()}
    assert by_name["lookup_order"].generated_by == VERSIONS
    assert by_name["split_bill"].generated_by is None
    assert by_name["split_bill"].repro.arguments == {"people": 0, "total_cents": 12345}
    assert by_name["split_bill"].signature == ("trace", "buggy_server.py#split_bill")

    result = classify(run, Baseline.open(baseline_dir).findings(), set())
    assert {result.states[f.fingerprint] for f in run} == {BaselineState.KNOWN} and result.fixed == ()

    before = _snapshot(baseline_dir)
    again = Baseline.open(baseline_dir).upgrade()
    assert again.rewritten == () and again.current == 10
    assert _snapshot(baseline_dir) == before


def test_upgrade_under_the_same_scheme_only_changes_the_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fp, "SCHEMES", fp.SchemeRegistry(fp.Scheme(fp.ORIGINAL_SCHEME)))
    directory = tmp_path / "baseline"
    shutil.copytree(FIXTURE, directory)
    done = Baseline.open(directory).upgrade()
    assert len(done.rewritten) == 9
    assert sorted(p.name for p in directory.iterdir()) == sorted(p.name for p in FIXTURE.iterdir())
    for path in directory.iterdir():
        data, old = json.loads(path.read_text()), json.loads((FIXTURE / path.name).read_text())
        assert data["fuzzgate_baseline"] == 2 and data["fingerprint_scheme"] == "fuzzgate/1"
        assert data["signature"] is not None and data["generated_by"] is None
        assert {
            k: v
            for k, v in data.items()
            if k not in ("fuzzgate_baseline", "fingerprint_scheme", "signature", "generated_by")
        } == {k: v for k, v in old.items() if k != "fuzzgate_baseline"}


class _DeleteFails(DirectoryDatabase):
    def delete(self, key: bytes, value: bytes) -> None:
        raise BaselineError("disk gone")


def test_an_interrupted_upgrade_leaves_both_files_and_still_matches(baseline_dir: Path, scheme_2: None) -> None:
    with pytest.raises(BaselineError):
        Baseline(_DeleteFails(baseline_dir)).upgrade()
    assert len(list(baseline_dir.glob("*.json"))) == 11  # the first entry is there under both names
    run = _findings((*FIXTURE_BUGS, RECORDED_BUG))
    known = Baseline.open(baseline_dir).findings()
    assert len(known) == 10
    result = classify(run, known, set())
    assert {result.states[f.fingerprint] for f in run} == {BaselineState.KNOWN} and result.fixed == ()
    Baseline.open(baseline_dir).upgrade()
    assert {p.stem for p in baseline_dir.glob("*.json")} == {f.fingerprint for f in run}


def test_accepting_the_same_bug_under_the_new_scheme_replaces_its_old_file(baseline_dir: Path, scheme_2: None) -> None:
    (split_bill,) = _findings(("python sdk log, stderr",))
    baseline = Baseline.open(baseline_dir)
    baseline.record(split_bill, generated_by=VERSIONS)
    assert not (baseline_dir / "a009ba3b6837a30dc32c.json").exists()
    assert (baseline_dir / f"{split_bill.fingerprint}.json").exists()
    assert len(list(baseline_dir.glob("*.json"))) == 10
    # Get and remove find an entry by its re-derived fingerprint too.
    (hang,) = _findings(("hang",))
    entry = baseline.get(hang.fingerprint)
    assert entry is not None and entry.fingerprint == "5a94068ad782d63e4879"
    assert baseline.remove(hang.fingerprint) is True
    assert not (baseline_dir / "5a94068ad782d63e4879.json").exists()


def test_an_entry_that_cannot_be_re_derived_is_stranded_not_lost(baseline_dir: Path, scheme_2: None) -> None:
    # A format-1 file whose signature cannot be rebuilt: its frames were not the raising ones.
    data = json.loads((FIXTURE / "a009ba3b6837a30dc32c.json").read_text())
    data["frames"] = data["frames"][:2]
    (baseline_dir / "a009ba3b6837a30dc32c.json").write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    baseline = Baseline.open(baseline_dir)
    assert [e.fingerprint for e in baseline.stranded()] == ["a009ba3b6837a30dc32c"]
    done = baseline.upgrade()
    assert [e.fingerprint for e in done.stranded] == ["a009ba3b6837a30dc32c"] and len(done.rewritten) == 9
    assert (baseline_dir / "a009ba3b6837a30dc32c.json").read_text() == json.dumps(data, indent=2, sort_keys=True) + "\n"


def test_a_file_of_an_unknown_scheme_asks_for_a_newer_fuzzgate(tmp_path: Path, scheme_2: None) -> None:
    (split_bill,) = _findings(("python sdk log, stderr",))
    Baseline.open(tmp_path).record(split_bill)
    data = json.loads((tmp_path / f"{split_bill.fingerprint}.json").read_text())
    assert data["fingerprint_scheme"] == "fuzzgate/next"
    # The same file read by a fuzzgate that knows only fuzzgate/1:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fp, "SCHEMES", fp.SchemeRegistry(fp.Scheme("fuzzgate/1")))
        with pytest.raises(BaselineError) as caught:
            Baseline.open(tmp_path).entries()
    assert '"fingerprint_scheme": "fuzzgate/next"' in caught.value.message
    assert caught.value.hint is not None and "newer fuzzgate" in caught.value.hint


def test_prune_never_removes_an_entry_it_cannot_match(baseline_dir: Path, scheme_2: None) -> None:
    for path in baseline_dir.glob("*.json"):
        data = json.loads(path.read_text())
        if data["fuzzgate_baseline"] == 1:
            data["frames"], data["message"] = [], "unrecognizable"  # no signature can be rebuilt
            path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    stranded = {e.fingerprint for e in Baseline.open(baseline_dir).stranded()}
    assert len(stranded) == 7  # all but the hang and the protocol error, whose signatures need neither
    for path in baseline_dir.glob("*.json"):
        if path.stem not in stranded:
            path.unlink()  # what is left needs no server to replay
    config = load_config(None, Overrides(command=sys.executable, baseline=baseline_dir), {}, warn=lambda _: None)
    out = io.StringIO()
    assert baseline_command("prune", config, Console(file=out, width=200)) == 0
    assert {p.stem for p in baseline_dir.glob("*.json")} == stranded
    assert "0 pruned" in out.getvalue() and "7 kept unreplayed" in out.getvalue()


@given(
    st.sampled_from(list(Kind)),
    st.text(max_size=12),
    st.lists(st.text(max_size=12), max_size=3).map(tuple),
    st.none() | st.builds(GeneratorVersions, st.text(max_size=8), st.none() | st.text(max_size=8)),
)
def test_format_2_entries_survive_a_round_trip_and_keep_a_verified_signature(
    kind: Kind, name: str, signature: tuple[str, ...], versions: GeneratorVersions | None
) -> None:
    finding = Finding(
        kind=kind, severity=Severity.HIGH, surface=Surface.TOOL, name=name, message="m",
        fingerprint=fp.fingerprint(kind, Surface.TOOL, name, signature), repro=Repro(1, 2, {}, "stdio"),
        signature=signature,
    )  # fmt: skip
    entry = BaselineEntry.of(finding, generated_by=versions)
    assert (entry.scheme, entry.signature, entry.generated_by) == (fp.current_scheme().name, signature, versions)
    assert BaselineEntry.from_bytes(entry.to_bytes()) == entry
    # A signature that does not give the fingerprint (a renamed tool, say) is left out, not stored wrong.
    assert BaselineEntry.of(replace(finding, name=name + "x")).signature is None


CHANGED_BY_FUZZGATE_2 = ("rich, an installed server's library raised", "rpc bare argument value")
"""Bugs whose fuzzgate/1 signature fuzzgate/2 changes: an installed server's frame instead of the
library's, the call's bare value taken out of the message."""


def _recorded_under_fuzzgate_1(directory: Path) -> list[Finding]:
    """The entries fuzzgate/1 recorded for the changed bugs (signatures and fingerprints from the
    golden table of fuzzgate/1), written as that version wrote them."""
    from tests.triage.test_fingerprint_golden import FUZZGATE_1

    recorded = []
    for index, name in enumerate(CHANGED_BY_FUZZGATE_2):
        case = CASES[name]
        ((_, signature, fingerprint),) = FUZZGATE_1[name]
        (now,) = _findings((name,))
        finding = replace(now, fingerprint=fingerprint, signature=signature, repro=replace(now.repro, case_index=index))
        entry = BaselineEntry.of(finding, scheme=fp.ORIGINAL_SCHEME)
        assert entry.signature == signature and entry.repro.arguments == case.arguments
        (directory / f"{fingerprint}.json").write_bytes(entry.to_bytes())
        recorded.append(finding)
    return recorded


def test_fuzzgate_2_keeps_fuzzgate_1_bugs_known_before_and_after_the_upgrade(tmp_path: Path) -> None:
    directory = tmp_path / "baseline"
    directory.mkdir()
    old = _recorded_under_fuzzgate_1(directory)
    run = _findings(CHANGED_BY_FUZZGATE_2)
    assert {f.fingerprint for f in run}.isdisjoint(f.fingerprint for f in old), "fuzzgate/2 moves both"
    assert {f.signature for f in run} == {
        ("trace", "server.py:read_doc"),
        ("rpc", "-32603", "Invalid resourceType: <arg>. Must be Text or Blob."),
    }
    before = classify(run, Baseline.open(directory).findings(), set())
    assert {before.states[f.fingerprint] for f in run} == {BaselineState.KNOWN} and before.fixed == ()

    done = Baseline.open(directory).upgrade()
    assert len(done.rewritten) == 2 and done.stranded == ()
    assert {p.stem for p in directory.glob("*.json")} == {f.fingerprint for f in run}
    after = classify(run, Baseline.open(directory).findings(), set())
    assert {after.states[f.fingerprint] for f in run} == {BaselineState.KNOWN} and after.fixed == ()


def test_without_its_evidence_fuzzgate_2_could_not_carry_those_bugs(tmp_path: Path) -> None:
    # The control: what the recorded arguments and frames make possible.
    directory = tmp_path / "baseline"
    directory.mkdir()
    _recorded_under_fuzzgate_1(directory)
    for path in directory.glob("*.json"):
        data = json.loads(path.read_text())
        data["repro"]["arguments"], data["frames"] = {}, []
        path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    run = _findings(CHANGED_BY_FUZZGATE_2)
    result = classify(run, Baseline.open(directory).findings(), set())
    assert {result.states[f.fingerprint] for f in run} == {BaselineState.NEW} and len(result.fixed) == 2
