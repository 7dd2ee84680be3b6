"""Helpers shared by the config tests: write a config file into a temporary working directory."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from fuzzgate.config import Config, Overrides, load_config

Loader = Callable[..., tuple[Config, list[str]]]


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Messages name files relative to the working directory; tests run in their own tmp dir.
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def load(tmp_path: Path) -> Loader:
    """load(text, name="fuzzgate.toml", overrides=..., environ=...) -> (config, warnings)."""

    def _load(
        text: str,
        name: str = "fuzzgate.toml",
        *,
        overrides: Overrides | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> tuple[Config, list[str]]:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        warnings: list[str] = []
        config = load_config(path, overrides or Overrides(), environ or {}, warn=warnings.append)
        return config, warnings

    return _load
