"""Settling `[target]`: which server to fuzz, from the file and the `--command`/`--url` flags.

`--command` makes a stdio target and replaces the file's command line (command and args);
`--url` makes an HTTP target. The file's env, cwd and headers still apply when the file
describes the same kind of target.

An HTTP target may name the command that serves it (`kind = "http"` with `command`, `args`, `env`
and `cwd` next to `url`): its command line is read exactly as a stdio server's, and fuzzgate
starts, restarts and stops that server itself.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from fuzzgate.config._document import Document, Section
from fuzzgate.config._messages import closest
from fuzzgate.config._overrides import OVERRIDE_FLAGS, Overrides
from fuzzgate.config._schema import COMMAND_KEYS, HTTP_KEYS, TARGET_KEYS
from fuzzgate.config._values import (
    as_choice,
    as_env,
    as_headers,
    as_int,
    as_millis,
    as_nonempty_str,
    as_path,
    as_str_list,
    as_url,
    beside,
    check_header,
)
from fuzzgate.config.model import FeedbackMode, SandboxMode, TargetConfig, TargetKind
from fuzzgate.model.errors import ConfigError

_DEFAULT_TIMEOUT_MS = 5000  # wallfacer's default, kept so its files behave the same
_KIND_HINT = (
    "--arg goes with a stdio server (--command) or an HTTP server the file gives the command of,"
    " --header with an HTTP one (--url)"
)
_INIT_HINT = "run `fuzzgate init` to create fuzzgate.toml, or pass --command (stdio) or --url (http)"


_REDACTED = "[REDACTED]"
"""`check.secrets.REDACTED`, which this earlier stage cannot import: what a printed command holds
in place of a secret."""


def _refuse_redacted(overrides: Overrides) -> None:
    """A target flag copied from a command fuzzgate printed may hold the marker of a secret it kept
    out: starting that server would send the marker and could show a bug fixed that is not."""
    for field in ("command", "args", "url", "headers"):
        value = getattr(overrides, field)
        values = value if isinstance(value, tuple) else () if value is None else (value,)
        if any(_REDACTED in item for item in values):
            raise ConfigError(
                f"{OVERRIDE_FLAGS[field]}: holds {_REDACTED}, which stands for a secret fuzzgate kept out of"
                " the command it printed",
                hint="put the value the run was given in its place",
            )


def settle_target(document: Document, overrides: Overrides, *, name: str | None, warnings: list[str]) -> TargetConfig:
    section = document.section("target")
    _refuse_redacted(overrides)
    if overrides.command is not None and overrides.url is not None:
        raise ConfigError(
            "--command and --url: expected one target, got both",
            hint="pass --command for a stdio server or --url for an HTTP one",
        )
    file_kind = _file_kind(section, overrides)
    if overrides.command is not None:
        kind = TargetKind.STDIO
    elif overrides.url is not None:
        kind = TargetKind.HTTP
    elif file_kind is not None:
        kind = file_kind
    else:
        raise _missing_target(document, section)

    from_file = file_kind is kind
    if from_file and section.present:
        _warn_irrelevant(section, kind, warnings=warnings)
    if kind is TargetKind.HTTP and overrides.args is not None and not _serves(section, from_file):
        raise ConfigError(
            f"{OVERRIDE_FLAGS['args']}: expected a stdio target or an http one with a command, got an http one"
            " without a command",
            hint=_KIND_HINT,
        )
    if kind is TargetKind.STDIO and overrides.headers is not None:
        raise ConfigError(f"{OVERRIDE_FLAGS['headers']}: expected an http target, got a stdio one", hint=_KIND_HINT)
    timeout_ms = _DEFAULT_TIMEOUT_MS
    if overrides.timeout is not None:
        timeout_ms = as_millis(overrides.timeout, OVERRIDE_FLAGS["timeout"])
    elif section.get("timeout_ms") is not None:
        timeout_ms = as_int(section.get("timeout_ms"), section.where("timeout_ms"), low=1)
    if kind is TargetKind.STDIO:
        target = _stdio(document, section, overrides, from_file, name=name, timeout_ms=timeout_ms)
        return _contained(target, document, section, overrides, from_file)
    target = _http(section, overrides, from_file, name=name, timeout_ms=timeout_ms)
    if _serves(section, from_file):
        # The command that serves the URL is read as a stdio server's command line is.
        served = _stdio(document, section, overrides, from_file, name=name, timeout_ms=timeout_ms)
        target = replace(served, kind=TargetKind.HTTP, url=target.url, headers=target.headers)
    return _contained(target, document, section, overrides, from_file)


def _contained(
    target: TargetConfig, document: Document, section: Section, overrides: Overrides, from_file: bool
) -> TargetConfig:
    """`scope` (existing directories, relative to the file's directory, like `cwd`) and `sandbox`."""
    sandbox = SandboxMode.AUTO
    if overrides.sandbox is not None:
        sandbox = as_choice(overrides.sandbox, OVERRIDE_FLAGS["sandbox"], SandboxMode)
    elif from_file and section.get("sandbox") is not None:
        sandbox = as_choice(section.get("sandbox"), section.where("sandbox"), SandboxMode)
    scope: list[Path] = []
    if from_file and section.get("scope") is not None:
        where = section.where("scope")
        for index, text in enumerate(as_str_list(section.get("scope"), where, item="a directory")):
            path = beside(as_path(text, f"{where}[{index}]"), document.path)
            if not path.is_dir():
                what = "is a file" if path.exists() else "does not exist"
                raise ConfigError(
                    f"{where}[{index}]: expected an existing directory, got {path}, which {what}",
                    hint="scope lists the directories the server may read and write, relative to the config file",
                )
            scope.append(path.resolve())
    feedback = FeedbackMode.AUTO
    if overrides.feedback is not None:
        feedback = as_choice(overrides.feedback, OVERRIDE_FLAGS["feedback"], FeedbackMode)
    elif from_file and section.get("feedback") is not None:
        feedback = as_choice(section.get("feedback"), section.where("feedback"), FeedbackMode)
    coverage_source: tuple[str, ...] = ()
    if from_file and section.get("coverage_source") is not None:
        where = section.where("coverage_source")
        coverage_source = as_str_list(section.get("coverage_source"), where, item="a package or directory")
    return replace(target, scope=tuple(scope), sandbox=sandbox, feedback=feedback, coverage_source=coverage_source)


def _serves(section: Section, from_file: bool) -> bool:
    """Whether the file's HTTP target names the command that serves it."""
    return from_file and section.get("command") is not None


def _file_kind(section: Section, overrides: Overrides) -> TargetKind | None:
    """The kind of target the file describes: `kind`, else inferred from `command` or `url`."""
    if section.get("kind") is not None:
        return as_choice(section.get("kind"), section.where("kind"), TargetKind)
    has_command, has_url = section.get("command") is not None, section.get("url") is not None
    if has_command and has_url:
        raise ConfigError(
            f"{section.where('kind')}: missing, required when both command and url are set",
            hint='add kind = "http" (fuzzgate starts command and reaches it at url) or kind = "stdio" under [target]',
        )
    if has_command:
        return TargetKind.STDIO
    if has_url:
        return TargetKind.HTTP
    if section.present and (overrides.command is not None or overrides.url is not None):
        # A [target] holding only env/cwd/headers completes the target the flag names.
        return TargetKind.STDIO if overrides.command is not None else TargetKind.HTTP
    return None


def _missing_target(document: Document, section: Section) -> ConfigError:
    if document.path is None:
        return ConfigError("no configuration found", hint=_INIT_HINT)
    if not section.present:
        unknown = [str(key) for key in document.data if str(key) != "target"]
        near = closest("target", unknown)
        hint = f"did you mean 'target'? [{near}] is not a section fuzzgate knows" if near else _INIT_HINT
        return ConfigError(f"{document.display}: [target]: missing section, a target is required", hint=hint)
    unknown = [key for key in section.values if key not in TARGET_KEYS]
    for wanted in ("command", "url", "kind"):
        near = closest(wanted, unknown)
        if near is not None:
            return ConfigError(
                f"{section.where(wanted)}: missing, a target needs command (stdio) or url (http)",
                hint=f"did you mean '{wanted}'? '{near}' is not a [target] key",
            )
    return ConfigError(
        f"{section.where('command')}: missing, a target needs command (stdio) or url (http)",
        hint='add command = "..." (a stdio server) or url = "http://..." (an HTTP server) under [target]',
    )


def _warn_irrelevant(section: Section, kind: TargetKind, *, warnings: list[str]) -> None:
    if kind is TargetKind.STDIO:
        for key in HTTP_KEYS:
            if section.get(key) is not None:
                warnings.append(f"{section.where(key)}: ignored, it applies only to http targets")
    elif section.get("command") is None:
        for key in COMMAND_KEYS:
            if section.get(key) is not None:
                warnings.append(
                    f"{section.where(key)}: ignored, it applies only to a server fuzzgate starts"
                    " (a stdio target, or an http target with a command)"
                )


def _required(section: Section, key: str, kind: TargetKind) -> ConfigError:
    unknown = [k for k in section.values if k not in TARGET_KEYS]
    near = closest(key, unknown)
    hint = f"did you mean '{key}'? '{near}' is not a [target] key" if near else f'add {key} = "..." under [target]'
    return ConfigError(f'{section.where(key)}: missing, required when kind = "{kind.value}"', hint=hint)


def _stdio(
    document: Document,
    section: Section,
    overrides: Overrides,
    from_file: bool,
    *,
    name: str | None,
    timeout_ms: int,
) -> TargetConfig:
    args: tuple[str, ...] = ()
    if overrides.command is not None:
        command = as_nonempty_str(overrides.command, OVERRIDE_FLAGS["command"])
    elif section.get("command") is not None:
        command = as_nonempty_str(section.get("command"), section.where("command"))
        if section.get("args") is not None:
            args = as_str_list(section.get("args"), section.where("args"))
    else:
        raise _required(section, "command", TargetKind.STDIO)
    if overrides.args is not None:
        args = as_str_list(overrides.args, OVERRIDE_FLAGS["args"], from_flag=True)
    env: dict[str, str] = {}
    cwd: Path | None = None
    if from_file:
        if section.get("env") is not None:
            env = as_env(section.get("env"), f"{document.display}: [target.env]")
        if section.get("cwd") is not None:
            cwd = beside(as_path(section.get("cwd"), section.where("cwd")), document.path)
    if cwd is None and document.path is not None and overrides.command is None and overrides.args is None:
        # The file's command line names its paths (`args = ["server.py"]`) as seen from the file:
        # run it from there, wherever fuzzgate was started. A command line given by flags runs in
        # the current directory, where its paths were typed.
        cwd = document.path.parent
    return TargetConfig(
        kind=TargetKind.STDIO, command=command, args=args, env=env, cwd=cwd, timeout_ms=timeout_ms, name=name
    )


def _http(
    section: Section, overrides: Overrides, from_file: bool, *, name: str | None, timeout_ms: int
) -> TargetConfig:
    if overrides.url is not None:
        url = as_url(overrides.url, OVERRIDE_FLAGS["url"])
    elif section.get("url") is not None:
        url = as_url(section.get("url"), section.where("url"))
    else:
        raise _required(section, "url", TargetKind.HTTP)
    headers: dict[str, str] = {}
    if from_file and section.get("headers") is not None:
        headers = as_headers(section.get("headers"), f"{section.display}: [target.headers]")
    if overrides.headers is not None:
        for header_name, value in _flag_headers(overrides.headers):
            headers = {key: text for key, text in headers.items() if key.lower() != header_name.lower()}
            headers[header_name] = value
    return TargetConfig(kind=TargetKind.HTTP, url=url, headers=headers, timeout_ms=timeout_ms, name=name)


def _flag_headers(values: tuple[str, ...]) -> list[tuple[str, str]]:
    flag = OVERRIDE_FLAGS["headers"]
    pairs = []
    for item in as_str_list(values, flag, from_flag=True):
        raw_name, colon, value = item.partition(":")
        if not colon or not raw_name.strip():
            raise ConfigError(
                f"{flag}: expected \"Name: value\", got a string without a name and ':'",
                hint='pass --header "Authorization: Bearer $TOKEN"',
            )
        check_header(raw_name.strip(), value.strip(), flag)
        pairs.append((raw_name.strip(), value.strip()))
    return pairs
