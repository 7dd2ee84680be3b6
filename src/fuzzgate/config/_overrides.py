"""Command-line settings that win over the config file."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from fuzzgate.config.model import DEFAULT_BASELINE_DIR, DEFAULT_OUT_DIR


@dataclass(frozen=True, slots=True)
class Overrides:
    """One optional value per overridable setting; None means the flag was not given.

    Values may be the raw strings a command line holds ("100" for `cases`): they are validated
    with the same rules as file values, and errors name the flag (`--cases: expected ...`) as
    spelled in `OVERRIDE_FLAGS`.
    """

    budget: str | float | None = None
    cases: int | str | None = None
    mode: str | None = None
    concurrency: int | str | None = None
    include: tuple[str, ...] | None = None
    """Replaces the file's `include` list."""
    exclude: tuple[str, ...] | None = None
    """Replaces the file's `exclude` list."""
    max_tools: int | str | None = None
    seed: int | str | None = None
    fail_on: str | None = None
    fail_on_sdk: bool | None = None
    out: Path | str | None = None
    secret_patterns: tuple[str, ...] | None = None
    """Added to the file's `secret_patterns`, not replacing them."""
    slow: str | float | None = None
    max_string: str | int | None = None
    replays: int | str | None = None
    shrink_tries: int | str | None = None
    coverage_sampling: int | str | None = None
    protocol: str | None = None
    startup_timeout: str | float | None = None
    memory_limit: str | int | None = None
    """A size, or `off`, replacing `[fuzzgate] memory_limit`."""
    baseline: Path | str | None = None
    base: Path | str | None = None
    changed_files: Path | str | None = None
    corpus: Path | str | None = None
    shard: str | None = None
    """`I/N`, replacing `[fuzzgate] shard`."""
    store: str | None = None
    """A store URL or directory, replacing `[fuzzgate] store`."""
    name: str | None = None
    fuzz_guarded_in_sandbox: bool | None = None
    """True: fuzz guarded tools where the sandbox holds (`--fuzz-guarded-in-sandbox`)."""

    command: str | None = None
    """A stdio target: replaces the file's command and its args (give new ones in `args`)."""
    args: tuple[str, ...] | None = None
    """Arguments of the stdio command; replace the file's `args`."""
    url: str | None = None
    """An HTTP target: replaces the file's URL."""
    headers: tuple[str, ...] | None = None
    """`"Name: value"` strings, laid over the file's headers (a name given here, in any case, wins)."""
    timeout: str | float | None = None
    """Per-request timeout, replacing `[target] timeout_ms`."""
    sandbox: str | None = None
    """`auto`, `required` or `off`, replacing `[target] sandbox`."""
    feedback: str | None = None
    """`auto`, `behaviour` or `off`, replacing `[target] feedback`."""


OVERRIDE_FLAGS: MappingProxyType[str, str] = MappingProxyType(
    {
        "budget": "--budget",
        "cases": "--cases",
        "mode": "--mode",
        "concurrency": "--concurrency",
        "include": "--include",
        "exclude": "--exclude",
        "max_tools": "--max-tools",
        "seed": "--seed",
        "fail_on": "--fail-on",
        "fail_on_sdk": "--fail-on-sdk",
        "out": "--out",
        "secret_patterns": "--secret-pattern",
        "slow": "--slow",
        "max_string": "--max-string",
        "replays": "--replays",
        "shrink_tries": "--shrink-tries",
        "coverage_sampling": "--coverage-sampling",
        "protocol": "--protocol",
        "startup_timeout": "--startup-timeout",
        "memory_limit": "--memory-limit",
        "baseline": "--baseline",
        "base": "--base",
        "changed_files": "--changed-files",
        "corpus": "--corpus",
        "shard": "--shard",
        "store": "--store",
        "name": "--name",
        "fuzz_guarded_in_sandbox": "--fuzz-guarded-in-sandbox",
        "command": "--command",
        "args": "--arg",
        "url": "--url",
        "headers": "--header",
        "timeout": "--timeout",
        "sandbox": "--sandbox",
        "feedback": "--feedback",
    }
)
"""`Overrides` field -> the flag that sets it, as error messages name it (`max_tools` -> `--max-tools`)."""

_FOLLOW_UP_FIELDS = (
    "name",
    "timeout",
    "startup_timeout",
    "memory_limit",
    "slow",
    "max_string",
    "protocol",
    "sandbox",
    "fuzz_guarded_in_sandbox",
    "out",
    "baseline",
)
"""The flags a command fuzzgate prints (a replay, `baseline accept`, `baseline prune`) needs from a
run's command line: how the server is started and reached, what the oracles judge by, where the
report and the baseline are. Not the target (`--command`, `--arg`, `--url`, `--header`): the job
summary, the SARIF and the CI log show no command line or URL, any of which can carry a
credential; a replay without a config file takes the target the last report recorded
(`cli.recorded`). Not `--secret-pattern`, which may spell out a secret. The rest (budget, seed,
selection, feedback, the corpus) shapes fuzzing, not one replay."""

_DEFAULT_PATHS = {"out": DEFAULT_OUT_DIR, "baseline": DEFAULT_BASELINE_DIR}


def follow_up_flags(overrides: Overrides) -> tuple[str, ...]:
    """The flags of `overrides` that the commands a run prints must repeat to act on the same server
    the same way, each as `--flag=value` (a value starting with `-` stays a value), in the order of
    `_FOLLOW_UP_FIELDS`. Without `--out` and `--baseline`, the commands of a run that wrote its
    report elsewhere looked for it in the default place. A path given as its default adds nothing."""
    words: list[str] = []
    for name in _FOLLOW_UP_FIELDS:
        value = getattr(overrides, name)
        flag = OVERRIDE_FLAGS[name]
        if value is None or value is False:
            continue
        if value is True:
            words.append(flag)
        elif name in _DEFAULT_PATHS and Path(os.path.normpath(value)) == _DEFAULT_PATHS[name]:
            continue
        else:
            words.append(f"{flag}={value}")
    return tuple(words)
