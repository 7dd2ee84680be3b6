"""Finding and loading the config file, and laying the command line over it.

Precedence, highest first: flags (`Overrides`), the file, the defaults in `Config`. Every value
is validated the same way wherever it came from; a mistake is a `ConfigError` naming the file,
section and key (or the flag), and an unknown key is a warning, with the nearest known key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import TypeVar

from fuzzgate.config._document import Document, Section, read_document
from fuzzgate.config._durations import SIZE_HINT, parse_size
from fuzzgate.config._expand import expanded_values
from fuzzgate.config._messages import did_you_mean
from fuzzgate.config._overrides import OVERRIDE_FLAGS, Overrides, follow_up_flags
from fuzzgate.config._schema import CONFIG_FILE_NAMES, SECTION_KEYS, WALLFACER_ONLY_KINDS, sections_holding
from fuzzgate.config._target import settle_target
from fuzzgate.config._values import (
    as_bool,
    as_choice,
    as_int,
    as_millis,
    as_nonempty_str,
    as_path,
    as_regex_list,
    as_seed,
    as_shard,
    as_size,
    as_str_list,
    as_str_map,
    beside,
    mismatch,
)
from fuzzgate.config.model import Config, GenerationMode, ProtocolMode
from fuzzgate.model.errors import ConfigError
from fuzzgate.model.files import read_regular
from fuzzgate.model.findings import DEFAULT_SEVERITY, Severity

STORE_SCHEMES = ("redis", "rediss", "unix")
"""The URL schemes `[fuzzgate] store` takes (redis-py's); anything else is a directory."""

_T = TypeVar("_T")
_E = TypeVar("_E", bound=StrEnum)

CONFIG_ENV_VARS = ("FUZZGATE_CONFIG", "WALLFACER_CONFIG")


def find_config(explicit: Path | None, cwd: Path, environ: Mapping[str, str]) -> Path | None:
    """The config file to use: `--config`, `$FUZZGATE_CONFIG`, `$WALLFACER_CONFIG`, then a search.

    The search looks in `cwd` and each parent for the names in `CONFIG_FILE_NAMES` (in that order
    within a directory) and stops after the directory holding `.git`, or at the filesystem root.
    A path given explicitly or through the environment must exist; relative ones are taken
    relative to `cwd`.
    """
    if explicit is not None:
        return _existing(explicit, cwd, "--config")
    for variable in CONFIG_ENV_VARS:
        value = environ.get(variable)
        if value:
            return _existing(Path(value), cwd, f"${variable}")
    start = cwd.absolute()
    for directory in (start, *start.parents):
        for name in CONFIG_FILE_NAMES:
            candidate = directory / name
            if candidate.is_file():
                return candidate
        if (directory / ".git").exists():
            break
    return None


def _existing(path: Path, cwd: Path, what: str) -> Path:
    path = path.expanduser()
    if not path.is_absolute():
        path = cwd / path
    if path.is_dir():
        raise ConfigError(f"{what}: expected a config file, got a directory: {path}")
    if path.exists() and not path.is_file():
        raise ConfigError(f"{what}: expected a config file, got something else (a FIFO, socket or device): {path}")
    if not path.is_file():
        raise ConfigError(
            f"{what}: no such file: {path}",
            hint="check the path, or run `fuzzgate init` to create fuzzgate.toml",
        )
    return path


def load_config(
    path: Path | None, overrides: Overrides, environ: Mapping[str, str], *, warn: Callable[[str], None]
) -> Config:
    """The settled `Config` from the file at `path` (None: flags only) with `overrides` on top.

    `environ` supplies `${VAR}` values. Warnings (unknown keys, keys that do not apply) go to
    `warn`, one line each, after the whole configuration has loaded without error.
    """
    try:
        return _load(path, overrides, environ, warn=warn)
    except ConfigError as error:
        raise _without_expanded_values(error, path, environ) from None


_SHORTEST_SECRET = 6


def _without_expanded_values(error: ConfigError, path: Path | None, environ: Mapping[str, str]) -> ConfigError:
    """The error with the values of `${VAR}`s the file uses taken out: a wrong value that came from
    the environment may be a secret, and messages quote (the first 37 characters of) what was wrong."""
    try:
        text = read_regular(path).decode("utf-8", "replace") if path is not None else ""
    except OSError:
        return error
    values = {value for value in expanded_values(text, environ) if len(value) >= _SHORTEST_SECRET}
    if not values:
        return error

    def hide(message: str | None) -> str | None:
        if message is None:
            return None
        for value in sorted(values, key=len, reverse=True):
            message = message.replace(value, "[REDACTED]")
            for end in range(len(value) - 1, _SHORTEST_SECRET - 1, -1):
                message = message.replace(value[:end] + "...", "[REDACTED]...")
        return message

    return ConfigError(hide(error.message) or "", hint=hide(error.hint), detail=hide(error.detail))


def _load(
    path: Path | None, overrides: Overrides, environ: Mapping[str, str], *, warn: Callable[[str], None]
) -> Config:
    document = read_document(path, environ) if path is not None else Document.empty()
    warnings = _unknown_key_warnings(document)
    settings = _Settings(document.section("fuzzgate"), overrides)
    target = settle_target(
        document, overrides, name=settings.read("name", _plain(as_nonempty_str), None), warnings=warnings
    )
    config = _wallfacer_settings(document, Config(target=target, source=document.path))
    config = _fuzzgate_settings(settings, replace(config, target_line=document.target_line, expanded=document.expanded))
    config = replace(config, follow_up_flags=follow_up_flags(overrides))
    for warning in warnings:
        warn(warning)
    return config


_Reader = Callable[[object, str, bool], _T]
"""Reads one value: (value, how messages name it, whether it came from a flag)."""


def _plain(reader: Callable[[object, str], _T]) -> _Reader[_T]:
    return lambda value, where, _from_flag: reader(value, where)


def _integer(low: int, high: int | None = None) -> _Reader[int]:
    return lambda value, where, from_flag: as_int(value, where, low=low, high=high, from_flag=from_flag)


def _choice(choices: type[_E]) -> _Reader[_E]:
    return lambda value, where, _from_flag: as_choice(value, where, choices)


def _seconds(value: object, where: str, _from_flag: bool) -> float:
    return as_millis(value, where) / 1000


def _store(config_file: Path | None) -> _Reader[str]:
    """A store: a `redis://` (or `rediss://`, `unix://`) URL as written, else a directory, which a
    file's value names relative to the file like the other directories."""

    def read(value: object, where: str, from_flag: bool) -> str:
        text = as_nonempty_str(str(value) if isinstance(value, Path) else value, where)
        if "://" in text:
            scheme = text.split("://", 1)[0].lower()
            if scheme not in STORE_SCHEMES:
                raise mismatch(where, "a redis://, rediss:// or unix:// URL, or a directory", text, secret=True)
            return text
        return str(_directory(config_file)(text, where, from_flag))

    return read


def _directory(config_file: Path | None) -> _Reader[Path]:
    """A directory setting: from a flag, relative to the current directory, as the user typed it;
    from the file, relative to the file's directory."""

    def read(value: object, where: str, from_flag: bool) -> Path:
        path = as_path(str(value) if isinstance(value, Path) else value, where)
        return path if from_flag else beside(path, config_file)

    return read


class _Settings:
    """Reads each `[fuzzgate]` setting from its flag if given, else from the file."""

    def __init__(self, section: Section, overrides: Overrides) -> None:
        self.section = section
        self.overrides = overrides

    def read(self, key: str, reader: _Reader[_T], default: _T) -> _T:
        flagged = getattr(self.overrides, key)
        if flagged is not None:
            return reader(flagged, OVERRIDE_FLAGS[key], True)
        value = self.section.get(key)
        if value is not None:
            return reader(value, self.section.where(key), False)
        return default


def _fuzzgate_settings(settings: _Settings, config: Config) -> Config:
    directory = _directory(config.source)
    return replace(
        config,
        budget_s=settings.read("budget", _seconds, config.budget_s),
        cases=settings.read("cases", _integer(1), config.cases),
        mode=settings.read("mode", _choice(GenerationMode), config.mode),
        concurrency=settings.read("concurrency", _integer(1, 64), config.concurrency),
        include=settings.read("include", _globs, config.include),
        exclude=settings.read("exclude", _globs, config.exclude),
        max_tools=settings.read("max_tools", _integer(1), config.max_tools),
        seed=settings.read("seed", _plain(as_seed), config.seed),
        fail_on=settings.read("fail_on", _choice(Severity), config.fail_on),
        fail_on_sdk=settings.read("fail_on_sdk", _plain(as_bool), config.fail_on_sdk),
        # With a config file, the default directories are beside it too, like the file's own values.
        out_dir=settings.read("out", directory, beside(config.out_dir, config.source)),
        baseline_dir=settings.read("baseline", directory, beside(config.baseline_dir, config.source)),
        corpus=settings.read("corpus", directory, beside(config.corpus, config.source)),
        base=settings.read("base", directory, config.base),
        changed_files=settings.read("changed_files", directory, config.changed_files),
        shard=settings.read("shard", _plain(as_shard), config.shard),
        store=settings.read("store", _store(config.source), config.store),
        secret_patterns=_secret_patterns(settings),
        slow_ms=settings.read("slow", _plain(as_millis), config.slow_ms),
        max_string=settings.read("max_string", _max_string, config.max_string),
        replays=settings.read("replays", _integer(0, 20), config.replays),
        shrink_tries=settings.read("shrink_tries", _integer(0, 100), config.shrink_tries),
        coverage_sampling=settings.read("coverage_sampling", _integer(1, 1024), config.coverage_sampling),
        protocol=settings.read("protocol", _choice(ProtocolMode), config.protocol),
        startup_timeout_ms=settings.read("startup_timeout", _plain(as_millis), config.startup_timeout_ms),
        memory_limit=settings.read("memory_limit", _memory_limit, config.memory_limit),
        fuzz_guarded_in_sandbox=settings.read(
            "fuzz_guarded_in_sandbox", _plain(as_bool), config.fuzz_guarded_in_sandbox
        ),
    )


def _globs(value: object, where: str, from_flag: bool) -> tuple[str, ...]:
    return as_str_list(value, where, item="a glob pattern", from_flag=from_flag)


def flag_secret_patterns(values: Sequence[str]) -> tuple[str, ...]:
    """`--secret-pattern` of a command that reads no config file (`report`), checked as `run`
    checks it: a pattern that does not compile is a usage error."""
    return as_regex_list(list(values), OVERRIDE_FLAGS["secret_patterns"], secret=True, from_flag=True)


def _secret_patterns(settings: _Settings) -> tuple[str, ...]:
    """The file's patterns plus the flag's: `--secret-pattern` adds, it does not replace."""
    section = settings.section
    patterns: tuple[str, ...] = ()
    if section.get("secret_patterns") is not None:
        patterns = as_regex_list(section.get("secret_patterns"), section.where("secret_patterns"), secret=True)
    if settings.overrides.secret_patterns is not None:
        flag = OVERRIDE_FLAGS["secret_patterns"]
        patterns += as_regex_list(settings.overrides.secret_patterns, flag, secret=True, from_flag=True)
    return patterns


def _wallfacer_settings(document: Document, config: Config) -> Config:
    """The sections wallfacer defines besides `[target]`, read as wallfacer reads them."""
    severity = document.section("severity")
    output = document.section("output")
    destructive = document.section("destructive")
    allow = document.section("allow_destructive")
    packs = document.section("packs")

    def read(section: Section, key: str, reader: Callable[[object, str], _T], default: _T) -> _T:
        value = section.get(key)
        return default if value is None else reader(value, section.where(key))

    def severity_of(value: object, where: str) -> Severity:
        return as_choice(value, where, Severity)

    return replace(
        config,
        severity={kind: read(severity, kind.value, severity_of, default) for kind, default in DEFAULT_SEVERITY.items()},
        extra_severity={
            kind: severity_of(severity.get(kind), severity.where(kind))
            for kind in WALLFACER_ONLY_KINDS
            if severity.get(kind) is not None
        },
        corpus_dir=read(output, "corpus_dir", as_path, config.corpus_dir),
        lock_timeout_ms=read(output, "lock_timeout_ms", _plain_int(0), config.lock_timeout_ms),
        destructive_patterns=read(destructive, "patterns", as_regex_list, config.destructive_patterns),
        destructive_replace_defaults=read(
            destructive, "replace_defaults", as_bool, config.destructive_replace_defaults
        ),
        allow_destructive=read(allow, "tools", as_regex_list, config.allow_destructive),
        packs={str(name): _pack(packs.table(str(name), secret=True)) for name in packs.values},
    )


def _pack(section: Section) -> dict[str, str]:
    """A rule pack's parameters: strings, possibly credentials, so never echoed."""
    return as_str_map(section.values, section.where(), secret=True)


MAX_STRING_CAP = (1 << 20, "1MiB", "longer strings take more of a run's budget to generate and send than they test")
"""`max_string`'s most: at 1MiB a 6 s run on a fast server sent 38 calls, at 16MiB none."""


def _max_string(value: object, where: str, _from_flag: bool) -> int:
    return as_size(value, where, high=MAX_STRING_CAP)


MEMORY_LIMIT_LEAST = (64 << 20, "64MiB")
"""`memory_limit`'s least: below it an interpreter and the SDK alone may not fit."""


def _memory_limit(value: object, where: str, _from_flag: bool) -> int | None:
    """A size of at least `MEMORY_LIMIT_LEAST`, or `off` (None: no limit)."""
    if isinstance(value, str) and value.strip().lower() == "off":
        return None
    expected = f'a size of at least {MEMORY_LIMIT_LEAST[1]} like "2GiB", or "off"'
    try:
        size = parse_size(value, what=where) if isinstance(value, str | int) else -1
    except ConfigError:
        size = -1
    if size < MEMORY_LIMIT_LEAST[0]:
        raise mismatch(where, expected, value, hint=SIZE_HINT)
    return size


def _plain_int(low: int) -> Callable[[object, str], int]:
    return lambda value, where: as_int(value, where, low=low)


def _unknown_key_warnings(document: Document) -> list[str]:
    """One warning per key or section fuzzgate does not know, with the nearest known name."""
    warnings = []
    for raw_key, value in document.data.items():
        key = str(raw_key)
        if key in SECTION_KEYS:
            section = document.section(key)
            if key != "packs":
                warnings.extend(_unknown_in_section(section, SECTION_KEYS[key]))
        elif isinstance(value, dict):
            warnings.append(f"{document.display}: [{key}]: unknown section, ignored{did_you_mean(key, SECTION_KEYS)}")
        else:
            warnings.append(f"{document.display}: {key}: unknown top-level key, ignored{_elsewhere(key, None)}")
    return warnings


def _unknown_in_section(section: Section, known: tuple[str, ...]) -> list[str]:
    noun = "finding kind" if section.name == "severity" else "key"
    warnings = []
    for key in map(str, section.values):
        if key not in known:
            # A key that exists word for word in another section was put in the wrong one.
            suggestion = _elsewhere(key, section.name) or did_you_mean(key, known)
            warnings.append(f"{section.where(key)}: unknown {noun}, ignored{suggestion}")
    return warnings


def _elsewhere(key: str, current: str | None) -> str:
    homes = [name for name in sections_holding(key) if name != current]
    return f" ('{key}' belongs in [{homes[0]}])" if homes else ""
