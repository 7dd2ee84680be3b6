"""Whether to inject the coverage collector into a server, and what it measures.

`plan_collector` reads the target's command line: a server that runs on a Python interpreter
(`python server.py`, `python -m pkg`, a venv's `bin/python`, `uv run ...`, `uvx ...`, a console
script whose shebang names Python) gets the collector (`fuzzgate.coverage.collector`), injected
through its environment only (`channel.py`); every other server gets behaviour feedback, and the
plan's reason says why. It also decides what is measured: the script's directory, the `-m`
module's top-level package, the package a console script imports its entry point from, and
`[target] coverage_source`; never the SDK, the standard library or other installed packages unless
listed there.

A server that runs on Node.js (`node`, `npx`, `tsx`, a bin whose shebang names node) gets the
Node collector instead (`node_plan.py` decides, `runtime = "node"`), measuring the entry's package
and `[target] coverage_source` (directories, or npm package names).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from fuzzgate.config.model import FeedbackMode, TargetConfig

SHEBANG_BYTES = 256
NODE = "node"
"""`CollectorPlan.runtime` of a Node server."""
_PYTHON = re.compile(r"python(?:[23](?:\.\d+)?)?")
NOT_STARTED = "an HTTP server fuzzgate does not start: coverage is collected from servers it starts"
"""Why a target without a command (an HTTP server fuzzgate only reaches) gets behaviour feedback."""


@dataclass(frozen=True, slots=True)
class CollectorPlan:
    """Whether to inject the collector into the target's server, why (a short phrase), and what
    it measures: directories (absolute, as fuzzgate sees them) and packages (import names)."""

    inject: bool
    reason: str
    directories: tuple[Path, ...] = ()
    packages: tuple[str, ...] = ()
    runtime: str = "python"
    """Which collector: `python` (`collector/`) or `node` (`collector/node/`)."""
    entry: Path | None = None
    """Node: the script the server's own process runs (the collector measures only there); None
    with `packages`: a process running a file of one of those packages (`npx`)."""
    entry_in_argv: bool = False
    """Node: the entry process has `entry` anywhere on its command line (`ts-node script.ts`)."""

    def measured(self) -> str:
        """What is measured, for a person: directories relative to the working directory."""
        shown = [_shown(directory) for directory in self.directories]
        return ", ".join([*shown, *self.packages]) or "nothing"


def plan_collector(target: TargetConfig) -> CollectorPlan:
    """Whether the collector goes into `target`'s server, and what it measures (module docstring)."""
    from fuzzgate.coverage import node_plan

    if target.feedback is not FeedbackMode.AUTO:
        return CollectorPlan(False, f"feedback = {target.feedback.value}")
    if target.command is None:
        return CollectorPlan(False, NOT_STARTED)
    cwd = (target.cwd or Path.cwd()).absolute()
    path = target.env.get("PATH", os.environ.get("PATH", os.defpath))
    plan = _plan_command(target.command, list(target.args), cwd, path)
    if not plan.inject:
        return plan
    dirs, packages = list(plan.directories), list(plan.packages)
    for source in target.coverage_source:
        named = node_plan.is_package_name(source) if plan.runtime == NODE else _is_dotted_name(source)
        if named and not (cwd / source).is_dir():
            packages.append(source)
        else:
            dirs.append(Path(os.path.normpath(cwd / source)))
    if not dirs and not packages:
        return CollectorPlan(False, f"{plan.reason}, but nothing to measure: set [target] coverage_source")
    return replace(plan, directories=tuple(dict.fromkeys(dirs)), packages=tuple(dict.fromkeys(packages)))


def _plan_command(command: str, args: list[str], cwd: Path, path: str) -> CollectorPlan:
    from fuzzgate.coverage import node_plan  # it builds CollectorPlans: imported once this module is

    name = os.path.basename(command)
    node = node_plan.plan_node(command, args, cwd)
    if node is not None:
        return node
    if _PYTHON.fullmatch(name):
        return _plan_python(name, args, cwd)
    if name == "env":
        return _plan_env(args, cwd, path)
    if name == "uv" and args[:1] == ["run"]:
        return _plan_uv_run(args[1:], cwd, path)
    if name == "uv" and args[:2] == ["tool", "run"]:
        return _plan_uvx("uv tool run", args[2:])
    if name == "uvx":
        return _plan_uvx("uvx", args)
    return _plan_script(command, cwd, path)


def _plan_python(name: str, args: list[str], cwd: Path) -> CollectorPlan:
    """`python [options] (script | -m module | -c code) ...`, options as CPython reads them."""
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--" and index + 1 < len(args):
            return _script_plan(f"{name} runs {args[index + 1]}", cwd / args[index + 1])
        if arg == "-" or not arg.startswith("-"):
            if arg == "-":
                return CollectorPlan(True, f"{name} reads its program from stdin")
            return _script_plan(f"{name} runs {arg}", cwd / arg)
        if arg.startswith("--"):
            index += 2 if arg == "--check-hash-based-pycs" else 1
            continue
        flags = arg[1:]
        for position, flag in enumerate(flags):
            rest = flags[position + 1 :]
            if flag in "IE":
                return CollectorPlan(False, f"{name} -{flag} ignores PYTHONPATH, which the collector needs")
            if flag == "S":
                return CollectorPlan(False, f"{name} -S skips site, which loads the collector")
            if flag in "mc":
                value = rest or (args[index + 1] if index + 1 < len(args) else "")
                if flag == "c":
                    return CollectorPlan(True, f"{name} -c runs code from its command line")
                package = value.split(".")[0]
                if not package:
                    return CollectorPlan(False, f"{name} -m without a module")
                return CollectorPlan(True, f"{name} -m {value}", packages=(package,))
            if flag in "WX":
                index += 0 if rest else 1
                break
        index += 1
    return CollectorPlan(False, f"{name} runs no program file (an interactive interpreter)")


def _script_plan(reason: str, script: Path) -> CollectorPlan:
    return CollectorPlan(True, reason, directories=(Path(os.path.normpath(script)).parent,))


def _plan_env(args: list[str], cwd: Path, path: str) -> CollectorPlan:
    """`env [-u NAME] [NAME=VALUE]... command args`: the command's plan, unless env empties the
    environment the collector comes through."""
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ("-i", "-", "--ignore-environment"):
            return CollectorPlan(False, "env -i empties the environment the collector comes through")
        if arg in ("-u", "--unset", "-C", "--chdir", "-S", "--split-string"):
            index += 2
        elif arg.startswith("-") or "=" in arg:
            index += 1
        else:
            return _plan_command(arg, args[index + 1 :], cwd, path)
    return CollectorPlan(False, "env runs no command")


_UV_VALUE_OPTIONS = frozenset(
    {
        "--with", "--with-editable", "--with-requirements", "--python", "-p", "--directory", "--project",
        "--package", "--extra", "--group", "--only-group", "--no-group", "--env-file", "--index", "--index-url",
        "--extra-index-url", "--default-index", "--find-links", "-f", "--index-strategy", "--keyring-provider",
        "--resolution", "--prerelease", "--exclude-newer", "--config-file", "--cache-dir", "--color",
        "--link-mode", "--refresh-package", "--reinstall-package", "--upgrade-package", "-P",
        "--no-binary-package", "--no-build-package", "--config-setting", "-C", "--python-platform",
        "--fork-strategy", "--allow-insecure-host", "--from", "-w",
    }
)  # fmt: skip
"""uv options that take a value as the next argument (`--opt=value` needs no list)."""


def _uv_command(args: list[str]) -> tuple[dict[str, str], bool, list[str]]:
    """uv's options (those with a value), whether `-m`/`--module` was given, and the command line
    uv runs."""
    options: dict[str, str] = {}
    module = False
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            return options, module, args[index + 1 :]
        if not arg.startswith("-"):
            return options, module, args[index:]
        if arg in ("-m", "--module"):
            module = True
        elif "=" in arg and arg.startswith("--"):
            key, value = arg.split("=", 1)
            options[key] = value
        elif arg in _UV_VALUE_OPTIONS and index + 1 < len(args):
            options[arg] = args[index + 1]
            index += 1
        index += 1
    return options, module, []


def _plan_uv_run(args: list[str], cwd: Path, path: str) -> CollectorPlan:
    options, module, command = _uv_command(args)
    if not command:
        return CollectorPlan(False, "uv run without a command")
    where = cwd / options["--directory"] if "--directory" in options else cwd
    if module:
        return CollectorPlan(True, f"uv run -m {command[0]}", packages=(command[0].split(".")[0],))
    if _PYTHON.fullmatch(os.path.basename(command[0])):
        return _plan_python(f"uv run {os.path.basename(command[0])}", command[1:], where)
    if command[0].endswith((".py", ".pyw")):
        return _script_plan(f"uv run {command[0]}", where / command[0])
    # A console script of the project's environment: its file is there once uv has synced it.
    project = where / options["--project"] if "--project" in options else where
    script = project / ".venv" / "bin" / command[0]
    if script.is_file():
        return _plan_script(str(script), where, path, shown=f"uv run {command[0]}")
    return CollectorPlan(True, f"uv run {command[0]}", packages=(_import_name(command[0]),))


def _plan_uvx(name: str, args: list[str]) -> CollectorPlan:
    """`uvx [--from SPEC] command`: a console script of a package uv installs; measured is the
    package by its import name (`mcp-server-time` -> `mcp_server_time`)."""
    options, _module, command = _uv_command(args)
    if not command:
        return CollectorPlan(False, f"{name} without a command")
    if _PYTHON.fullmatch(os.path.basename(command[0])):
        return CollectorPlan(False, f"{name} {command[0]}: run the server's module or script instead")
    requirement = options.get("--from", command[0])
    package = re.split(r"[\[<>=!~;@ ]", requirement, maxsplit=1)[0]
    return CollectorPlan(True, f"{name} runs Python ({command[0]})", packages=(_import_name(package),))


def _plan_script(command: str, cwd: Path, path: str, *, shown: str | None = None) -> CollectorPlan:
    """A command that is a file: a Python program if its shebang line names Python. A console
    script (a wrapper that imports its entry point) measures the package it imports from; any
    other Python script, its own directory."""
    from fuzzgate.coverage import node_plan

    name = shown or os.path.basename(command)
    found = (str(cwd / command) if not os.path.isabs(command) else command) if "/" in command else None
    if found is None:
        found = shutil.which(command, path=path)
    if found is None:
        return CollectorPlan(False, f"{name} is not a Python interpreter (not found to read its first line)")
    try:
        with open(found, "rb") as file:
            head = file.read(SHEBANG_BYTES)
    except OSError:
        return CollectorPlan(False, f"{name} is not a Python interpreter (cannot read its first line)")
    text = head.decode("utf-8", "replace")
    first, _, rest = text.partition("\n")
    # pip writes `#!/bin/sh` then `'''exec' /long/path/python "$0" "$@"` when a shebang would be too long.
    relay = rest.startswith(_RELAY) and _names_python(rest[len(_RELAY) :].split("\n", 1)[0].replace('"', " "))
    if first.startswith("#!") and not relay:
        node = node_plan.plan_node_script(name, Path(found), first[2:])
        if node is not None:
            return node
    if not first.startswith("#!") or not (_names_python(first[2:]) or relay):
        return CollectorPlan(False, f"{name} is not a Python interpreter")
    package = _entry_package(text)
    # A wrapper pip or uv wrote: in a venv's bin, or ending in `sys.exit(main())` (if that fits).
    if package is not None and (Path(found).parent.name in ("bin", "Scripts") or "sys.exit(" in text):
        return CollectorPlan(True, f"{name} is a Python console script", packages=(package,))
    return _script_plan(f"{name} is a Python script", Path(found))


def _names_python(shebang: str) -> bool:
    """Whether a shebang line (`/usr/bin/env python3`, `/venv/bin/python -u`) runs Python."""
    words = shebang.split()
    if words and os.path.basename(words[0]) == "env":
        words = [word for word in words[1:] if not word.startswith("-") and "=" not in word]
    return bool(words) and _PYTHON.fullmatch(os.path.basename(words[0])) is not None


_RELAY = "'''exec' "
_IMPORT = re.compile(r"^(?:from\s+([A-Za-z_][\w.]*)\s+import\b|import\s+([A-Za-z_][\w.]*))", re.MULTILINE)


def _entry_package(text: str) -> str | None:
    """The top-level package a console script imports its entry point from: the first `from X
    import` or `import X` that is not the standard library's."""
    for match in _IMPORT.finditer(text):
        top = (match.group(1) or match.group(2)).split(".")[0]
        if top not in sys.stdlib_module_names and top != "__future__":
            return top
    return None


def _import_name(distribution: str) -> str:
    return re.sub(r"[-.]+", "_", distribution).lower()


def _is_dotted_name(text: str) -> bool:
    return all(part.isidentifier() for part in text.split("."))


def _shown(directory: Path) -> str:
    try:
        return str(directory.relative_to(Path.cwd())) or "."
    except ValueError:
        return str(directory)
