"""`fuzzgate init --command CMD --arg ARG` (or `--url URL`): the starter file with the target a
user tried with flags, so that trying a server and committing its config are one step apart.

The starter is TOML: a path the loader reads as YAML (`.yaml`, `.yml`) is refused before anything
is written.

The file is committed with the repository, so a value that looks like a secret (a built-in secret
pattern, a URL's password) is refused with the way to keep it out (`${NAME}`), and the text is read
back with the loader before it is written: what `init` writes, `run` reads as given.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from fuzzgate.check.secrets import BUILTIN_PATTERNS, url_secrets
from fuzzgate.config import Overrides, load_config, starter_config
from fuzzgate.config._schema import CONFIG_FILE_NAMES, YAML_SUFFIXES
from fuzzgate.config.starter import starter_name
from fuzzgate.model.errors import ConfigError, UsageError

_SECRET_HINT = "keep it in an environment variable and write ${NAME} for it in the file"


def starter_file(kind: Literal["stdio", "http"], command: str | None, args: Sequence[str], url: str | None) -> str:
    """The text `init` writes for `kind`, with the target given (None: the examples)."""
    if args and command is None:
        raise UsageError("--arg goes with --command", hint="pass the server's command with --command")
    given = [("--command", command), *(("--arg", a) for a in args), ("--url", url)]
    for flag, value in given:
        if value is not None:
            _check(flag, value)
    if url is not None and url_secrets(url):
        raise UsageError("--url: holds a password, and the config file is committed", hint=_SECRET_HINT)
    # A script named `index.js` names no server: the name comes from where it lies instead.
    name = starter_name(command, args, Path.cwd())
    text = starter_config(kind, command=command, args=tuple(args), url=url, name=name)
    _read_back(text)
    return text


def check_starter_path(path: Path) -> None:
    """Refuse a name the loader reads as YAML: the starter is TOML (its comments and `${NAME}`
    explanations are TOML's), and written there it would not load."""
    if path.suffix.lower() in YAML_SUFFIXES:
        raise UsageError(
            f"{path}: init writes TOML, and a {path.suffix} file is read as YAML",
            hint=f"name it {path.with_suffix('.toml').name} (fuzzgate looks for fuzzgate.toml), "
            "or write the YAML file yourself (docs/configuration.md, 'Formats')",
        )


def _check(flag: str, value: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(f"{flag}: not valid UTF-8, which a TOML file cannot hold") from None
    for name, pattern in BUILTIN_PATTERNS.items():
        if re.search(pattern, value):
            raise UsageError(
                f"{flag}: holds what looks like a secret ({name}), and the config file is committed", hint=_SECRET_HINT
            )


def _read_back(text: str) -> None:
    """Load `text` as `run` would: a value the loader refuses (a URL that is not one) is said now,
    and nothing is written."""
    with tempfile.TemporaryDirectory(prefix="fuzzgate-init-") as directory:
        path = Path(directory) / CONFIG_FILE_NAMES[0]
        path.write_text(text, encoding="utf-8")
        try:
            load_config(path, Overrides(), {}, warn=lambda message: None)
        except ConfigError as error:
            # The file is a temporary one: what is wrong, not where.
            message = error.message.removeprefix(f"{path}: ")
            raise UsageError(f"the given target does not make a valid config file: {message}") from None
