"""The commented `fuzzgate.toml` that `fuzzgate init` writes.

It loads without error or warning as written, and every commented-out `key = value` line shows
a valid value (the default, where there is one), so uncommenting any of them is safe.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from fuzzgate.config.model import TargetConfig, TargetKind
from fuzzgate.model.findings import DEFAULT_SEVERITY

_HEADER = """\
# fuzzgate.toml: how `fuzzgate` reaches and fuzzes this project's MCP server.
# Reference for every key: docs/configuration.md in the fuzzgate repository.
# fuzzgate also reads an existing wallfacer.toml, and this same content written as YAML
# (fuzzgate.yaml).
#
# Values can come from the environment: a dollar sign followed by {NAME} is replaced by the
# variable NAME before the file is read (comments included), so tokens stay out of the
# repository; two dollar signs stand for one.
"""

_STDIO_TARGET = """
[target]
# "stdio": fuzzgate starts the server and speaks MCP over its stdin and stdout.
kind = "stdio"
command = "python"
args = ["server.py"]
# Working directory of the server, relative to this file (default: fuzzgate's own).
# cwd = "."
# Environment variables for the server.
# env = { LOG_LEVEL = "debug" }
# How long one request may take before it counts as a hang, in milliseconds.
# timeout_ms = 5000
"""

_HTTP_TARGET = """
[target]
# "http": fuzzgate reaches the server over streamable HTTP at `url`.
kind = "http"
url = "http://127.0.0.1:8000/mcp"
# The command serving `url`. With it, fuzzgate starts the server itself, contained and measured
# for coverage as a stdio server is, restarts it after a crash or a hang and reads its logs;
# without it, start the server yourself before `fuzzgate run` (a crash then ends fuzzing).
# command = "python"
# args = ["server.py", "--transport", "http", "--port", "8000"]
# How long one request may take before it counts as a hang, in milliseconds.
# timeout_ms = 5000
# Headers sent with every request (take tokens from the environment, see the top of this file).
# headers = { Authorization = "Bearer <token>" }
"""

_FUZZGATE = """
[fuzzgate]
# Everything below is optional and shows the default (or an example where there is none).
# The command line wins over this file: --budget, --cases, --seed, ...

# Name of the server in reports (default: derived from the command or URL).
# name = "my-server"
# Total fuzzing time of a run.
# budget = "60s"
# Test cases per tool (default: as many as the budget allows).
# cases = 100
# Inputs to generate: "conform" (valid for the tool's input schema), "adversarial"
# (deliberately invalid) or "mixed".
# mode = "mixed"
# Calls in flight at once, 1 to 64.
# concurrency = 1
# Tools to fuzz and to skip, as glob patterns on tool names ("search_*"); no include means all.
# include = []
# exclude = []
# Fuzz at most this many tools (default: no limit).
# max_tools = 20
# Seed of the run (default: derived from the commit under test); an integer or "0x..." hex.
# seed = 42
# Fuzz only the I-th of N stable shares of the tools, one per CI matrix job (docs/sharding.md).
# shard = "1/4"
# Lowest severity of a new finding that fails the run: "low", "medium", "high", "critical".
# fail_on = "medium"
# Whether new findings the server's MCP SDK causes (always low; README, "What it finds") fail the run too.
# fail_on_sdk = false
# Where reports go, and where accepted findings are kept; relative to the working directory.
# out = ".fuzzgate/out"
# baseline = ".fuzzgate/baseline"
# Where inputs that reached new code or behaviour are kept between runs (docs/corpus.md).
# corpus = ".fuzzgate/corpus"
# The base revision of the repository, checked out and installed like the head: a new finding that
# fails there too is pre-existing and does not fail the run (docs/github-action.md). None by default.
# base = "../base"
# A file naming the paths the change touched, one per line (default with base: the files that
# differ): tools whose calls reach them get most of the budget.
# changed_files = "changed.txt"
# A shared store (Redis or a directory) for corpus, findings and statistics of runs and workers
# (docs/store.md); none by default.
# store = "redis://127.0.0.1:6379/0"
# Regular expressions for secrets that must never appear in a reply (added to the built-in ones).
# secret_patterns = []
# A call slower than this is a "slow" finding.
# slow = "2s"
# Longest string generated for an argument.
# max_string = "64KiB"
# Times a finding is replayed on a fresh server to confirm it, 0 to 20.
# replays = 3
# Fresh servers shrinking a confirmed finding's call may take, 0 to 100 (0: repros as fuzzing sent them).
# shrink_tries = 24
# Once a tool's calls stop reaching new coverage, measure one call of it in this many (1: every call).
# coverage_sampling = 8
# Protocol: "auto" (try 2026-07-28, fall back to the initialize handshake), "legacy" or "2026-07-28".
# protocol = "auto"
# How long the server may take to start and answer its first request.
# startup_timeout = "30s"
# The most resident memory the server's processes may hold; past it the call is an "out_of_memory"
# finding ("off": no limit).
# memory_limit = "2GiB"
# Fuzz the tools the destructive guard blocks too, where (and only where) the sandbox holds.
# fuzz_guarded_in_sandbox = false
"""

_WALLFACER = """
# Severity of each kind of finding ("low", "medium", "high", "critical"); the defaults:
# [severity]
{severity}
# Tool names (regular expressions) treated as destructive and not called, on top of the built-in
# delete, drop, destroy, truncate, kill, wipe, purge and reset (replace_defaults drops those).
# [destructive]
# patterns = []
# replace_defaults = false
# Destructive tools that may be called anyway (regular expressions).
# [allow_destructive]
# tools = []
"""


_STDIO_COMMAND = 'command = "python"\nargs = ["server.py"]\n'
_HTTP_COMMAND = '# command = "python"\n# args = ["server.py", "--transport", "http", "--port", "8000"]\n'
_HTTP_URL = 'url = "http://127.0.0.1:8000/mcp"\n'


_GENERIC_STEMS = frozenset({"index", "main", "server", "app", "cli", "__main__", "run", "start", "mcp", "stdio"})
"""Script names that name no server: `node dist/index.js` made every Node server `index`, and the
name keys the corpus directory, the SARIF category, the JUnit suite and the shared store."""
_BUILD_DIRS = frozenset({"dist", "build", "lib", "src", "bin", "out", "esm", "cjs", ".", ".."})
"""Directories between a package and its script, skipped when naming it from where it lies."""
_NAME_LINE = '# name = "my-server"\n'


_LAUNCHERS = frozenset({"npx", "uvx", "pipx", "bunx", "pnpx"})
"""Commands that run a package named in their arguments: the derived name was the launcher's."""


def starter_name(command: str | None, args: Sequence[str], cwd: Path) -> str | None:
    """The name `init` writes for a given target whose derived name names no server: a launcher's
    package (`npx -y @modelcontextprotocol/server-everything` is `server-everything`, `python -m
    mcp_server_git` is `mcp_server_git`), or for a script whose own name is generic
    (`_GENERIC_STEMS`) the directory it belongs to, past build directories
    (`.../server-filesystem/dist/index.js` is `server-filesystem`). None when the derived one will do."""
    if command is None:
        return None
    words = [a for a in args if not a.startswith("-")]
    launcher = Path(command).name
    if launcher in _LAUNCHERS and words:
        return _package_name(words[0])
    if launcher.startswith("python") and "-m" in args[:-1]:
        return args[args.index("-m") + 1]
    derived = TargetConfig(kind=TargetKind.STDIO, command=command, args=tuple(args)).display_name
    script = next((a for a in reversed([command, *args]) if a.endswith((".py", ".js", ".ts"))), None)
    if derived not in _GENERIC_STEMS or script is None:
        return None
    where = Path(script) if Path(script).is_absolute() else cwd / script
    for part in reversed(where.parent.parts[1:]):
        if part not in _BUILD_DIRS and part not in _GENERIC_STEMS:
            return part
    return None


def _package_name(spec: str) -> str:
    """A package's name without its scope or version: `@scope/name@1.2` and `name==1.2` are `name`."""
    name = spec.rpartition("/")[2] if spec.startswith("@") else spec
    for separator in ("@", "==", ">=", "["):
        name = name.partition(separator)[0] or name
    return name


def starter_config(
    kind: Literal["stdio", "http"],
    *,
    command: str | None = None,
    args: Sequence[str] = (),
    url: str | None = None,
    name: str | None = None,
) -> str:
    """The starter `fuzzgate.toml` for a server reached over `kind`; `command` and `args` (the
    command serving an HTTP target), `url` and the server's `name`, when given, in place of the
    examples."""
    severity = "\n".join(f'# {finding.value} = "{level.value}"' for finding, level in DEFAULT_SEVERITY.items())
    target = _STDIO_TARGET if kind == "stdio" else _HTTP_TARGET
    if command is not None:
        given = f"command = {toml_string(command)}\nargs = [{', '.join(toml_string(a) for a in args)}]\n"
        target = target.replace(_STDIO_COMMAND if kind == "stdio" else _HTTP_COMMAND, given)
    if url is not None:
        target = target.replace(_HTTP_URL, f"url = {toml_string(url)}\n")
    settings = _FUZZGATE if name is None else _FUZZGATE.replace(_NAME_LINE, f"name = {toml_string(name)}\n")
    return _HEADER + target + settings + _WALLFACER.format(severity=severity)


def toml_string(value: str) -> str:
    """`value` as a TOML basic string that reads back as `value`: JSON's escapes are TOML's, but for
    DEL, which TOML also wants escaped, and `$`, doubled so that no `${NAME}` in it is expanded."""
    return json.dumps(value.replace("$", "$$"), ensure_ascii=False).replace("\x7f", "\\u007f")
