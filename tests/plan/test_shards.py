"""`--shard I/N` (plan.shard_of, plan.select, plan.owned_baseline): every tool in exactly one share,
the shares together are the unsharded run, and a tool keeps its share when others come and go."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from fuzzgate.config.model import Config, Shard, TargetConfig, TargetKind
from fuzzgate.model.findings import Surface
from fuzzgate.plan.selection import SelectionSettings, select
from fuzzgate.plan.shards import in_shard, owned_baseline, shard_of, shard_split
from fuzzgate.record.results import RunReport, Status, SurfaceEntry, shard_from_json
from fuzzgate.target.discover import Inventory, ToolInfo
from tests.report.report_factory import make_finding, sample_report

SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
CONFIG = Config(target=TargetConfig(TargetKind.STDIO, command="server"))

names = st.lists(st.text(min_size=1, max_size=30), min_size=1, max_size=40, unique=True)
counts = st.integers(min_value=1, max_value=12)
surfaces = st.sampled_from([Surface.TOOL, Surface.RESOURCE, Surface.PROMPT])


def tool(name: str, surface: Surface = Surface.TOOL) -> ToolInfo:
    return ToolInfo(name, "", SCHEMA, None, None, None, surface)


def inventory(*tools: ToolInfo) -> Inventory:
    return Inventory(
        tuple(t for t in tools if t.surface is Surface.TOOL),
        (),
        (),
        (),
        tuple(t for t in tools if t.surface is not Surface.TOOL),
    )


def fuzzed(inv: Inventory, config: Config) -> set[tuple[Surface, str]]:
    return {(p.info.surface, p.info.name) for p in select(inv, SelectionSettings.of(config), 0).plans}


@given(names, counts, surfaces)
def test_every_tool_is_in_exactly_one_share(tools: list[str], count: int, surface: Surface) -> None:
    for name in tools:
        owners = [i for i in range(1, count + 1) if in_shard(surface, name, Shard(i, count))]
        assert owners == [shard_of(surface, name, count)]


@given(names, st.text(min_size=1, max_size=30), counts)
def test_adding_a_tool_moves_no_other(tools: list[str], added: str, count: int) -> None:
    before = {name: shard_of(Surface.TOOL, name, count) for name in tools}
    # The share depends on the tool's own surface and name: the inventory around it plays no part.
    inv = inventory(*(tool(n) for n in tools), tool(added))
    for index in range(1, count + 1):
        for surface, name in fuzzed(inv, replace(CONFIG, shard=Shard(index, count))):
            assert surface is Surface.TOOL
            if name in before:
                assert before[name] == index


@given(names, counts)
def test_the_shares_together_are_the_unsharded_run(tools: list[str], count: int) -> None:
    inv = inventory(*(tool(n) for n in tools), tool("file:///{path}", Surface.RESOURCE), tool("p", Surface.PROMPT))
    whole = fuzzed(inv, CONFIG)
    shares = [fuzzed(inv, replace(CONFIG, shard=Shard(i, count))) for i in range(1, count + 1)]
    assert set().union(*shares) == whole
    assert sum(len(s) for s in shares) == len(whole)


def test_the_assignment_is_fixed_across_versions() -> None:
    # Recorded once: a change here reshuffles every user's shards (and their caches, their
    # categories): it must be deliberate.
    got = [shard_of(Surface.TOOL, name, 4) for name in ("read_file", "write_file", "search", "echo", "divide")]
    assert got == [2, 1, 3, 1, 2]
    assert shard_of(Surface.PROMPT, "echo", 4) == 3


def test_growing_the_count_moves_tools_only_to_the_new_share() -> None:
    tools = [f"tool_{i}" for i in range(400)]
    moved = [t for t in tools if shard_of(Surface.TOOL, t, 4) != shard_of(Surface.TOOL, t, 5)]
    assert all(shard_of(Surface.TOOL, t, 5) == 5 for t in moved)
    assert 40 <= len(moved) <= 120  # about a fifth


def test_the_shares_are_roughly_even() -> None:
    tools = [f"tool_{i}" for i in range(2000)]
    sizes = [sum(1 for t in tools if shard_of(Surface.TOOL, t, 4) == i) for i in range(1, 5)]
    assert all(400 <= size <= 600 for size in sizes), sizes


def test_other_shares_tools_are_skipped_with_their_share() -> None:
    inv = inventory(*(tool(f"t{i}") for i in range(12)))
    selection = select(inv, SelectionSettings.of(replace(CONFIG, shard=Shard(2, 3))), 0)
    skipped = {e.name: e.reason for e in selection.entries}
    for plan in selection.plans:
        assert shard_of(Surface.TOOL, plan.info.name, 3) == 2
    for name, reason in skipped.items():
        assert reason == f"in shard {shard_of(Surface.TOOL, name, 3)}/3"
    assert all(e.status is Status.SKIPPED for e in selection.entries)
    assert len(skipped) + len(selection.plans) == 12


def test_max_tools_counts_every_shares_tools() -> None:
    inv = inventory(*(tool(f"t{i}") for i in range(12)))
    limited = replace(CONFIG, max_tools=5)
    whole = fuzzed(inv, limited)
    shares = [fuzzed(inv, replace(limited, shard=Shard(i, 3))) for i in range(1, 4)]
    assert set().union(*shares) == whole and len(whole) == 5


def test_the_server_and_its_baseline_are_share_ones() -> None:
    assert all(shard_of(Surface.SERVER, "transport", n) == 1 for n in range(1, 9))
    entries = [make_finding(f"fp{i}", name=f"t{i}") for i in range(10)]
    server = make_finding("fp-server", name="transport", surface=Surface.SERVER)
    owned = [owned_baseline([*entries, server], Shard(i, 3)) for i in range(1, 4)]
    assert server in owned[0] and server not in owned[1] and server not in owned[2]
    assert sum(len(o) for o in owned) == 11
    assert owned_baseline(entries, None) == entries


def test_the_report_records_the_shard(tmp_path: Path) -> None:
    report = sample_report(tmp_path)
    assert RunReport.from_json(report.to_json()).shard is None
    sharded = replace(report, shard=Shard(2, 4))
    data = sharded.to_json()
    assert data["shard"] == "2/4"
    assert RunReport.from_json(data).shard == Shard(2, 4)
    del data["shard"]  # a report from before sharding
    assert RunReport.from_json(data).shard is None
    assert shard_from_json("3/3") == Shard(3, 3)


def test_tools_shows_the_split() -> None:
    inv = inventory(*(tool(f"t{i}") for i in range(12)), tool("delete_all"))
    shard = Shard(2, 3)
    decisions = [*select(inv, SelectionSettings.of(replace(CONFIG, shard=shard)), 0).entries]
    decisions += [
        SurfaceEntry(p.info.surface, p.info.name, Status.FUZZED)
        for p in select(inv, SelectionSettings.of(replace(CONFIG, shard=shard)), 0).plans
    ]
    sizes = [sum(1 for i in range(12) if shard_of(Surface.TOOL, f"t{i}", 3) == k) for k in (1, 2, 3)]
    assert shard_split(shard, decisions) == (
        f"shard 2/3 fuzzes {sizes[1]} of 12 (1/3: {sizes[0]}, 2/3: {sizes[1]}, 3/3: {sizes[2]}); "
        "shard 1 also sends the protocol probes"
    )
