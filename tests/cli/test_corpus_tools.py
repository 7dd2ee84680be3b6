"""The corpus tools' algorithms against a fake server: merge's set cover, minimize and cleanse keep
the features, and the budget (a fake clock) bounds them."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzgate.cli import corpus as corpus_tools
from fuzzgate.cli.corpus import Arguments, Reduced, cover, merge_entries, reduce_entries, reduce_entry, sources
from fuzzgate.model.corpus import CorpusEntry
from fuzzgate.model.errors import UsageError
from fuzzgate.model.findings import Step, Surface
from fuzzgate.store.corpus_store import CorpusStore

T = TypeVar("T")
FeatureFunction = Callable[[CorpusEntry], frozenset[str] | None]


class FakeClock:
    """A budget that one measurement spends `cost` seconds of, whatever the real time."""

    def __init__(self, budget_s: float = 1e9) -> None:
        self.left = budget_s

    def remaining(self) -> float:
        return max(0.0, self.left)


class FakeMeasurer:
    def __init__(self, features: FeatureFunction, clock: FakeClock | None = None, cost: float = 1.0) -> None:
        self._features = features
        self.clock = clock or FakeClock()
        self.cost = cost
        self.measured: list[CorpusEntry] = []
        self.note = "behaviour: a fake server"
        self.schemas: dict[str, dict[str, Any]] = {"echo": {"type": "object"}}

    def refusal(self, entry: CorpusEntry) -> str | None:
        return None

    async def features(self, entry: CorpusEntry) -> frozenset[str] | None:
        self.measured.append(entry)
        self.clock.left -= self.cost
        return self._features(entry)

    def schema(self, surface: Surface, tool: str) -> dict[str, Any] | None:
        return self.schemas.get(tool)


def run(body: Callable[[], Awaitable[T]]) -> T:
    return anyio.run(body)


def entry(tool: str = "echo", prefix: tuple[Step, ...] = (), **arguments: Any) -> CorpusEntry:
    return CorpusEntry(tool=tool, arguments=dict(arguments), prefix=prefix)


# --- merge: set cover ------------------------------------------------------------------------------


def test_cover_picks_the_smallest_covering_set() -> None:
    a, b, c, d, e = (entry(n=i) for i in range(5))
    measured = [
        (c, frozenset({"1", "4"})),
        (d, frozenset({"2", "5"})),
        (e, frozenset({"3", "6"})),
        (a, frozenset({"1", "2", "3"})),
        (b, frozenset({"4", "5", "6"})),
    ]
    chosen = cover(measured)
    assert len(chosen) == 2
    assert {e.key for e in chosen} == {a.key, b.key}


def test_cover_breaks_ties_by_size_then_key() -> None:
    big, small = entry(text="a long text"), entry(text="x")
    assert cover([(big, frozenset({"f"})), (small, frozenset({"f"}))]) == [small]
    one, other = entry(n=1), entry(n=2)
    assert one.size == other.size
    first = min(one, other, key=lambda e: e.key)
    assert cover([(one, frozenset({"f"})), (other, frozenset({"f"}))]) == [first]


def test_cover_drops_entries_that_reach_nothing_new() -> None:
    a, b = entry(n=1), entry(n=22)
    assert cover([(a, frozenset({"x", "y"})), (b, frozenset({"y"}))]) == [a]
    assert cover([(a, frozenset())]) == []
    assert cover([]) == []


def _eager_cover(measured: list[tuple[CorpusEntry, frozenset[str]]]) -> list[CorpusEntry]:
    """The textbook greedy: recompute every gain at every pick."""
    left = dict(sorted(((e.key, (e, f)) for e, f in measured)))
    covered: set[str] = set()
    chosen = []
    while left:
        key = min(left, key=lambda k: (-len(left[k][1] - covered), left[k][0].size, k))
        e, f = left.pop(key)
        if not f - covered:
            break
        chosen.append(e)
        covered |= f
    return chosen


@given(
    st.lists(
        st.tuples(st.integers(0, 10_000), st.frozensets(st.sampled_from("abcdefghij"), max_size=6)),
        max_size=12,
        unique_by=lambda item: item[0],
    ),
    st.randoms(use_true_random=False),
)
def test_cover_covers_everything_like_the_eager_greedy_in_any_order(
    items: list[tuple[int, frozenset[str]]], rng: random.Random
) -> None:
    measured = [(entry(n=n), features) for n, features in items]
    chosen = cover(measured)
    everything = frozenset().union(*(f for _, f in measured))
    by_key = {e.key: f for e, f in measured}
    assert frozenset().union(*(by_key[e.key] for e in chosen)) == everything
    assert chosen == _eager_cover(measured)
    rng.shuffle(measured)
    assert cover(measured) == chosen


def test_merge_measures_each_entry_once_and_keeps_a_covering_set() -> None:
    current = [entry(n=1), entry(n=2)]
    others = [entry(n=2), entry(n=3), entry(n=4)]
    reach = {1: {"a"}, 2: {"a", "b"}, 3: {"c"}, 4: {"c"}}
    measurer = FakeMeasurer(lambda e: frozenset(reach[e.arguments["n"]]))
    result = run(lambda: merge_entries(current, others, measurer, measurer.clock))
    assert sorted(e.arguments["n"] for e in measurer.measured) == [1, 2, 3, 4]
    assert {e.arguments["n"] for e in result.keep} == {2, 3}
    assert (result.union, result.measured, result.unmeasurable, result.features) == (4, 4, 0, 3)
    assert not result.budget_ended
    assert list(result.keep) == sorted(result.keep, key=lambda e: e.key)


def test_merge_keeps_the_corpus_entries_it_cannot_judge_and_imports_none() -> None:
    current = [entry(n=1), entry(n=2)]
    others = [entry(n=3), entry(n=4)]
    measurer = FakeMeasurer(lambda e: None if e.arguments["n"] in (2, 4) else frozenset({str(e.arguments["n"])}))
    result = run(lambda: merge_entries(current, others, measurer, measurer.clock))
    assert {e.arguments["n"] for e in result.keep} == {1, 2, 3}
    assert result.unmeasurable == 2


def test_merge_stops_measuring_when_the_budget_ends() -> None:
    current = [entry(n=i) for i in range(3)]
    others = [entry(n=i) for i in range(3, 6)]
    clock = FakeClock(2)
    measurer = FakeMeasurer(lambda e: frozenset({"same"}), clock)
    result = run(lambda: merge_entries(current, others, measurer, clock))
    assert len(measurer.measured) == 2
    assert result.budget_ended
    measured_keys = {e.key for e in measurer.measured}
    unmeasured_own = {e.key for e in current} - measured_keys
    # One of the measured covers "same"; the unmeasured entries of the corpus stay, the others' go.
    assert {e.key for e in result.keep} == {cover([(e, frozenset({"same"})) for e in measurer.measured])[0].key} | (
        unmeasured_own
    )


# --- minimize and cleanse ------------------------------------------------------------------------


def shrink_candidates(arguments: Arguments, schema: dict[str, Any]) -> list[tuple[Arguments, str]]:
    """A stand-in for generate.mutate.shrink_candidates: drop a key, cut a string, halve or decrement a number."""
    found: list[tuple[Arguments, str]] = []
    for key in sorted(arguments):
        found.append(({k: v for k, v in arguments.items() if k != key}, f"drop:/{key}"))
    for key, value in sorted(arguments.items()):
        if isinstance(value, str) and value:
            found.append(({**arguments, key: value[1:]}, f"head:/{key}"))
            found.append(({**arguments, key: value[:-1]}, f"tail:/{key}"))
        if isinstance(value, int) and value:
            found.append(({**arguments, key: value // 2}, f"halve:/{key}"))
            found.append(({**arguments, key: value - 1}, f"decrement:/{key}"))
    return found


def cleanse_candidates(arguments: Arguments, schema: dict[str, Any]) -> list[tuple[Arguments, str]]:
    """A stand-in for generate.mutate.cleanse_candidates: each part replaced by its simplest value."""
    simplest = {str: "", int: 0, bool: False}
    return [
        ({**arguments, key: simplest[type(value)]}, f"simplest:/{key}")
        for key, value in sorted(arguments.items())
        if type(value) in simplest
    ]


def magic(e: CorpusEntry) -> frozenset[str]:
    """A server that behaves differently when `text` holds "magic" and when `n` is above 3."""
    text, n = str(e.arguments.get("text", "")), e.arguments.get("n", 0)
    features = {"call"}
    if "magic" in text:
        features.add("magic")
    if isinstance(n, int) and n > 3:
        features.add("big")
    if any(step.tool == "create" for step in e.prefix):
        features.add("after-create")
    return frozenset(features)


def test_minimize_keeps_every_feature_and_shrinks() -> None:
    original = entry(text="xxmagicyy", n=1000, extra="zzzz")
    measurer = FakeMeasurer(magic)
    result = run(lambda: reduce_entry(original, measurer, shrink_candidates, measurer.clock, shrink=True))
    assert result.new is not None
    assert result.new.arguments == {"text": "magic", "n": 4}
    assert magic(original) <= magic(result.new)
    assert result.new.size < original.size
    assert result.tries == len(measurer.measured)
    # Deterministic: the same entry and server give the same result.
    again = run(lambda: reduce_entry(original, FakeMeasurer(magic), shrink_candidates, FakeClock(), shrink=True))
    assert again == result


def test_minimize_leaves_out_calls_of_the_prefix_that_do_not_matter() -> None:
    prefix = (Step("list", {}), Step("create", {"name": "a"}), Step("noise", {"x": 1}))
    original = entry(prefix=prefix, text="magic")
    measurer = FakeMeasurer(magic)
    result = run(lambda: reduce_entry(original, measurer, shrink_candidates, measurer.clock, shrink=True))
    assert result.new is not None
    assert [step.tool for step in result.new.prefix] == ["create"]
    assert "after-create" in magic(result.new)


def test_an_entry_already_minimal_is_left_as_it_is() -> None:
    original = entry(text="magic")
    measurer = FakeMeasurer(magic)
    result = run(lambda: reduce_entry(original, measurer, shrink_candidates, measurer.clock, shrink=True))
    assert result.new is None
    assert result.reason == "0 steps"


def test_cleanse_keeps_every_feature_and_simplifies_the_rest() -> None:
    original = entry(text="xmagicx", n=7, label="hello", flag=True)
    measurer = FakeMeasurer(magic)
    result = run(lambda: reduce_entry(original, measurer, cleanse_candidates, measurer.clock, shrink=False))
    assert result.new is not None
    assert result.new.arguments == {"text": "xmagicx", "n": 7, "label": "", "flag": False}
    assert magic(result.new) == magic(original)


def test_candidates_that_lose_a_feature_are_refused() -> None:
    # Every feature matters: no variant of this entry reaches them all.
    original = entry(text="magic", n=4)
    measurer = FakeMeasurer(lambda e: frozenset({repr(sorted(e.arguments.items()))}))
    result = run(lambda: reduce_entry(original, measurer, shrink_candidates, measurer.clock, shrink=True))
    assert result.new is None
    assert result.tries > 1


def test_minimize_stops_when_the_budget_ends() -> None:
    original = entry(text="x" * 50 + "magic")
    clock = FakeClock(3)
    measurer = FakeMeasurer(magic, clock)
    result = run(lambda: reduce_entry(original, measurer, shrink_candidates, clock, shrink=True))
    assert len(measurer.measured) == 3
    assert result.reason.endswith("budget ended")
    assert result.new is not None  # what was found before the end is kept
    assert magic(original) <= magic(result.new)


def test_minimize_measures_at_most_max_tries_per_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(corpus_tools, "MAX_TRIES_PER_ENTRY", 5)
    measurer = FakeMeasurer(magic)
    result = run(
        lambda: reduce_entry(entry(text="y" * 40 + "magic"), measurer, shrink_candidates, measurer.clock, shrink=True)
    )
    assert len(measurer.measured) == 5
    assert result.reason.endswith("stopped after 5 tries")


def test_an_entry_the_server_cannot_measure_or_has_no_schema_for_is_left_alone() -> None:
    measurer = FakeMeasurer(lambda e: None)
    result = run(lambda: reduce_entry(entry(text="a"), measurer, shrink_candidates, measurer.clock, shrink=True))
    assert (result.new, result.reason) == (None, "could not be measured")
    gone = entry(tool="removed", text="a")
    result = run(lambda: reduce_entry(gone, measurer, shrink_candidates, measurer.clock, shrink=True))
    assert (result.new, result.reason) == (None, "no schema: the server offers no removed")
    assert measurer.measured == [entry(text="a")]


def test_reduce_entries_goes_in_key_order_and_writes_each_before_the_next(tmp_path: Path) -> None:
    store = CorpusStore(tmp_path, "t")
    entries = [entry(text=f"{i}magic{i}") for i in range(3)]
    for e in entries:
        store.add(e)
    seen: list[str] = []

    def done(result: Reduced) -> None:
        seen.append(result.old.key)
        # Everything finished before this entry is already on disk.
        if result.new is not None:
            store.move(result.old, result.new)

    measurer = FakeMeasurer(magic)
    run(lambda: reduce_entries(entries, measurer, shrink_candidates, measurer.clock, shrink=True, done=done))
    assert seen == sorted(e.key for e in entries)
    # All three shrink to the same input: one entry is left, with every feature.
    assert [e.arguments for e in store.load().entries] == [{"text": "magic"}]


# --- merge's sources ------------------------------------------------------------------------------


def test_sources_read_a_corpus_root_or_a_target_directory(tmp_path: Path) -> None:
    CorpusStore(tmp_path / "shard1", "srv").add(entry(n=1))
    CorpusStore(tmp_path / "shard2", "srv").add(entry(n=2))
    CorpusStore(tmp_path / "shard3", "other").add(entry(n=3))
    found = sources([tmp_path / "shard1", tmp_path / "shard2" / "srv", tmp_path / "shard3"], "srv")
    assert [[e.arguments["n"] for e in load.entries] for _, load in found] == [[1], [2], []]
    assert found[2][1].cold == f"no corpus of srv in {tmp_path / 'shard3'} (targets: other)"
    with pytest.raises(UsageError, match="no such directory"):
        sources([tmp_path / "missing"], "srv")
