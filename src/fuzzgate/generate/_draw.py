"""Drawing values from a strategy deterministically, through Hypothesis's public `@given` machinery.

One `@given(st.data())` run with `@seed(n)` and only the generate phase yields the same values for
the same seed (and the same Hypothesis version and local source files, see `_worker`). Each example
draws a batch of values as one list: Hypothesis's bookkeeping per example and per `data.draw` costs
more than a value, and the batch size that measured fastest also gave the most distinct values.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from fuzzgate.generate._model import UNAVAILABLE, Unavailable

DRAWS_PER_EXAMPLE: Final = 16


@dataclass(frozen=True, slots=True)
class Predicate:
    """A filter condition that Hypothesis treats as opaque.

    Hypothesis tries to rewrite filters on numbers and strings into bounds by reading the
    predicate's source code, and (as of 6.170) repeats that on every draw of a filtered strategy.
    An object without `__name__` makes it give up at once.
    """

    test: Callable[[Any], bool]

    def __call__(self, value: Any) -> bool:
        return self.test(value)


def _settings(max_examples: int) -> settings:
    # Every field that a user's Hypothesis profile could change is pinned here.
    return settings(
        max_examples=max_examples,
        derandomize=False,
        database=None,
        verbosity=Verbosity.quiet,
        phases=[Phase.generate],
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
        deadline=None,
        print_blob=False,
        backend="hypothesis",
    )


def draw_values(strategy: SearchStrategy[Any], *, seed_value: int, count: int) -> list[Any]:
    """Up to `count` values drawn in one seeded run; fewer when the value space is tiny or draws fail."""
    drawn: list[Any] = []
    per_example = min(DRAWS_PER_EXAMPLE, count)
    batch = st.lists(strategy, min_size=per_example, max_size=per_example)

    @seed(seed_value)
    @_settings(-(-count // per_example))
    @given(st.data())
    def run(data: st.DataObject) -> None:
        if len(drawn) >= count:
            return
        try:
            drawn.extend(data.draw(batch))
        except Exception:
            # A bug in a strategy loses only this example; Hypothesis's own stop signals are
            # BaseExceptions and still reach it.
            return

    # With no database the key is never read, but Hypothesis works it out from the test's source
    # (`inspect.getsource`, then tokenizing it) on every run unless one is set, as its own `find`
    # sets it: that was a tenth of the generation worker's time. An internal attribute: a Hypothesis
    # that stops reading it only makes draws slower again.
    run._hypothesis_internal_database_key = None  # type: ignore[attr-defined]
    # Unsatisfiable and friends end the run; what was drawn so far is still deterministic.
    with contextlib.suppress(Exception):
        run()
    return drawn[:count]


def simplest(strategy: SearchStrategy[Any]) -> Any | Unavailable:
    """The value Hypothesis considers simplest (it always tries that first), or UNAVAILABLE."""
    found = draw_values(strategy, seed_value=0, count=1)
    return found[0] if found else UNAVAILABLE
