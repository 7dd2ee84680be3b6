"""The example workflows (and the workflows in docs/github-action.md) are valid GitHub workflows
and use the action the way its documentation says."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from action_harness import (
    DOCS_PAGE,
    WORKFLOWS_DIR,
    action_metadata,
    action_validator,
    actionlint,
    check_jsonschema,
)

WORKFLOWS = sorted(WORKFLOWS_DIR.glob("*.yml"))
EXPECTED = {"fuzzgate-pr.yml", "fuzzgate-nightly.yml", "fuzzgate-cli.yml", "fuzzgate-http.yml"}
ACTION_REF = "your-org/fuzzgate@v0"

_BROKEN_WORKFLOW = """\
on: pull_request
jobs:
  fuzz:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        run: echo a step cannot both use an action and run a command
      - run: echo ${{ github.event.pull_request.head.sha }
"""


def _load(path: Path) -> dict[Any, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _triggers(workflow: dict[Any, Any]) -> dict[str, Any]:
    # YAML 1.1 reads the bare key `on` as the boolean true.
    on = workflow.get("on", workflow.get(True))
    if isinstance(on, str):
        return {on: None}
    if isinstance(on, list):
        return dict.fromkeys(on)
    assert isinstance(on, dict)
    return on


def _steps(workflow: dict[Any, Any]) -> list[dict[str, Any]]:
    return [step for job in workflow["jobs"].values() for step in job.get("steps", [])]


def _step_using(workflow: dict[Any, Any], prefix: str) -> dict[str, Any]:
    found = [step for step in _steps(workflow) if str(step.get("uses", "")).startswith(prefix)]
    assert len(found) == 1, f"expected one step using {prefix}, found {len(found)}"
    return found[0]


def _docs_workflows(tmp_path: Path) -> list[Path]:
    """Every complete workflow (a block with `on:` and `jobs:`) in the docs page, as a file."""
    text = DOCS_PAGE.read_text(encoding="utf-8")
    blocks = re.findall(r"^```ya?ml\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    paths = []
    for index, block in enumerate(blocks):
        if re.search(r"^on:", block, re.MULTILINE) and re.search(r"^jobs:", block, re.MULTILINE):
            path = tmp_path / f"docs-workflow-{index}.yml"
            path.write_text(block, encoding="utf-8")
            paths.append(path)
    return paths


def test_the_examples_are_all_there() -> None:
    assert {path.name for path in WORKFLOWS} == EXPECTED


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_matches_githubs_schema(path: Path) -> None:
    result = check_jsonschema("vendor.github-workflows", [path])
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_action_validator_accepts_workflow(path: Path) -> None:
    result = action_validator(path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_accepts_the_workflows() -> None:
    result = actionlint(WORKFLOWS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_validators_reject_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text(_BROKEN_WORKFLOW, encoding="utf-8")
    assert check_jsonschema("vendor.github-workflows", [broken]).returncode == 1
    assert action_validator(broken).returncode == 1
    linted = actionlint([broken])
    assert linted.returncode == 1
    assert "expression" in linted.stdout


def test_the_docs_workflows_are_valid(tmp_path: Path) -> None:
    paths = _docs_workflows(tmp_path)
    assert paths, f"{DOCS_PAGE.name} shows no complete workflow"
    result = check_jsonschema("vendor.github-workflows", paths)
    assert result.returncode == 0, result.stdout + result.stderr
    linted = actionlint(paths)
    assert linted.returncode == 0, linted.stdout + linted.stderr


def test_action_steps_pass_only_declared_inputs(tmp_path: Path) -> None:
    declared = set(action_metadata()["inputs"])
    files = [*WORKFLOWS, *_docs_workflows(tmp_path)]
    uses = 0
    for path in files:
        for step in _steps(_load(path)):
            if step.get("uses") in (ACTION_REF, "./"):
                uses += 1
                assert set(step.get("with", {})) <= declared, f"{path.name}: {step}"
    assert uses >= 3


def test_pr_gate_uploads_sarif_and_junit_even_when_the_gate_fails() -> None:
    workflow = _load(WORKFLOWS_DIR / "fuzzgate-pr.yml")
    assert "pull_request" in _triggers(workflow)
    assert workflow["permissions"] == {"contents": "read", "security-events": "write", "checks": "write"}
    fuzz = _step_using(workflow, ACTION_REF)
    sarif = _step_using(workflow, "github/codeql-action/upload-sarif@v3")
    junit = _step_using(workflow, "mikepenz/action-junit-report@v4")
    artifact = _step_using(workflow, "actions/upload-artifact@")
    for step in (sarif, junit, artifact):
        assert str(step["if"]).startswith("always()"), step
    assert sarif["with"]["category"] == "fuzzgate"
    assert sarif["with"]["sarif_file"] == f"${{{{ steps.{fuzz['id']}.outputs.sarif }}}}"
    assert junit["with"]["report_paths"] == f"${{{{ steps.{fuzz['id']}.outputs.junit }}}}"


def test_nightly_runs_longer_on_a_schedule_and_fails_on_low() -> None:
    workflow = _load(WORKFLOWS_DIR / "fuzzgate-nightly.yml")
    triggers = _triggers(workflow)
    assert "schedule" in triggers and "workflow_dispatch" in triggers
    fuzz = _step_using(workflow, ACTION_REF)
    assert fuzz["with"]["fail-on"] == "low"
    assert "10m" in fuzz["with"]["budget"]


def test_http_recipe_starts_the_server_before_fuzzing_its_url() -> None:
    steps = _steps(_load(WORKFLOWS_DIR / "fuzzgate-http.yml"))
    runs = [str(step.get("run", "")) for step in steps]
    start = next(i for i, run in enumerate(runs) if "&" in run and "server" in run)
    wait = next(i for i, run in enumerate(runs) if "/dev/tcp/" in run)
    fuzz = next(i for i, run in enumerate(runs) if "fuzzgate run" in run)
    assert start < wait < fuzz
    assert "--url" in runs[fuzz] and "/mcp" in runs[fuzz]
