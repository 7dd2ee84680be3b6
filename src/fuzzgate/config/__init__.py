"""Configuration: find the file, read it (TOML or YAML, wallfacer-compatible), lay the flags over it.

- In: `--config`, the environment, or the first config file on the walk up to `.git`; the CLI's
  `Overrides`.
- Out: a frozen `Config` (with its `TargetConfig`), and `Config.expanded`, every value a `${VAR}`
  expanded to, which the redactor treats as a secret.
- Never: start a process or reach a server; an error names the file, section and key, and suggests
  the nearest valid key.

`load.py` finds and loads the file, `model.py` holds the frozen types, `views.py` the views of a
`Config` several stages read (`ServerSettings`), `starter.py` writes
`fuzzgate init`'s file, `rebase.py` maps the target to the base revision's checkout (`--base`); the
private modules parse documents, values, durations and `${VAR}`s. The
reference for every section and key is docs/configuration.md.
"""

from __future__ import annotations

from fuzzgate.config._durations import format_duration, parse_duration, parse_size
from fuzzgate.config._overrides import OVERRIDE_FLAGS, Overrides
from fuzzgate.config._schema import CONFIG_FILE_NAMES
from fuzzgate.config.load import CONFIG_ENV_VARS, find_config, flag_secret_patterns, load_config
from fuzzgate.config.model import Config, FeedbackMode, GenerationMode, ProtocolMode, TargetConfig, TargetKind
from fuzzgate.config.starter import starter_config

__all__ = [
    "CONFIG_ENV_VARS",
    "CONFIG_FILE_NAMES",
    "OVERRIDE_FLAGS",
    "Config",
    "FeedbackMode",
    "GenerationMode",
    "Overrides",
    "ProtocolMode",
    "TargetConfig",
    "TargetKind",
    "find_config",
    "flag_secret_patterns",
    "format_duration",
    "load_config",
    "parse_duration",
    "parse_size",
    "starter_config",
]
