"""Reading a config file into plain data: expand `${VAR}`, parse TOML or YAML, locate `[target]`.

This is the only module that knows file syntax; everything after it sees sections of values.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from fuzzgate.config._expand import expand_variables, expanded_values
from fuzzgate.config._schema import YAML_SUFFIXES
from fuzzgate.config._values import as_table, mismatch
from fuzzgate.model.errors import ConfigError
from fuzzgate.model.files import read_regular

_TOML_POSITION = re.compile(r"\s*\((?:at line (\d+), column (\d+)|at end of document)\)\s*$")
_TARGET_HEADER = re.compile(r"\[\s*target\s*\]")
_TARGET_SUBTABLE = re.compile(r"\[\s*target\s*\.")
_TARGET_KEY = re.compile(r"target\s*[.=]")


@dataclass(frozen=True, slots=True)
class Section:
    """One table of the file, e.g. `[fuzzgate]` or `[target.env]`; empty when the file lacks it."""

    display: str
    name: str
    values: Mapping[str, object] = field(default_factory=dict)
    present: bool = False

    def where(self, key: str | None = None) -> str:
        """How a message names this section, or one of its keys: `fuzzgate.toml: [fuzzgate] budget`."""
        return f"{self.display}: [{self.name}]" + (f" {key}" if key is not None else "")

    def get(self, key: str) -> object | None:
        """The value of `key`, or None when it is absent (or YAML null, which means the same)."""
        return self.values.get(key)

    def table(self, key: str, *, secret: bool = False) -> Section:
        """The nested table `key` (`[packs.auth]`) as a section of its own.

        With `secret`, a value that is not a table is not echoed in the error.
        """
        name = f"{self.name}.{key}"
        value = self.values.get(key)
        if value is None:
            return Section(self.display, name)
        table = as_table(value, f"{self.display}: [{name}]", secret=secret)
        return Section(self.display, name, table, present=True)


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed config file (or nothing, when the target comes from flags alone)."""

    path: Path | None
    display: str
    data: Mapping[str, object]
    target_line: int = 1
    expanded: tuple[str, ...] = field(default=(), repr=False)
    """The values of the `${VAR}`s the file's text expanded (`expanded_values`)."""

    @classmethod
    def empty(cls) -> Document:
        return cls(path=None, display="(flags)", data={})

    def has(self, name: str) -> bool:
        return self.data.get(name) is not None

    def section(self, name: str) -> Section:
        value = self.data.get(name)
        if value is None:
            return Section(self.display, name)
        return Section(self.display, name, as_table(value, f"{self.display}: [{name}]"), present=True)


def display_name(path: Path) -> str:
    """The path as messages show it: relative to the working directory when it lies below it."""
    try:
        return str(path.absolute().relative_to(Path.cwd()))
    except (ValueError, OSError):
        return str(path)


def read_document(path: Path, environ: Mapping[str, str]) -> Document:
    display = display_name(path)
    try:
        raw = read_regular(path)
    except OSError as exc:
        raise ConfigError(
            f"{display}: cannot read the configuration file ({exc.strerror or exc})",
            hint="check the path and its permissions",
        ) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{display}: not UTF-8 text (invalid byte at offset {exc.start})",
            hint="save the file as UTF-8",
        ) from None
    expanded = expand_variables(text, environ, display=display)
    if path.suffix.lower() in YAML_SUFFIXES:
        data, target_line = _parse_yaml(expanded, display)
    else:
        data, target_line = _parse_toml(expanded, display), _toml_target_line(text)
    return Document(
        path=path, display=display, data=data, target_line=target_line, expanded=expanded_values(text, environ)
    )


def _parse_toml(text: str, display: str) -> dict[str, object]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        position = _TOML_POSITION.search(message)
        where = display
        if position is not None:
            message = message[: position.start()]
            where += f": line {position.group(1)}, column {position.group(2)}" if position.group(1) else ": end of file"
        raise ConfigError(
            f"{where}: invalid TOML: {message}",
            hint="see https://toml.io for the syntax; strings need double quotes, lists square brackets",
        ) from None


def _refuse_duplicate_keys(root: yaml.Node, display: str) -> None:
    """A key written twice in one mapping is an error, as TOML makes it: YAML's loader keeps the
    last one silently, so the first setting would be ignored without a word."""
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            seen: dict[str, yaml.Node] = {}
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                    first = seen.setdefault(key.value, key)
                    if first is not key:
                        mark = key.start_mark
                        raise ConfigError(
                            f"{display}: line {mark.line + 1}, column {mark.column + 1}: key {key.value!r} is "
                            f"set twice in one mapping (first at line {first.start_mark.line + 1})",
                            hint="keep one of the two; YAML would silently use the last",
                        )
                stack.append(value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)


def _parse_yaml(text: str, display: str) -> tuple[dict[str, object], int]:
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            # Before constructing, which merges `<<: *anchor` keys into the mapping's own.
            _refuse_duplicate_keys(node, display)
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{display}: line {mark.line + 1}, column {mark.column + 1}" if mark is not None else display
        problem = exc.problem or "cannot parse"
        context = f" ({exc.context})" if exc.context else ""
        raise ConfigError(
            f"{where}: invalid YAML: {problem}{context}",
            hint="check the indentation and quoting around that line",
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{display}: invalid YAML: {type(exc).__name__}") from None
    finally:
        loader.dispose()
    if data is None:
        return {}, 1
    if not isinstance(data, dict):
        raise mismatch(display, "a mapping of sections (target:, fuzzgate:, ...) at the top level", data)
    target_line = 1
    if isinstance(node, yaml.MappingNode):
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == "target":
                target_line = key_node.start_mark.line + 1
                break
    return data, target_line


def _toml_target_line(text: str) -> int:
    """The line of `[target]`; failing that, of `target = {...}`, `target.x = ...` or `[target.x]`."""
    fallback: int | None = None
    in_root_table = True
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if _TARGET_HEADER.match(stripped):
            return number
        if fallback is None and (_TARGET_SUBTABLE.match(stripped) or (in_root_table and _TARGET_KEY.match(stripped))):
            fallback = number
        if stripped.startswith("["):
            in_root_table = False
    return fallback or 1
