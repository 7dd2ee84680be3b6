"""`fuzzgate work --also CONFIG`: the worker's targets, each with its own name and target."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgate.cli.work import load_configs
from fuzzgate.config import Overrides, load_config
from fuzzgate.model.errors import UsageError


def test_two_targets_of_one_name_are_a_usage_error(tmp_path: Path) -> None:
    config = tmp_path / "a.toml"
    config.write_text('[target]\nkind = "stdio"\ncommand = "server"\n\n[fuzzgate]\nname = "same"\n', encoding="utf-8")
    main = load_config(config, Overrides(), {}, warn=lambda message: None)
    with pytest.raises(UsageError, match="both named 'same'"):
        load_configs(main, [config], Overrides(), lambda message: None)
    other = tmp_path / "b.toml"
    other.write_text('[target]\nkind = "stdio"\ncommand = "server"\n\n[fuzzgate]\nname = "other"\n', encoding="utf-8")
    # Target flags apply to the main config only: --also keeps its own target.
    configs = load_configs(main, [other], Overrides(command="flagged"), lambda message: None)
    assert [c.target.display_name for c in configs] == ["same", "other"]
    assert configs[1].target.command == "server"
