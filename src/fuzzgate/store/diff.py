"""The diff: which of a run's findings are new, which the baseline already knew, which are fixed.

Pure: it compares fingerprints and touches nothing, so the gate's decision can be tested alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from fuzzgate.model.findings import Finding
from fuzzgate.record.results import BaselineState


@dataclass(frozen=True, slots=True)
class Classification:
    """`states` maps every fingerprint of the run and of the baseline to its state; `fixed` holds
    the baseline entries that no longer fail, in baseline order."""

    states: dict[str, BaselineState] = field(default_factory=dict)
    fixed: tuple[Finding, ...] = ()

    def fingerprints(self, state: BaselineState) -> set[str]:
        return {fp for fp, s in self.states.items() if s is state}


def classify(
    findings: Sequence[Finding],
    baseline: Sequence[Finding],
    replayed_still_failing: AbstractSet[str],
    pre_existing: AbstractSet[str] = frozenset(),
) -> Classification:
    """Classify a run against the baseline.

    - A finding whose fingerprint is in the baseline is known; any other finding is pre-existing
      when it failed the same way on the base revision (`pre_existing`, fingerprints), else new.
    - A baseline entry is known if fuzzing found it again or replaying its repro still fails
      (`replayed_still_failing`, fingerprints); otherwise it is fixed.

    Fingerprints in `replayed_still_failing` that are not in the baseline are ignored.
    """
    accepted = {entry.fingerprint for entry in baseline}
    states: dict[str, BaselineState] = {}
    fixed: list[Finding] = []
    for finding in findings:
        if finding.fingerprint in accepted:
            states[finding.fingerprint] = BaselineState.KNOWN
        elif finding.fingerprint in pre_existing:
            states[finding.fingerprint] = BaselineState.PRE_EXISTING
        else:
            states[finding.fingerprint] = BaselineState.NEW
    for entry in baseline:
        fp = entry.fingerprint
        if fp in states:  # found again by fuzzing: known
            continue
        if fp in replayed_still_failing:
            states[fp] = BaselineState.KNOWN
        else:
            states[fp] = BaselineState.FIXED
            fixed.append(entry)
    return Classification(states=states, fixed=tuple(fixed))
