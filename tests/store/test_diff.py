"""The diff: new, known and fixed, by fingerprint."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fuzzgate.model.findings import Finding, Kind, Repro, Severity, Surface
from fuzzgate.record.results import BaselineState
from fuzzgate.store.diff import classify

NEW, KNOWN, FIXED = BaselineState.NEW, BaselineState.KNOWN, BaselineState.FIXED


def finding(fingerprint: str, *, flaky: bool = False) -> Finding:
    return Finding(
        kind=Kind.CRASH,
        severity=Severity.HIGH,
        surface=Surface.TOOL,
        name="t",
        message="m",
        fingerprint=fingerprint,
        repro=Repro(seed=1, case_index=0, arguments={}, transport="stdio"),
        flaky=flaky,
    )


def test_each_rule() -> None:
    found = [finding("new1"), finding("seen"), finding("flaky-known", flaky=True)]
    baseline = [finding("seen"), finding("replayed"), finding("gone"), finding("flaky-known")]
    result = classify(found, baseline, {"replayed", "not-in-baseline"})
    assert result.states == {
        "new1": NEW,
        "seen": KNOWN,
        "flaky-known": KNOWN,
        "replayed": KNOWN,
        "gone": FIXED,
    }
    assert [f.fingerprint for f in result.fixed] == ["gone"]
    assert result.fixed[0] is baseline[2]


def test_empty_baseline_makes_everything_new() -> None:
    result = classify([finding("a"), finding("b")], [], set())
    assert result.states == {"a": NEW, "b": NEW}
    assert result.fixed == ()


def test_nothing_found_and_nothing_replayed_fixes_the_whole_baseline() -> None:
    result = classify([], [finding("a"), finding("b")], set())
    assert result.fingerprints(FIXED) == {"a", "b"}
    assert [f.fingerprint for f in result.fixed] == ["a", "b"]


_fps = st.sets(st.sampled_from([f"fp{i}" for i in range(12)]), max_size=12)


@given(found=_fps, accepted=st.lists(st.sampled_from([f"fp{i}" for i in range(12)]), max_size=14), replayed=_fps)
def test_states_partition_the_fingerprints(found: set[str], accepted: list[str], replayed: set[str]) -> None:
    result = classify([finding(fp) for fp in sorted(found)], [finding(fp) for fp in accepted], replayed)
    baseline = set(accepted)
    new, known, fixed = (result.fingerprints(s) for s in (NEW, KNOWN, FIXED))

    assert set(result.states) == found | baseline
    assert not (new & known) and not (new & fixed) and not (known & fixed)
    assert new == found - baseline
    assert not (new & baseline)
    assert known == (found & baseline) | (baseline & replayed)
    assert fixed == baseline - found - replayed
    assert fixed <= baseline
    # Fixed entries come once each, in baseline order.
    assert [f.fingerprint for f in result.fixed] == list(dict.fromkeys(fp for fp in accepted if fp in fixed))


def test_a_new_finding_failing_on_the_base_is_pre_existing_and_a_known_one_stays_known() -> None:
    found = [finding("brought"), finding("older"), finding("accepted")]
    result = classify(found, [finding("accepted")], set(), pre_existing={"older", "accepted"})
    assert result.states == {"brought": NEW, "older": BaselineState.PRE_EXISTING, "accepted": KNOWN}
