"""Fixtures for the report writers' tests: a repository and a sample run in it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import NoReturn

import pytest

from fuzzgate.record.results import RunReport
from tests.report.report_factory import Sample, sample_report
from tests.validators import INSTALL_VALIDATORS, missing


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "fuzzgate.toml").write_text('[target]\ntype = "stdio"\ncommand = "python"\n')
    (root / "server.py").write_text("def divide(a, b):\n    return a / b\n")
    return root


@pytest.fixture
def sample(repo: Path) -> Sample:
    return Sample(repo)


@pytest.fixture
def report(repo: Path, sample: Sample) -> RunReport:
    return sample_report(repo, sample)


MULTITOOL_DIR = Path(__file__).resolve().parents[1] / ".tools" / "node_modules" / "@microsoft" / "sarif-multitool-linux"
_INSTALL_HINT = f"{INSTALL_VALIDATORS} to install @microsoft/sarif-multitool into tests/.tools"


def _missing(what: str) -> NoReturn:
    missing(what, _INSTALL_HINT)


@pytest.fixture(scope="session")
def sarif_schema() -> dict[str, object]:
    """The SARIF 2.1.0 JSON schema shipped with the SARIF Multitool."""
    path = MULTITOOL_DIR / "sarif-2.1.0.json"
    if not path.is_file():
        _missing(f"SARIF schema not found at {path}")
    schema: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return schema


@pytest.fixture(scope="session")
def multitool() -> Path:
    """The SARIF Multitool binary (called directly: the npx wrapper splits arguments on `;`)."""
    path = MULTITOOL_DIR / "Sarif.Multitool"
    if not os.access(path, os.X_OK):
        _missing(f"SARIF Multitool not found at {path}")
    return path
