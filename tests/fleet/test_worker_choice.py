"""Which target and tools a worker picks from the store's statistics (`worker_choice`)."""

from __future__ import annotations

from fuzzgate.fleet.worker_choice import Candidate, ToolNeed, needs, pick, same_environment
from fuzzgate.store.shared import Environment, StatsSnapshot, ToolStats

ENV = Environment("0.1.0", "example 1.0", "abc")


def snapshot(worker: str, tools: dict[str, ToolStats], environment: Environment = ENV) -> StatsSnapshot:
    return StatsSnapshot(worker, "srv", environment, 1, 100.0, tools)


def test_needs_sum_calls_over_workers_and_take_the_most_any_reached() -> None:
    merged = needs(
        [
            snapshot("w1", {"a": ToolStats(calls=10, seconds=1.5, behaviours=3, last_new=5.0)}),
            snapshot("w2", {"a": ToolStats(calls=30, seconds=2.5, behaviours=7, last_new=9.0)}),
        ],
        ENV,
    )
    assert merged == {"a": ToolNeed("a", calls=40, found=7, last_new=9.0, seconds=4.0)}


def test_statistics_of_another_environment_do_not_count() -> None:
    other = Environment("0.1.0", "example 2.0", "abc")
    merged = needs([snapshot("w1", {"a": ToolStats(calls=10)}, other)], ENV)
    assert merged == {}
    # Before this worker met the server it matches any server version, not another commit.
    unknown = Environment("0.1.0", None, "abc")
    assert same_environment(unknown, other)
    assert not same_environment(unknown, Environment("0.1.0", None, "def"))
    assert not same_environment(unknown, Environment("0.2.0", "example 1.0", "abc"))


def test_a_target_not_fuzzed_by_this_worker_comes_first_with_every_tool() -> None:
    chosen = pick([Candidate(0, "known", {"a": "a"}), Candidate(1, "new", None)], {"known": {}}, worker="w", tools=2)
    assert (chosen.index, chosen.target, chosen.names) == (1, "new", None)


def test_never_fuzzed_tools_first_then_new_per_call_then_fewest_calls() -> None:
    tools = {label: label for label in ("saturated", "fresh", "rich", "never")}
    stats = {
        "srv": {
            "saturated": ToolNeed("saturated", calls=1000, found=5, last_new=1.0),
            "fresh": ToolNeed("fresh", calls=10, found=5, last_new=2.0),
            "rich": ToolNeed("rich", calls=100, found=5, last_new=3.0),
        }
    }
    chosen = pick([Candidate(0, "srv", tools)], stats, worker="w", tools=3)
    assert chosen.names == ("never", "fresh", "rich")
    # Every never-fuzzed tool goes, even past --tools.
    two_new = pick([Candidate(0, "srv", {**tools, "other": "other"})], stats, worker="w", tools=1)
    assert set(two_new.names or ()) == {"never", "other"}


def test_time_spent_counts_not_calls() -> None:
    """A tool whose every call waits for a timeout (a hang already found) has few calls and a
    feature per call; by calls it was the neediest tool and took every cycle."""
    stats = {
        "srv": {
            "hangs": ToolNeed("hangs", calls=4, found=2, last_new=1.0, seconds=20.0),
            "quick": ToolNeed("quick", calls=400, found=20, last_new=1.0, seconds=4.0),
        }
    }
    chosen = pick([Candidate(0, "srv", {"hangs": "hangs", "quick": "quick"})], stats, worker="w", tools=1)
    assert chosen.names == ("quick",)


def test_the_target_with_the_neediest_tool_wins() -> None:
    stats = {
        "a": {"x": ToolNeed("x", calls=1000, found=1)},
        "b": {"y": ToolNeed("y", calls=10, found=5)},
    }
    chosen = pick([Candidate(0, "a", {"x": "x"}), Candidate(1, "b", {"y": "y"})], stats, worker="w", tools=4)
    assert (chosen.target, chosen.names) == ("b", ("y",))


def test_labels_map_back_to_names_for_prompts_and_resources() -> None:
    chosen = pick([Candidate(0, "srv", {"prompt summarize": "summarize"})], {}, worker="w", tools=4)
    assert chosen.names == ("summarize",) and chosen.labels == ("prompt summarize",)


def test_ties_spread_over_workers() -> None:
    tools = {f"t{i}": f"t{i}" for i in range(8)}
    stats = {"srv": {label: ToolNeed(label, calls=10, found=1, last_new=1.0) for label in tools}}
    firsts = {pick([Candidate(0, "srv", tools)], stats, worker=f"w{n}", tools=1).names for n in range(12)}
    assert len(firsts) > 1


def test_workers_reading_the_same_statistics_spread_over_the_needy_tools() -> None:
    """No ties: every worker ranks the tools alike, takes the neediest half, and draws the rest from
    the next ones in its own order, so workers started together do not all fuzz one list."""
    tools = {f"t{i}": f"t{i}" for i in range(10)}
    stats = {"srv": {f"t{i}": ToolNeed(f"t{i}", calls=100, found=10 - i, seconds=10.0) for i in range(10)}}
    picks = [pick([Candidate(0, "srv", tools)], stats, worker=f"w{n}", tools=4).names or () for n in range(8)]
    assert all(len(names) == 4 and names[:2] == ("t0", "t1") for names in picks), picks
    assert len({names[2:] for names in picks}) > 1, picks
    assert all(set(names[2:]) <= {f"t{i}" for i in range(2, 10)} for names in picks)
