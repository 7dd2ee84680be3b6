"""Whether a server runs on Node.js, which process is its entry, and what is its own code.

`plan_node` reads a command line `plan.py` hands it: `node [options] script`, `npx`/`npm exec` of a
package, `tsx`/`ts-node` of a script, a file whose shebang names node (a package's bin), and says
whether the Node collector (`collector/node/`) goes in. The collector loads into every Node process
started with fuzzgate's environment and measures only in the entry process: the one whose main
script is the plan's `entry` (for `ts-node`, which runs the script in its own process, a script
anywhere on its command line), or, with no entry (`npx`), a file inside the package's
`node_modules/<package>` directory. Own code is the directory of the entry's nearest
`package.json` (the script's own directory when there is none), or the npx package, plus
`[target] coverage_source`. Bun and Deno are not Node: they get behaviour feedback, said why.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from fuzzgate.coverage.plan import NODE, CollectorPlan

_NODE = re.compile(r"node(?:js)?(?:\d+(?:\.\d+)*)?")
_OTHER = {"bun": "Bun", "bunx": "Bun", "deno": "Deno"}
_NODE_VALUE_OPTIONS = frozenset(
    {
        "-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions", "--title",
        "--env-file", "--input-type", "--watch-path", "--disable-warning", "--inspect-port", "--redirect-warnings",
        "--openssl-config", "--icu-data-dir", "--diagnostic-dir", "--report-dir", "--report-directory",
        "--cpu-prof-dir", "--heap-prof-dir", "--secure-heap", "--stack-trace-limit", "--max-http-header-size",
    }
)  # fmt: skip
"""node options that take a value as the next argument (`--opt=value` needs no list)."""
_NPX_VALUE_OPTIONS = frozenset(
    {"-p", "--package", "--cache", "--userconfig", "--registry", "-w", "--workspace", "--prefix"}
)
_TS_VALUE_OPTIONS = frozenset({"--tsconfig", "-P", "--project", "-O", "--compiler-options"})
_TS_RUNNERS = frozenset({"tsx", "ts-node", "ts-node-esm", "ts-node-transpile-only"})
_SCRIPT_SUFFIXES = (".js", ".mjs", ".cjs")


def plan_node(command: str, args: list[str], cwd: Path) -> CollectorPlan | None:
    """The plan for a command that runs Node (or Bun, Deno: not injected), None for any other."""
    name = os.path.basename(command)
    if _NODE.fullmatch(name):
        return _plan_node(name, args, cwd)
    if name == "npx":
        return _plan_npx("npx", args, cwd)
    if name in ("npm", "pnpm") and args[:1] in (["exec"], ["x"], ["dlx"]):
        return _plan_npx(f"{name} {args[0]}", args[1:], cwd)
    if name in _TS_RUNNERS:
        return _plan_ts(name, args, cwd)
    if name in _OTHER:
        return CollectorPlan(False, f"{name} runs {_OTHER[name]}, not Node: the collector needs Node's inspector")
    return None


def plan_node_script(name: str, found: Path, shebang: str) -> CollectorPlan | None:
    """A file run as a command (a package's bin, `./server.js`): Node's when its shebang names node
    (`#!/usr/bin/env node`), Bun's or Deno's (not injected); None for any other."""
    words = shebang.split()
    if words and os.path.basename(words[0]) == "env":
        words = [word for word in words[1:] if not word.startswith("-") and "=" not in word]
    runner = os.path.basename(words[0]) if words else ""
    if _NODE.fullmatch(runner):
        return _entry_plan(f"{name} is a Node script", found)
    if runner in _OTHER:
        return CollectorPlan(False, f"{name} runs on {_OTHER[runner]}, not Node: the collector needs Node's inspector")
    return None


def is_package_name(text: str) -> bool:
    """An npm package name (`name`, `@scope/name`) that `[target] coverage_source` may list."""
    return re.fullmatch(r"(?:@[a-z0-9][\w.-]*/)?[a-z0-9][\w.-]*", text) is not None


def own_directory(entry: Path) -> Path:
    """The directory of `entry`'s nearest `package.json`, or `entry`'s own directory."""
    start = entry.parent
    for directory in (start, *start.parents):
        if (directory / "package.json").is_file():
            return directory
    return start


def _entry_plan(reason: str, script: Path, *, in_argv: bool = False) -> CollectorPlan:
    entry = Path(os.path.normpath(script))
    try:
        real = entry.resolve()
    except (OSError, RuntimeError):
        real = entry
    return CollectorPlan(
        True, reason, directories=(own_directory(real),), runtime=NODE, entry=entry, entry_in_argv=in_argv
    )


def _plan_node(name: str, args: list[str], cwd: Path) -> CollectorPlan:
    """`node [options] script ...`, options as node reads them."""
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            if index + 1 < len(args):
                return _entry_plan(f"{name} runs {args[index + 1]}", cwd / args[index + 1])
            break
        if arg == "-":
            return CollectorPlan(False, f"{name} reads its program from stdin: no entry file to measure")
        if not arg.startswith("-"):
            return _entry_plan(f"{name} runs {arg}", cwd / arg)
        option = arg.split("=", 1)[0]
        if option in ("-e", "--eval", "-p", "--print"):
            return CollectorPlan(False, f"{name} {option} runs code from its command line: no entry file to measure")
        if option in ("-c", "--check", "-i", "--interactive", "--test", "-v", "--version", "-h", "--help"):
            return CollectorPlan(False, f"{name} {option} runs no server")
        index += 2 if arg in _NODE_VALUE_OPTIONS else 1
    return CollectorPlan(False, f"{name} runs no program file (an interactive interpreter)")


def _plan_npx(name: str, args: list[str], cwd: Path) -> CollectorPlan:
    """`npx [--yes] [--package PKG]... [--] command args`: a package's bin, measured as the package
    (the collector finds it under `node_modules/<package>` in the entry process)."""
    packages: list[str] = []
    command: str | None = None
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ("-c", "--call") or arg.startswith("--call="):
            return CollectorPlan(False, f"{name} {arg.split('=')[0]} runs a shell command: no entry package to measure")
        if arg == "--":
            command = args[index + 1] if index + 1 < len(args) else None
            break
        if arg.startswith("--package="):
            packages.append(arg.split("=", 1)[1])
        elif arg in ("-p", "--package") and index + 1 < len(args):
            packages.append(args[index + 1])
        if not arg.startswith("-"):
            command = arg
            break
        index += 2 if arg in _NPX_VALUE_OPTIONS else 1
    if command is None:
        return CollectorPlan(False, f"{name} without a command")
    if not packages:
        local = cwd / command
        if command.startswith((".", "/")) or local.is_file():
            if local.suffix in _SCRIPT_SUFFIXES:
                return _entry_plan(f"{name} runs {command}", local)
            return CollectorPlan(False, f"{name} {command}: a path, not a package to measure")
        packages.append(command)
    names = tuple(dict.fromkeys(_package_name(spec) for spec in packages))
    return CollectorPlan(True, f"{name} runs {', '.join(names)}", packages=names, runtime=NODE)


def _package_name(spec: str) -> str:
    """`@scope/name@1.2` -> `@scope/name`; `name@latest` -> `name`."""
    if spec.startswith("@"):
        scope, _, rest = spec.partition("/")
        return f"{scope}/{rest.split('@', 1)[0]}"
    return spec.split("@", 1)[0]


def _plan_ts(name: str, args: list[str], cwd: Path) -> CollectorPlan:
    """`tsx script.ts` (a launcher starting node on the script: its child is the entry) and
    `ts-node script.ts` (which runs the script in its own process)."""
    index = 0
    while index < len(args):
        arg = args[index]
        if not arg.startswith("-"):
            return _entry_plan(f"{name} runs {arg}", cwd / arg, in_argv=name != "tsx")
        if arg in ("-e", "--eval", "-p", "--print"):
            return CollectorPlan(False, f"{name} {arg} runs code from its command line: no entry file to measure")
        index += 2 if arg in _NODE_VALUE_OPTIONS or arg in _TS_VALUE_OPTIONS else 1
    return CollectorPlan(False, f"{name} runs no program file")
