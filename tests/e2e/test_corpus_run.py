"""A run keeps what reached something new, the next run starts from it, and neither trusts it blindly.

The real CLI against the example server (Python, so coverage feedback through the injected
collector) over stdio, and over streamable HTTP (behaviour feedback).
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import CliRun, fuzzgate, stdio_target

pytestmark = pytest.mark.e2e

TOOLS = ("split_bill", "parse_config", "get_stock_level", "format_label", "echo", "add", "search")
FLAGS = (*(f"--include={tool}" for tool in TOOLS), "--timeout", "2s", "--replays", "1", "--seed", "7")
AUTO = ("--feedback", "auto")  # the default, said: the e2e helper runs others with behaviour feedback


def _run(
    tmp_path: Path, corpus: Path, *extra: str, out: str = "out", measured: bool = True
) -> tuple[CliRun, dict[str, Any]]:
    run = fuzzgate(
        "run", *stdio_target("buggy_server.py"), *FLAGS, "--corpus", str(corpus), *extra,
        cwd=tmp_path, out=tmp_path / out, measured=measured,
    )  # fmt: skip
    assert run.code in (0, 1), run.stdout + run.stderr
    return run, json.loads((tmp_path / out / "report.json").read_text())


def _entries(corpus: Path) -> list[Path]:
    return sorted(corpus.rglob("*.json"))


@dataclass(frozen=True)
class Started:
    """A first run with coverage feedback and no corpus yet, then one from a copy of what it kept."""

    cold: CliRun
    cold_report: dict[str, Any]
    corpus: Path
    """What the first run kept: copied, never run on again."""
    warm: CliRun
    warm_report: dict[str, Any]
    warm_trace: Path


@pytest.fixture(scope="module")
def started(tmp_path_factory: pytest.TempPathFactory) -> Started:
    work = tmp_path_factory.mktemp("corpus")
    corpus = work / "corpus"
    # Bounded by cases, not time: under CI load an 8 s budget ended with coverage from the server's
    # start-up and no behaviour yet.
    cold, cold_report = _run(work, corpus, "--budget", "60s", "--cases", "12", *AUTO)
    copy = work / "corpus-a"
    shutil.copytree(corpus, copy)
    trace = work / "trace-a.jsonl"
    warm, warm_report = _run(
        work, copy, "--budget", "60s", "--cases", "12", "--trace", str(trace), *AUTO, out="out-a"
    )  # fmt: skip
    return Started(cold, cold_report, corpus, warm, warm_report, trace)


def test_a_run_keeps_entries_and_the_next_one_starts_from_them(started: Started) -> None:
    first, report = started.cold, started.cold_report
    feedback = report["feedback"]
    assert feedback["signal"] == "coverage", feedback
    assert feedback["lines"] > 0 and feedback["arcs"] > 0 and feedback["behaviours"] > 0
    assert "coverage" in first.stdout and "feedback:" in first.stdout
    kept = report["corpus"]
    assert kept["cold"] is not None and kept["loaded"] == 0
    assert kept["added"] > 0 and kept["saved"] > 0
    files = _entries(started.corpus)
    assert len(files) == kept["saved"]
    for file in files:
        entry = json.loads(file.read_text())
        assert entry["format"] == 1 and entry["tool"] in TOOLS
        assert entry["environment"]["fuzzgate"] and entry["feedback"]["signal"] == "coverage"
        assert file.parent.name == "buggy_server"

    second, again = started.warm, started.warm_report
    replay = again["corpus"]
    assert replay["cold"] is None and replay["loaded"] == len(files)
    assert replay["replayed"] > 0
    assert "corpus replayed:" in second.stdout


def test_a_corrupt_or_missing_corpus_is_a_cold_start_not_an_error(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    target = corpus / "buggy_server"
    target.mkdir(parents=True)
    (target / "broken.json").write_text("{not json")
    run, report = _run(tmp_path, corpus, "--budget", "60s", "--cases", "4")
    assert any("broken.json" in skipped for skipped in report["corpus"]["skipped"])
    assert (target / "broken.json").read_text() == "{not json", "a file fuzzgate cannot read is left alone"
    assert report["corpus"]["cold"] is not None
    assert "started cold" in run.stdout


def test_feedback_off_reads_and_writes_no_corpus(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    # Bounded by cases, not time: a loaded CI machine spent a 4 s budget before any call.
    _, report = _run(tmp_path, corpus, "--budget", "60s", "--cases", "4", "--feedback", "off")
    assert report["feedback"]["signal"] == "off"
    assert report["corpus"] is None
    assert not corpus.exists()


def test_behaviour_feedback_when_coverage_is_not_wanted(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    # Bounded by cases, not time: a loaded CI machine spent a 5 s budget before any call.
    _, report = _run(tmp_path, corpus, "--budget", "60s", "--cases", "8", "--feedback", "behaviour")
    assert report["feedback"]["signal"] == "behaviour"
    assert report["feedback"]["lines"] == 0
    assert report["corpus"]["saved"] > 0
    assert {json.loads(f.read_text())["feedback"]["signal"] for f in _entries(corpus)} == {"behaviour"}


def test_same_seed_and_corpus_send_the_same_requests(started: Started) -> None:
    # The warm run again, beside it and from another copy of the same corpus, only to be compared
    # with it: it reaches no code the warm run did not, so coverage does not trace it.
    work = started.corpus.parent
    copy = work / "corpus-b"
    shutil.copytree(started.corpus, copy)
    trace = work / "trace-b.jsonl"
    _run(
        work, copy, "--budget", "60s", "--cases", "12", "--trace", str(trace), *AUTO, out="out-b", measured=False
    )  # fmt: skip
    requests = []
    for sent in (started.warm_trace, trace):
        lines = [json.loads(line) for line in sent.read_text().splitlines()]
        requests.append([(line.get("tool"), json.dumps(line.get("arguments"), sort_keys=True)) for line in lines])
    assert requests[0] and requests[0] == requests[1]


def test_coverage_is_sampled_once_a_tool_stops_reaching_anything_new(tmp_path: Path) -> None:
    """`add` reaches all it can within a few calls: after 100 calls with nothing new, one in eight
    is measured, the others get behaviour feedback, and the report and the console say so."""
    corpus = tmp_path / "corpus"
    flags = ("--include=add", "--timeout", "2s", "--replays", "1", "--seed", "7", "--budget", "60s", "--cases", "300")
    run = fuzzgate("run", *stdio_target("buggy_server.py"), *flags, *AUTO, "--corpus", str(corpus), cwd=tmp_path)
    assert run.code == 0, run.stdout + run.stderr
    feedback = run.report["feedback"]
    assert feedback["signal"] == "coverage" and feedback["lines"] > 0 and feedback["arcs"] > 0, feedback
    sampling = feedback["sampling"]
    assert sampling["every"] == 8 and sampling["plateau"] == 100 and sampling["tools"] == ["add"], sampling
    assert sampling["measured"] >= 100 and sampling["unmeasured"] > 0, sampling
    assert "coverage sampled 1 in 8 after a plateau of 100 calls on add" in " ".join(run.stdout.split())

    every = fuzzgate(
        "run", *stdio_target("buggy_server.py"), *flags, *AUTO, "--coverage-sampling", "1",
        "--corpus", str(tmp_path / "corpus-every"), cwd=tmp_path, out=tmp_path / "out-every", measured=False,
    )  # fmt: skip
    assert every.code == 0, every.stdout + every.stderr
    assert "sampling" not in every.report["feedback"], "--coverage-sampling 1 measures every call"


def test_a_resource_read_only_by_its_corpus_entry_counts_as_tested(tmp_path: Path) -> None:
    """The second run reads the fixed resource when it replays its corpus entry, and then never
    again (the same request to a server in the same state is not sent twice): that resource was
    tested, and the run passes as the first one did, rather than "1 of the 1 ... got no call"
    (inconclusive, exit 4) on a corpus of its own making."""
    server = Path(__file__).resolve().parents[1] / "servers" / "surfaces.py"
    flags = ("--command", sys.executable, f"--arg={server}", "--arg=--clean", "--include=config://*")
    reports = []
    for out in ("first", "second"):
        run = fuzzgate(
            "run", *flags, "--budget", "16s", "--seed", "1", "--corpus", str(tmp_path / "corpus"),
            cwd=tmp_path, out=tmp_path / out, measured=out == "first",
        )  # fmt: skip
        assert run.code == 0, run.stdout + run.stderr
        reports.append(json.loads((tmp_path / out / "report.json").read_text()))
    second = reports[1]
    assert second["corpus"]["replayed"] == 1, second["corpus"]
    assert second["verdict"] == "pass" and not [n for n in second["notes"] if "got no" in n], second["notes"]
    (entry,) = [e for e in second["entries"] if e["status"] == "fuzzed"]
    assert entry["name"] == "config://settings" and entry["cases"] + entry["corpus_calls"] >= 1, entry
