"""A sharded gate end to end with the real CLI on the example server: `run --shard 1/2` and `2/2`,
then `merge`. Each share fuzzes its own tools and replays (and may call fixed) only its own
baseline entries; the merge holds every finding once, fails, and its outputs validate; a merge of
incomplete shards is refused with nothing written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from fuzzgate.model.findings import Surface
from fuzzgate.plan.shards import shard_of
from tests.e2e.conftest import CliRun, fuzzgate, stdio_target
from tests.validators import INSTALL_VALIDATORS, missing

pytestmark = pytest.mark.e2e

TOOLS = Path(__file__).resolve().parents[1] / ".tools" / "node_modules" / "@microsoft" / "sarif-multitool-linux"
BREAKER = Path(__file__).resolve().parents[1] / "servers" / "protocol_breaker.py"
XSD = Path(__file__).resolve().parents[1] / "report" / "junit.xsd"
# Shard 1 of 2 holds debug_env, echo and search; shard 2 split_bill and get_stock_level (checked below).
FUZZED = ("split_bill", "get_stock_level", "echo", "debug_env", "search")
INCLUDE = tuple(arg for name in FUZZED for arg in ("--include", name))
GONE = {"echo": "0123456789abcdef0001", "split_bill": "0123456789abcdef0002"}
"""Baseline entries that no longer fail, one per shard: each is its own shard's to call fixed."""


def _baseline(work: Path) -> Path:
    baseline = work / "baseline"
    baseline.mkdir()
    arguments = {"echo": {"text": "hi"}, "split_bill": {"total_cents": 100, "people": 2}}
    for name, fingerprint in GONE.items():
        entry = {
            "fuzzgate_baseline": 1, "fingerprint": fingerprint, "kind": "internal_error", "severity": "high",
            "surface": "tool", "name": name, "message": "unhandled KeyError: 'x'",
            "repro": {"seed": 1, "case_index": 0, "arguments": arguments[name], "transport": "stdio",
                      "schema_valid": True},
        }  # fmt: skip
        (baseline / f"{fingerprint}.json").write_text(json.dumps(entry, sort_keys=True, indent=2) + "\n")
    return baseline


@pytest.fixture(scope="module")
def sharded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, CliRun]:
    work = tmp_path_factory.mktemp("shards")
    baseline = _baseline(work)

    def shard(index: int) -> CliRun:
        return fuzzgate(
            "run", *stdio_target("buggy_server.py"), *INCLUDE, "--cases", "30", "--budget", "90s", "--seed", "7",
            "--replays", "1", "--shrink-tries", "0", "--shard", f"{index}/2", "--baseline", str(baseline),
            "--corpus", str(work / "corpus"),
            cwd=work, out=work / f"shard-{index}",
        )  # fmt: skip

    # Side by side, as a matrix runs them (and in half the time).
    with ThreadPoolExecutor(2) as pool:
        runs = dict(zip(("1/2", "2/2"), pool.map(shard, (1, 2)), strict=True))
    runs["merge"] = fuzzgate(
        "merge", str(work / "shard-1"), str(work / "shard-2"), "--out", str(work / "merged"), cwd=work,
        out=work / "merged",
    )  # fmt: skip
    return runs


def test_the_example_tools_fall_in_both_shards() -> None:
    shards = {name: shard_of(Surface.TOOL, name, 2) for name in FUZZED}
    assert shards == {"split_bill": 2, "get_stock_level": 2, "echo": 1, "debug_env": 1, "search": 1}


@pytest.mark.parametrize("shard", ["1/2", "2/2"])
def test_each_shard_fuzzes_its_own_tools_and_names_the_others_share(sharded: dict[str, CliRun], shard: str) -> None:
    run = sharded[shard]
    assert run.code == 1, run.stdout + run.stderr
    report = run.report
    assert report["shard"] == shard
    assert f"shard {shard}" in run.stdout
    index = int(shard[0])
    for entry in report["entries"]:
        if entry["name"] not in FUZZED:
            continue
        owner = shard_of(Surface(entry["surface"]), entry["name"], 2)
        if owner == index:
            assert entry["status"] == "fuzzed" and entry["cases"] > 0, entry
        else:
            assert entry == {**entry, "status": "skipped", "reason": f"in shard {owner}/2", "cases": 0}
    assert {f["name"] for f in report["findings"]} <= {n for n in FUZZED if shard_of(Surface.TOOL, n, 2) == index}


@pytest.mark.parametrize("shard", ["1/2", "2/2"])
def test_a_shard_calls_fixed_only_its_own_baseline_entries(sharded: dict[str, CliRun], shard: str) -> None:
    report = sharded[shard].report
    own = {fp for name, fp in GONE.items() if shard_of(Surface.TOOL, name, 2) == int(shard[0])}
    assert {f["fingerprint"] for f in report["fixed"]} == own
    # The other shard's entry was not replayed here: no state at all, so merge takes its owner's.
    others = set(GONE.values()) - own
    assert not others & {f["fingerprint"] for f in report["findings"] + report["fixed"]}


def _breaker_shard(work: Path, index: int) -> CliRun:
    return fuzzgate(
        "run", "--command", sys.executable, f"--arg={BREAKER}", "--budget", "25s", "--seed", "7", "--timeout", "2s",
        "--cases", "5", "--replays", "1", "--shard", f"{index}/2", "--baseline", str(work / "baseline"), cwd=work,
        out=work / f"pb-{index}",
    )  # fmt: skip


def test_only_shard_one_probes_the_server(tmp_path: Path) -> None:
    # The protocol breaker's bugs show only to the protocol round (and its start-up banner): the
    # server as a whole is shard 1's; shard 2 fuzzes its share of the tools and nothing else.
    with ThreadPoolExecutor(2) as pool:
        runs = dict(zip((1, 2), pool.map(lambda index: _breaker_shard(tmp_path, index), (1, 2)), strict=True))
    assert runs[2].code == 0, runs[2].stdout + runs[2].stderr
    assert runs[2].report["findings"] == []
    assert runs[1].code == 1, runs[1].stdout + runs[1].stderr
    probes = {f["repro"]["tool"] for f in runs[1].findings(surface="server")}
    assert "startup-banner" in probes and len(probes) >= 2
    merged = tmp_path / "merged"
    merge = fuzzgate("merge", str(runs[1].out), str(runs[2].out), "--out", str(merged), cwd=tmp_path, out=merged)
    assert merge.code == 1, merge.stdout + merge.stderr
    assert {f["repro"]["tool"] for f in merge.findings(surface="server")} == probes


def test_merge_holds_the_union_once_and_fails(sharded: dict[str, CliRun]) -> None:
    merge = sharded["merge"]
    assert merge.code == 1, merge.stdout + merge.stderr
    report = merge.report
    assert report["shard"] is None and report["verdict"] == "fail"
    fingerprints = [f["fingerprint"] for f in report["findings"]]
    assert len(fingerprints) == len(set(fingerprints))
    union = {f["fingerprint"] for s in ("1/2", "2/2") for f in sharded[s].report["findings"]}
    assert set(fingerprints) == union
    assert {f["name"] for f in report["findings"]} >= {"split_bill", "get_stock_level", "debug_env"}
    assert report["calls"] == sharded["1/2"].report["calls"] + sharded["2/2"].report["calls"]
    assert {f["fingerprint"] for f in report["fixed"]} == set(GONE.values())
    # Every tool as the shard that fuzzed it saw it.
    entries = {e["name"]: e for e in report["entries"]}
    assert all(entries[name]["status"] == "fuzzed" and entries[name]["cases"] > 0 for name in FUZZED)
    assert not [e for e in report["entries"] if (e["reason"] or "").startswith("in shard")]
    index = json.loads((merge.out / "merge.json").read_text())
    assert index["verdict"] == "fail"
    assert [(t["name"], t["shards"], t["report"]) for t in index["targets"]] == [
        ("buggy_server", 2, "buggy_server/report.json")
    ]
    assert json.loads((merge.out / "buggy_server" / "report.json").read_text()) == report


def test_merged_outputs_validate(sharded: dict[str, CliRun]) -> None:
    import xmlschema
    from junitparser import JUnitXml

    out = sharded["merge"].out
    report = sharded["merge"].report
    sarif: dict[str, Any] = json.loads((out / "fuzzgate.sarif").read_text())
    schema_path = TOOLS / "sarif-2.1.0.json"
    if not schema_path.is_file():
        missing(f"SARIF schema not found at {schema_path}", INSTALL_VALIDATORS)
    Draft202012Validator(json.loads(schema_path.read_text())).validate(sarif)
    proc = subprocess.run(
        [str(TOOLS / "Sarif.Multitool"), "validate", str(out / "fuzzgate.sarif"), "--rule-kind", "Gh;Sarif"],
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "DOTNET_SYSTEM_GLOBALIZATION_INVARIANT": "1"},
    )  # fmt: skip
    assert "Done. 1 files scanned." in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert not [line for line in proc.stdout.splitlines() if ": error " in line], proc.stdout
    (run,) = sarif["runs"]
    assert run["automationDetails"]["id"] == "fuzzgate/buggy_server/"
    alerts = sorted(r["fingerprints"]["fuzzgate/v1"] for r in run["results"])
    assert alerts == sorted(f["fingerprint"] for f in report["findings"] if not f["flaky"])

    xmlschema.XMLSchema(str(XSD)).validate(str(out / "junit.xml"))
    (suite,) = list(JUnitXml.fromfile(str(out / "junit.xml")))
    failures = {case.name for case in suite if any(r._tag == "failure" for r in case.result)}
    assert failures >= {"split_bill", "get_stock_level", "debug_env"}
    summary = (out / "summary.md").read_text()
    assert "fuzzgate failed" in summary and "in shard" not in summary


def test_replay_and_accept_read_the_merged_report(sharded: dict[str, CliRun], tmp_path: Path) -> None:
    out = sharded["merge"].out
    accept = fuzzgate(
        "baseline", "accept", *stdio_target("buggy_server.py"), "--out", str(out),
        "--baseline", str(tmp_path / "accepted"), cwd=tmp_path,
    )  # fmt: skip
    assert accept.code == 0, accept.stdout + accept.stderr
    accepted = {p.stem for p in (tmp_path / "accepted").glob("*.json")}
    assert accepted == {f["fingerprint"] for f in sharded["merge"].report["findings"]}


def test_incomplete_or_doubled_shards_are_refused_and_nothing_is_written(
    sharded: dict[str, CliRun], tmp_path: Path
) -> None:
    shard_1 = sharded["1/2"].out
    for dirs, words in (
        ([shard_1], "shards incomplete: 2/2 missing"),
        ([shard_1, shard_1], "shard 1/2 given twice"),
        ([shard_1, tmp_path / "nowhere"], "no such directory"),
    ):
        out = tmp_path / "refused"
        merge = fuzzgate("merge", *map(str, dirs), "--out", str(out), cwd=tmp_path)
        assert merge.code == 2, merge.stdout + merge.stderr
        assert words in merge.stderr and "Traceback" not in merge.stderr
        assert not out.exists()


def test_shards_of_another_seed_are_refused(sharded: dict[str, CliRun], tmp_path: Path) -> None:
    other = tmp_path / "shard-2"
    other.mkdir()
    data = sharded["2/2"].report
    (other / "report.json").write_text(json.dumps({**data, "seed": 8}))
    merge = fuzzgate("merge", str(sharded["1/2"].out), str(other), "--out", str(tmp_path / "m"), cwd=tmp_path)
    assert merge.code == 2
    assert "shards disagree on the seed: 7 in shard 1/2" in merge.stderr
    assert not (tmp_path / "m").exists()
