"""report.json is a contract (docs/schemas/report.schema.json): whatever `RunReport.to_json` writes,
for any value of every field, conforms to the published schema and reads back whole. The e2e helper
(`tests/e2e/conftest.py`) checks every report.json a real run writes against the same schema."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from fuzzgate.config.model import Shard
from fuzzgate.model.findings import Kind, Severity, Surface
from fuzzgate.record.results import (
    BaselineState,
    CorpusSummary,
    FeedbackSummary,
    MemorySummary,
    RunReport,
    SamplingSummary,
    Status,
    SurfaceEntry,
    TargetSummary,
    Verdict,
)
from fuzzgate.store.baseline import BaselineEntry
from tests import strategies
from tests.report.report_factory import make_finding, sample_report
from tests.report_schema import BASELINE, REPORT, SCHEMAS, assert_conforms, schema_errors
from tests.strategies import complete, text
from tests.validators import INSTALL_TEST_EXTRA, missing

counts = st.integers(min_value=0, max_value=10**9)
optional_text = st.none() | text
# to_json writes seconds to the millisecond.
seconds = st.integers(min_value=0, max_value=10**7).map(lambda ms: ms / 1000)
STAGES = ("startup", "discovery", "fuzzing", "verification", "outputs")

entries = complete(
    SurfaceEntry,
    surface=st.sampled_from([Surface.TOOL, Surface.RESOURCE, Surface.PROMPT]),
    name=text,
    status=st.sampled_from(Status),
    reason=optional_text,
    cases=counts,
    probes_planned=counts,
    probes_sent=counts,
    corpus_calls=counts,
)
targets = complete(
    TargetSummary,
    name=text,
    kind=st.sampled_from(["stdio", "http"]),
    command=optional_text,
    args=st.lists(text, max_size=3).map(tuple),
    url=optional_text,
    protocol_version=optional_text,
    server_name=optional_text,
    server_version=optional_text,
    header_names=st.lists(text, max_size=2).map(tuple),
)
samplings = complete(
    SamplingSummary,
    every=st.integers(min_value=2, max_value=1024),
    plateau=st.integers(min_value=1, max_value=10**4),
    tools=st.lists(text, max_size=3).map(tuple),
    measured=counts,
    unmeasured=counts,
)
feedbacks = complete(
    FeedbackSummary,
    signal=st.sampled_from(["coverage", "behaviour", "off"]),
    note=text,
    behaviours=counts,
    lines=counts,
    arcs=counts,
    constants=counts,
    sampling=st.none() | samplings,
)
corpora = complete(
    CorpusSummary,
    path=optional_text,
    loaded=counts,
    skipped=st.lists(text, max_size=2).map(tuple),
    cold=optional_text,
    replayed=counts,
    kept=counts,
    not_replayed=counts,
    replay_s=seconds,
    added=counts,
    saved=counts,
    save_error=optional_text,
)

memories = complete(MemorySummary, limit=st.integers(min_value=1, max_value=2**62), peak=counts)


@st.composite
def reports(draw: st.DrawFn) -> RunReport:
    # Findings and fixed baseline entries never share a fingerprint; a fixed entry reads back FIXED.
    drawn = draw(st.lists(strategies.findings, max_size=5, unique_by=lambda f: f.fingerprint))
    split = draw(st.integers(min_value=0, max_value=len(drawn)))
    findings, fixed = tuple(drawn[:split]), tuple(drawn[split:])
    found = [BaselineState.NEW, BaselineState.KNOWN, BaselineState.PRE_EXISTING]
    states = {f.fingerprint: draw(st.sampled_from(found)) for f in findings}
    states |= {f.fingerprint: BaselineState.FIXED for f in fixed}
    shards = st.integers(min_value=1, max_value=64).flatmap(
        lambda n: st.builds(Shard, st.integers(min_value=1, max_value=n), st.just(n))
    )
    built = complete(
        RunReport,
        version=text,
        target=targets,
        seed=st.integers(min_value=0, max_value=2**64),
        seed_source=text,
        budget_s=st.integers(min_value=1, max_value=10**6).map(float),
        duration_s=seconds,
        calls=counts,
        mode=st.sampled_from(["conform", "adversarial", "mixed"]),
        fail_on=st.sampled_from(Severity),
        entries=st.lists(entries, max_size=3).map(tuple),
        findings=st.just(findings),
        verdict=st.sampled_from(Verdict),
        states=st.just(states),
        fixed=st.just(fixed),
        config_path=optional_text,
        command_flags=st.lists(text, max_size=3).map(tuple),
        target_line=st.integers(min_value=1, max_value=10**5),
        resources=st.lists(text, max_size=2).map(tuple),
        prompts=st.lists(text, max_size=2).map(tuple),
        hypothesis_version=optional_text,
        fingerprint_scheme=st.sampled_from(["v1", "v2", "v3"]),
        interrupted=st.booleans(),
        notes=st.lists(text, max_size=3).map(tuple),
        timing=st.dictionaries(st.sampled_from(STAGES), seconds),
        containment=optional_text,
        feedback=st.none() | feedbacks,
        corpus=st.none() | corpora,
        shard=st.none() | shards,
        unsendable=counts,
        client_failed=counts,
        cut_off=st.lists(text, max_size=2).map(tuple),
        fail_on_sdk=st.booleans(),
        memory=st.none() | memories,
    )
    return draw(built)


@given(reports())
def test_any_report_conforms_to_the_published_schema_and_reads_back_whole(report: RunReport) -> None:
    written = json.loads(json.dumps(report.to_json(), ensure_ascii=False))
    assert_conforms(written)
    assert RunReport.from_json(written) == report


def _written(repo: Path) -> dict[str, Any]:
    """A conforming report: the reporters' sample (findings of each state, a fixed entry, every surface)."""
    written: dict[str, Any] = json.loads(json.dumps(sample_report(repo).to_json()))
    return written


def test_the_schema_refuses_what_fuzzgate_never_writes(tmp_path: Path) -> None:
    # The control: a conforming report, then departures the schema must name.
    assert schema_errors(_written(tmp_path)) == []
    unknown = _written(tmp_path) | {"verdikt": "pass"}
    assert any("verdikt" in e for e in schema_errors(unknown))
    wrong = _written(tmp_path) | {"verdict": "passed"}
    assert any(e.startswith("verdict:") for e in schema_errors(wrong))
    missing = _written(tmp_path)
    del missing["calls"]
    assert any("'calls' is a required property" in e for e in schema_errors(missing))
    later = _written(tmp_path) | {"report_version": 2}
    assert any(e.startswith("report_version:") for e in schema_errors(later))


def test_the_baseline_schema_reads_report_json_s_repro_and_refuses_what_fuzzgate_never_writes() -> None:
    entry = json.loads(BaselineEntry.of(make_finding("0123456789abcdef0123")).to_bytes())
    assert schema_errors(entry, BASELINE) == []
    # report.schema.json's repro, through the reference: a transport fuzzgate never writes.
    entry["repro"]["transport"] = "ftp"
    assert any(e.startswith("repro/transport:") for e in schema_errors(entry, BASELINE))
    assert any("fuzzgate_baseline" in e for e in schema_errors({"fingerprint": "x"}, BASELINE))


def _check_jsonschema(schema: str, document: Path) -> subprocess.CompletedProcess[str]:
    """`check-jsonschema --schemafile docs/schemas/SCHEMA FILE`, as a user's workflow would run it."""
    if importlib.util.find_spec("check_jsonschema") is None:
        missing("check-jsonschema is not installed", INSTALL_TEST_EXTRA)
    command = [sys.executable, "-m", "check_jsonschema", "--schemafile", str(SCHEMAS / schema), str(document)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def test_a_validator_reading_the_schemas_from_their_directory_resolves_them(tmp_path: Path) -> None:
    # check-jsonschema resolves the baseline schema's reference to report.schema.json beside it.
    report, entry = tmp_path / "report.json", tmp_path / "entry.json"
    report.write_text(json.dumps(_written(tmp_path)), encoding="utf-8")
    prompt = make_finding("fedcba9876543210fedc", kind=Kind.HANG, surface=Surface.PROMPT, name="summarize")
    prompt = replace(prompt, repro=replace(prompt.repro, transport="http", surface=Surface.PROMPT))
    entry.write_bytes(BaselineEntry.of(prompt).to_bytes())
    for schema, document in ((REPORT, report), (BASELINE, entry)):
        result = _check_jsonschema(schema, document)
        assert result.returncode == 0, result.stdout + result.stderr
    broken = json.loads(entry.read_text(encoding="utf-8"))
    broken["repro"]["surface"] = "telepathy"
    entry.write_text(json.dumps(broken), encoding="utf-8")
    result = _check_jsonschema(BASELINE, entry)
    assert result.returncode == 1 and "repro.surface" in result.stdout, result.stdout + result.stderr
