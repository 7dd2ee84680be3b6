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
CORPUS_PAGE = DOCS_PAGE.parent / "corpus.md"
DOCS_PAGES = (DOCS_PAGE, CORPUS_PAGE)
CORPUS_PATH = ".fuzzgate/corpus"
RESTORE = "actions/cache/restore@"
SAVE = "actions/cache/save@"
EXPECTED = {
    "fuzzgate-pr.yml",
    "fuzzgate-nightly.yml",
    "fuzzgate-cli.yml",
    "fuzzgate-http.yml",
    "sharded-gate.yml",
    "fuzzgate-base.yml",
}
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


def _docs_workflows(tmp_path: Path, page: Path = DOCS_PAGE) -> list[Path]:
    """Every complete workflow (a block with `on:` and `jobs:`) in a docs page, as a file."""
    text = page.read_text(encoding="utf-8")
    blocks = re.findall(r"^```ya?ml\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    paths = []
    for index, block in enumerate(blocks):
        if re.search(r"^on:", block, re.MULTILINE) and re.search(r"^jobs:", block, re.MULTILINE):
            path = tmp_path / f"{page.stem}-workflow-{index}.yml"
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


@pytest.mark.parametrize("page", DOCS_PAGES, ids=lambda p: p.name)
def test_the_docs_workflows_are_valid(tmp_path: Path, page: Path) -> None:
    paths = _docs_workflows(tmp_path, page)
    assert paths, f"{page.name} shows no complete workflow"
    result = check_jsonschema("vendor.github-workflows", paths)
    assert result.returncode == 0, result.stdout + result.stderr
    linted = actionlint(paths)
    assert linted.returncode == 0, linted.stdout + linted.stderr


def test_action_steps_pass_only_declared_inputs(tmp_path: Path) -> None:
    declared = set(action_metadata()["inputs"])
    files = [*WORKFLOWS, *(path for page in DOCS_PAGES for path in _docs_workflows(tmp_path, page))]
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


def _docs_blocks(page: Path) -> list[dict[Any, Any]]:
    """The complete workflows of a docs page, parsed (as `_docs_workflows` finds them)."""
    text = page.read_text(encoding="utf-8")
    blocks = re.findall(r"^```ya?ml\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    complete = [b for b in blocks if re.search(r"^on:", b, re.MULTILINE) and re.search(r"^jobs:", b, re.MULTILINE)]
    return [yaml.safe_load(block) for block in complete]


# The workflows that carry the corpus: the examples but the HTTP one (a server the job starts
# itself), the pull request gate of the action's page and the workflow of the corpus page.
_CACHING = {
    "fuzzgate-pr.yml": lambda: _load(WORKFLOWS_DIR / "fuzzgate-pr.yml"),
    "fuzzgate-nightly.yml": lambda: _load(WORKFLOWS_DIR / "fuzzgate-nightly.yml"),
    "fuzzgate-cli.yml": lambda: _load(WORKFLOWS_DIR / "fuzzgate-cli.yml"),
    "sharded-gate.yml": lambda: _load(WORKFLOWS_DIR / "sharded-gate.yml"),
    "github-action.md": lambda: _docs_blocks(DOCS_PAGE)[0],
    "corpus.md": lambda: _docs_blocks(CORPUS_PAGE)[0],
}


def _is_fuzz_step(step: dict[str, Any]) -> bool:
    return step.get("uses") in (ACTION_REF, "./") or "fuzzgate run" in str(step.get("run", ""))


@pytest.mark.parametrize("name", list(_CACHING))
def test_the_corpus_is_restored_before_fuzzing_and_saved_after_it(name: str) -> None:
    workflow = _CACHING[name]()
    fuzzing_jobs = 0
    for job_name, job in workflow["jobs"].items():
        steps = job.get("steps", [])
        fuzz = [i for i, step in enumerate(steps) if _is_fuzz_step(step)]
        if not fuzz:
            continue
        fuzzing_jobs += 1
        restores = [i for i, step in enumerate(steps) if str(step.get("uses", "")).startswith(RESTORE)]
        assert len(restores) == 1 and restores[0] < fuzz[0], f"{name}/{job_name}: restore before fuzzing"
        restore = steps[restores[0]]["with"]
        assert restore["path"] == CORPUS_PATH
        # A key per run (cache entries are immutable), and a restore-keys prefix that finds the newest.
        assert "github.run_id" in restore["key"]
        assert restore["key"].startswith(restore["restore-keys"])
        assert steps[fuzz[0]].get("with", {}).get("corpus", CORPUS_PATH) == CORPUS_PATH
        for i, step in enumerate(steps):
            if str(step.get("uses", "")).startswith(SAVE):
                assert i > fuzz[0], f"{name}/{job_name}: save after fuzzing"
                assert step["with"] == {"path": CORPUS_PATH, "key": restore["key"]}
                condition = str(step["if"])
                # Never on pull requests (their caches serve only themselves), nor when cancelled.
                assert "!cancelled()" in condition
                assert "github.event_name != 'pull_request'" in condition or "github.event_name == 'push'" in condition
    assert fuzzing_jobs >= 1


def test_the_pr_gate_saves_on_pushes_to_main_only() -> None:
    workflow = _load(WORKFLOWS_DIR / "fuzzgate-pr.yml")
    assert _triggers(workflow)["push"] == {"branches": ["main"]}
    save = _step_using(workflow, SAVE)
    assert "github.event_name == 'push'" in save["if"]


def test_the_nightly_merges_its_shards_corpora_and_saves_once() -> None:
    workflow = _load(WORKFLOWS_DIR / "fuzzgate-nightly.yml")
    fuzz_steps = workflow["jobs"]["fuzz"]["steps"]
    assert not [step for step in fuzz_steps if str(step.get("uses", "")).startswith(SAVE)]
    handed = [
        step
        for step in fuzz_steps
        if str(step.get("uses", "")).startswith("actions/upload-artifact@") and step["with"]["path"] == CORPUS_PATH
    ]
    assert len(handed) == 1
    assert handed[0]["with"]["include-hidden-files"] is True
    merge = workflow["jobs"]["corpus"]
    assert merge["needs"] == "fuzz"
    runs = [str(step.get("run", "")) for step in merge["steps"]]
    assert any("fuzzgate corpus merge" in run for run in runs)
    pattern = next(step for step in merge["steps"] if "download-artifact" in str(step.get("uses", "")))
    assert handed[0]["with"]["name"].startswith(pattern["with"]["pattern"].rstrip("*"))
    assert [step for step in merge["steps"] if str(step.get("uses", "")).startswith(SAVE)]


def test_artifacts_of_dot_directories_include_hidden_files(tmp_path: Path) -> None:
    files = [*WORKFLOWS, *(path for page in DOCS_PAGES for path in _docs_workflows(tmp_path, page))]
    for path in files:
        for step in _steps(_load(path)):
            uses = str(step.get("uses", ""))
            # upload-artifact@v4 skips hidden files and directories unless told otherwise.
            if uses.startswith("actions/upload-artifact@") and str(step["with"]["path"]).startswith("."):
                assert step["with"].get("include-hidden-files") is True, f"{path.name}: {step}"


def test_the_sharded_gate_fuzzes_every_share_and_gates_once_on_the_merge() -> None:
    workflow = _load(WORKFLOWS_DIR / "sharded-gate.yml")
    fuzz, gate = workflow["jobs"]["fuzz"], workflow["jobs"]["gate"]
    shards = fuzz["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, len(shards) + 1)) and fuzz["strategy"]["fail-fast"] is False
    run = next(str(step["run"]) for step in fuzz["steps"] if "fuzzgate run" in str(step.get("run", "")))
    assert f'--shard "${{{{ matrix.shard }}}}/{len(shards)}"' in run
    # Findings (exit 1) go on to the merge; any other failure fails the shard.
    assert '[ "$status" -gt 1 ]' in run
    handed = next(
        step for step in fuzz["steps"] if str(step.get("uses", "")).startswith("actions/upload-artifact@")
        and step["with"]["path"] == ".fuzzgate/out"
    )  # fmt: skip
    assert handed["with"]["if-no-files-found"] == "error"
    assert gate["needs"] == "fuzz" and "!cancelled()" in gate["if"]
    assert gate["permissions"] == {"contents": "read", "security-events": "write", "checks": "write"}
    download = next(step for step in gate["steps"] if "download-artifact" in str(step.get("uses", "")))
    assert handed["with"]["name"].startswith(download["with"]["pattern"].rstrip("*"))
    merge = next(step for step in gate["steps"] if "fuzzgate merge" in str(step.get("run", "")))
    assert f"{download['with']['path']}/*" in merge["run"]
    # The merge's exit code is the gate's: nothing swallows it.
    assert "continue-on-error" not in merge and "||" not in merge["run"]
    uploads = [
        step for job in workflow["jobs"].values() for step in job["steps"] if "upload-sarif" in str(step.get("uses"))
    ]
    assert len(uploads) == 1 and uploads[0] in gate["steps"]
    assert uploads[0]["with"]["sarif_file"] == ".fuzzgate/out/fuzzgate.sarif"
    assert str(uploads[0]["if"]).startswith("always()")
    junit = _step_using(workflow, "mikepenz/action-junit-report@v4")
    assert junit["with"]["report_paths"] == ".fuzzgate/out/junit.xml" and str(junit["if"]).startswith("always()")
