"""action.yml: valid for GitHub's action metadata schema, and in step with the entrypoint."""

from __future__ import annotations

from pathlib import Path

import pytest
from action_harness import ACTION_YML, action_metadata, action_validator, check_jsonschema

from fuzzgate.cli import action
from fuzzgate.cli.main import build_parser


def _broken_copy(tmp_path: Path) -> Path:
    """action.yml with an unknown `runs.using`, which GitHub refuses to run."""
    broken = tmp_path / "action.yml"
    text = ACTION_YML.read_text(encoding="utf-8")
    assert "using: docker" in text
    broken.write_text(text.replace("using: docker", "using: dockerfile"), encoding="utf-8")
    return broken


def test_action_yml_matches_githubs_schema() -> None:
    result = check_jsonschema("vendor.github-actions", [ACTION_YML])
    assert result.returncode == 0, result.stdout + result.stderr


def test_check_jsonschema_rejects_a_broken_action(tmp_path: Path) -> None:
    result = check_jsonschema("vendor.github-actions", [_broken_copy(tmp_path)])
    assert result.returncode == 1, result.stdout + result.stderr


def test_action_validator_accepts_action_yml() -> None:
    result = action_validator(ACTION_YML)
    assert result.returncode == 0, result.stdout + result.stderr


def test_action_validator_rejects_a_broken_action(tmp_path: Path) -> None:
    result = action_validator(_broken_copy(tmp_path))
    assert result.returncode == 1, result.stdout + result.stderr


def test_it_is_a_docker_action_built_from_the_dockerfile() -> None:
    runs = action_metadata()["runs"]
    assert runs["using"] == "docker"
    assert runs["image"] == "Dockerfile"
    assert (ACTION_YML.parent / runs["image"]).is_file()


def test_every_input_and_output_is_described() -> None:
    meta = action_metadata()
    for section in ("inputs", "outputs"):
        for name, spec in meta[section].items():
            assert str(spec.get("description", "")).strip(), f"{section}.{name} has no description"
    for name, spec in meta["inputs"].items():
        assert "default" in spec, f"input {name} has no default"
        assert spec.get("required", False) is False, f"input {name} should be optional"


def test_inputs_are_the_ones_the_entrypoint_reads() -> None:
    assert list(action_metadata()["inputs"]) == list(action.INPUT_NAMES)


def test_outputs_are_the_ones_the_entrypoint_writes() -> None:
    assert list(action_metadata()["outputs"]) == list(action.OUTPUT_NAMES)


@pytest.mark.parametrize(("name", "default"), [("budget", "60s"), ("mode", "mixed"), ("fail-on", "medium")])
def test_default_inputs_are_accepted_by_the_cli(name: str, default: str) -> None:
    assert action_metadata()["inputs"][name]["default"] == default
    # The same argv the entrypoint builds from the defaults must parse.
    inputs = action.ActionInputs(**{name.replace("-", "_"): default})
    build_parser().parse_args(inputs.run_argv())


def test_default_paths_match_the_cli_defaults() -> None:
    from fuzzgate.config.model import Config

    inputs = action_metadata()["inputs"]
    fields = Config.__dataclass_fields__
    assert Path(inputs["output"]["default"]) == fields["out_dir"].default
    assert Path(inputs["baseline"]["default"]) == fields["baseline_dir"].default
    assert Path(inputs["corpus"]["default"]) == fields["corpus"].default
