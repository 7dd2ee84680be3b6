from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from fuzzgate.check import Observation
from fuzzgate.check.secrets import Redactor
from fuzzgate.model.findings import DEFAULT_SEVERITY, Details, Kind, Repro, Surface
from fuzzgate.triage.finding_set import FindingSet, fingerprint

signatures = st.lists(st.text(max_size=20), max_size=4).map(tuple)


@given(st.sampled_from(list(Kind)), st.text(min_size=1, max_size=30), signatures)
def test_fingerprint_is_a_function_of_the_bug_only(kind: Kind, name: str, sig: tuple[str, ...]) -> None:
    assert fingerprint(kind, Surface.TOOL, name, sig) == fingerprint(kind, Surface.TOOL, name, sig)
    assert len(fingerprint(kind, Surface.TOOL, name, sig)) == 20


@given(
    st.sampled_from(list(Kind)),
    st.sampled_from(list(Kind)),
    st.text(max_size=10),
    st.text(max_size=10),
    signatures,
    signatures,
)
def test_different_bugs_get_different_fingerprints(
    k1: Kind, k2: Kind, n1: str, n2: str, s1: tuple[str, ...], s2: tuple[str, ...]
) -> None:
    if (k1, n1, s1) != (k2, n2, s2):
        assert fingerprint(k1, Surface.TOOL, n1, s1) != fingerprint(k2, Surface.TOOL, n2, s2)


def _repro(args: dict[str, Any], index: int = 0) -> Repro:
    return Repro(seed=1, case_index=index, arguments=args, transport="stdio")


def test_finding_set_merges_by_fingerprint_keeping_smallest_repro() -> None:
    found = FindingSet(DEFAULT_SEVERITY, Redactor([]))
    obs = Observation(Kind.HANG, "no reply", (), Details())
    found.add(obs, "sync", _repro({"mode": "wait", "note": "x" * 50}, 3))
    found.add(obs, "sync", _repro({"mode": "wait"}, 9))
    found.add(Observation(Kind.SLOW, "slow", (), Details()), "sync", _repro({}, 1))
    items = found.items()
    assert len(items) == 2
    hang = next(f for f, _ in items if f.kind is Kind.HANG)
    assert hang.count == 2 and hang.repro.arguments == {"mode": "wait"} and hang.repro.case_index == 9


def test_findings_are_redacted() -> None:
    found = FindingSet(DEFAULT_SEVERITY, Redactor(["hunter2hunter2"]))
    obs = Observation(Kind.CRASH, "died saying hunter2hunter2", (), Details(stderr="token hunter2hunter2"))
    f = found.add(obs, "t", _repro({}))
    assert "hunter2hunter2" not in f.message and "hunter2hunter2" not in (f.details.stderr or "")
