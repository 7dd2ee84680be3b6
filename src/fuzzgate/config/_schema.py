"""Every section and key a config file may hold, in the order the documentation lists them.

The loader warns about keys not listed here and suggests the nearest listed one.
"""

from __future__ import annotations

from fuzzgate.model.findings import Kind

CONFIG_FILE_NAMES = ("fuzzgate.toml", "fuzzgate.yaml", "fuzzgate.yml", "wallfacer.toml")
"""Looked for, in this order, in the working directory and each parent up to the repository root."""

YAML_SUFFIXES = (".yaml", ".yml")

COMMAND_KEYS = ("command", "args", "env", "cwd")
"""How fuzzgate starts the server: a stdio target's, or the command serving an http target."""
HTTP_KEYS = ("url", "headers")
TARGET_KEYS = ("kind", *COMMAND_KEYS, *HTTP_KEYS, "timeout_ms", "scope", "sandbox", "feedback", "coverage_source")

WALLFACER_ONLY_KINDS = ("property_failure", "state_leak", "sequence_failure")
"""wallfacer `[severity]` kinds fuzzgate accepts and keeps but never reports."""

SEVERITY_KEYS = (*(kind.value for kind in Kind), *WALLFACER_ONLY_KINDS)

FUZZGATE_KEYS = (
    "name",
    "budget",
    "cases",
    "mode",
    "concurrency",
    "include",
    "exclude",
    "max_tools",
    "seed",
    "fail_on",
    "fail_on_sdk",
    "out",
    "baseline",
    "base",
    "changed_files",
    "corpus",
    "shard",
    "store",
    "secret_patterns",
    "slow",
    "max_string",
    "replays",
    "shrink_tries",
    "coverage_sampling",
    "protocol",
    "startup_timeout",
    "memory_limit",
    "fuzz_guarded_in_sandbox",
)

SECTION_KEYS: dict[str, tuple[str, ...]] = {
    "target": TARGET_KEYS,
    "output": ("corpus_dir", "lock_timeout_ms"),
    "severity": SEVERITY_KEYS,
    "destructive": ("patterns", "replace_defaults"),
    "allow_destructive": ("tools",),
    "packs": (),
    "fuzzgate": FUZZGATE_KEYS,
}
"""Known keys per top-level section; `packs` holds one free-form table per rule pack."""


def sections_holding(key: str) -> list[str]:
    """The sections where `key` is a known key (to point at the right one when it is misplaced)."""
    return [name for name, keys in SECTION_KEYS.items() if key in keys]
