"""The entrypoint's pure parts: inputs to argv, report to outputs, outputs to `$GITHUB_OUTPUT`."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from action_harness import input_env, parse_github_output
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from fuzzgate.cli import action
from fuzzgate.cli import main as cli
from fuzzgate.model.errors import UsageError
from fuzzgate.model.findings import Finding, Kind, Repro, Severity, Surface
from fuzzgate.record.results import BaselineState, RunReport, TargetSummary, Verdict
from fuzzgate.report import json_report


def test_hyphenated_inputs_are_read_as_github_spells_them() -> None:
    inputs = action.ActionInputs.from_environ(input_env({"fail-on": "high", "working-directory": "server"}))
    assert inputs.fail_on == "high"
    assert inputs.working_directory == "server"


def test_underscored_spelling_is_read_too_and_the_hyphenated_one_wins() -> None:
    assert action.ActionInputs.from_environ({"INPUT_FAIL_ON": "low"}).fail_on == "low"
    both = {"INPUT_FAIL_ON": "low", "INPUT_FAIL-ON": "critical"}
    assert action.ActionInputs.from_environ(both).fail_on == "critical"


def test_defaults_become_the_run_flags_and_no_seed_is_passed() -> None:
    argv = action.ActionInputs.from_environ(input_env()).run_argv()
    assert argv == [
        "run",
        "--budget",
        "60s",
        "--mode",
        "mixed",
        "--fail-on",
        "medium",
        "--baseline",
        ".fuzzgate/baseline",
        "--corpus",
        ".fuzzgate/corpus",
        "--out",
        ".fuzzgate/out",
    ]


def test_empty_inputs_leave_the_config_file_in_charge() -> None:
    env = input_env({"budget": "", "mode": " ", "fail-on": ""})
    argv = action.ActionInputs.from_environ(env).run_argv()
    assert "--budget" not in argv and "--mode" not in argv and "--fail-on" not in argv


def test_the_corpus_input_is_passed_as_corpus_and_the_cli_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inputs = action.ActionInputs.from_environ(input_env({"corpus": "ci/corpus"}))
    argv = inputs.run_argv()
    assert argv[argv.index("--corpus") + 1] == "ci/corpus"
    (tmp_path / "fuzzgate.toml").write_text('[target]\ncommand = "python"\nargs = ["server.py"]\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    config = cli.load(cli.build_parser().parse_args(argv), Console(file=StringIO()))
    # Relative to the working directory the entrypoint runs in, like `baseline` and `output`.
    assert config.corpus.resolve() == tmp_path / "ci" / "corpus"


def test_an_empty_corpus_input_leaves_the_config_files_corpus_in_force(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = action.ActionInputs.from_environ(input_env({"corpus": ""})).run_argv()
    assert "--corpus" not in argv
    (tmp_path / "fuzzgate.toml").write_text(
        '[target]\ncommand = "python"\nargs = ["server.py"]\n\n[fuzzgate]\ncorpus = "kept"\n', encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    config = cli.load(cli.build_parser().parse_args(argv), Console(file=StringIO()))
    assert config.corpus.resolve() == tmp_path / "kept"


def test_args_are_split_like_a_shell_and_come_last() -> None:
    env = input_env({"seed": "42", "config": "ci/fuzzgate.toml", "args": "--exclude 'sync_*' --header 'X-Env: ci'"})
    argv = action.ActionInputs.from_environ(env).run_argv()
    assert argv[-4:] == ["--exclude", "sync_*", "--header", "X-Env: ci"]
    assert argv[argv.index("--seed") + 1] == "42"
    assert argv[argv.index("--config") + 1] == "ci/fuzzgate.toml"


def test_unbalanced_quotes_in_args_are_a_usage_error() -> None:
    with pytest.raises(UsageError, match="input `args`"):
        action.ActionInputs.from_environ(input_env({"args": "--include 'search_*"}))


def test_integers_are_plain_lines_and_text_is_a_delimited_block() -> None:
    text = action.format_outputs({"new": 3, "sarif": "out/fuzzgate.sarif"})
    lines = text.splitlines()
    assert lines[0] == "new=3"
    assert lines[1].startswith("sarif<<") and lines[3] == lines[1][len("sarif<<") :]
    assert parse_github_output(text) == {"new": "3", "sarif": "out/fuzzgate.sarif"}


# Carriage returns are left out: how the runner treats a lone CR inside a value is its own business.
_values = st.text(st.characters(exclude_characters="\r", exclude_categories=("Cs",)))
_names = st.from_regex(r"[a-z][a-z0-9_-]{0,15}", fullmatch=True)


@given(st.dictionaries(_names, st.one_of(_values, st.integers(min_value=0))))
def test_any_value_reads_back_as_written(outputs: dict[str, str | int]) -> None:
    parsed = parse_github_output(action.format_outputs(outputs))
    assert parsed == {name: str(value) for name, value in outputs.items()}


@given(_values)
def test_a_value_cannot_set_another_output(value: str) -> None:
    injected = f"{value}\nverdict=pass\nsarif<<EOF\nevil\nEOF"
    parsed = parse_github_output(action.format_outputs({"summary": injected}))
    assert parsed == {"summary": injected}


def _finding(fingerprint: str, severity: Severity = Severity.HIGH) -> Finding:
    return Finding(
        kind=Kind.CRASH,
        severity=severity,
        surface=Surface.TOOL,
        name="divide",
        message="the server exited",
        fingerprint=fingerprint,
        repro=Repro(seed=7, case_index=0, arguments={"b": 0}, transport="stdio"),
    )


def _write_report(out_dir: Path) -> None:
    report = RunReport(
        version="0.0.0",
        target=TargetSummary(name="example", kind="stdio"),
        seed=1234,
        seed_source="--seed",
        budget_s=1.0,
        duration_s=1.0,
        calls=10,
        mode="mixed",
        fail_on=Severity.MEDIUM,
        entries=(),
        findings=(_finding("a" * 16), _finding("b" * 16), _finding("c" * 16)),
        verdict=Verdict.FAIL,
        states={"a" * 16: BaselineState.NEW, "b" * 16: BaselineState.KNOWN, "c" * 16: BaselineState.NEW},
        fixed=(_finding("d" * 16),),
    )
    json_report.write(report, out_dir)


def test_outputs_count_findings_by_baseline_state_and_name_paths_from_the_workspace(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    out = workspace / "server" / ".fuzzgate" / "out"
    _write_report(out)
    outputs = action.run_outputs(out, workspace)
    assert outputs == {
        "verdict": "fail",
        "new": 2,
        "pre_existing": 0,
        "known": 1,
        "fixed": 1,
        "sarif": "server/.fuzzgate/out/fuzzgate.sarif",
        "junit": "server/.fuzzgate/out/junit.xml",
        "report": "server/.fuzzgate/out/report.json",
        "summary": "server/.fuzzgate/out/summary.md",
        "seed": 1234,
    }
    assert list(outputs) == list(action.OUTPUT_NAMES)


def test_an_output_directory_outside_the_workspace_is_named_in_full(tmp_path: Path) -> None:
    out = tmp_path / "elsewhere"
    _write_report(out)
    outputs = action.run_outputs(out, tmp_path / "ws")
    assert outputs["report"] == str(out / "report.json")


def test_the_output_directory_is_the_one_the_cli_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "fuzzgate.toml").write_text(
        '[target]\ncommand = "python"\nargs = ["server.py"]\n\n[fuzzgate]\nout = "reports"\n', encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    # An empty `output` input leaves the config file's `out` in force...
    no_output = action.ActionInputs(config="fuzzgate.toml")
    assert action.out_dir(no_output.run_argv()) == tmp_path / "reports"
    # ...and `--out` in `args` comes last, so it wins over the `output` input.
    both = action.ActionInputs(config="fuzzgate.toml", output="from-input", args=("--out", "from-args"))
    assert action.out_dir(both.run_argv()) == tmp_path / "from-args"
