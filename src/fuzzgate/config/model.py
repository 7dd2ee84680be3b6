"""The settled configuration of a run: file values, then CLI flags over them.

Every field has its default here; `fuzzgate.config.load` fills these from wallfacer.toml /
fuzzgate.{toml,yaml,yml} and the CLI, and is the only place that knows file syntax.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from fuzzgate.model.findings import DEFAULT_SEVERITY, Kind, Severity

DEFAULT_OUT_DIR = Path(".fuzzgate/out")
"""`Config.out_dir` when neither the file nor `--out` sets it."""
DEFAULT_BASELINE_DIR = Path(".fuzzgate/baseline")
"""`Config.baseline_dir` when neither the file nor `--baseline` sets it."""
DEFAULT_MEMORY_LIMIT = 2 << 30
"""`Config.memory_limit`: 2 GiB, libFuzzer's `-rss_limit_mb` default; an MCP server holds a few
hundred MiB at most in ordinary use."""


class TargetKind(StrEnum):
    STDIO = "stdio"
    HTTP = "http"


class GenerationMode(StrEnum):
    CONFORM = "conform"
    ADVERSARIAL = "adversarial"
    MIXED = "mixed"


class SandboxMode(StrEnum):
    """Whether a server fuzzgate starts runs in a sandbox of Linux namespaces (`sandbox.jail`).

    `auto` uses it where it works and says why not otherwise; `required` makes a machine without
    it a target error; `off` never uses it."""

    AUTO = "auto"
    REQUIRED = "required"
    OFF = "off"


class FeedbackMode(StrEnum):
    """What tells fuzzgate that a call did something new, which the corpus keeps and mutation feeds on.

    `auto`: coverage of the server's own code where the server runs on a Python interpreter
    fuzzgate can inject its collector into, behaviour everywhere else; `behaviour`: what came back
    (outcome, error code, message template, structure, stderr templates) only; `off`: neither, no
    corpus read or written (every run starts cold, as before the corpus existed)."""

    AUTO = "auto"
    BEHAVIOUR = "behaviour"
    OFF = "off"


class ProtocolMode(StrEnum):
    """How to negotiate the protocol era: `auto` probes 2026-07-28 and falls back to the handshake."""

    AUTO = "auto"
    LEGACY = "legacy"
    MODERN = "2026-07-28"


@dataclass(frozen=True, slots=True)
class TargetConfig:
    """The `[target]` section (wallfacer's format)."""

    kind: TargetKind
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict, repr=False)
    cwd: Path | None = None
    """The server's working directory, None for fuzzgate's own. `load_config` gives it the
    config file's directory when the file supplies the command line and no `cwd`.

    `command`, `args`, `env` and `cwd` start a stdio server, or the server of an HTTP target
    (`url`) when it names its command; without one, an HTTP server is the user's to start."""
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    """`env` and `headers` hold secrets (tokens), so they stay out of `repr` and tracebacks."""
    timeout_ms: int = 5000
    scope: tuple[Path, ...] = ()
    """The directories the server may read and write (absolute). Empty: inferred from the working
    directory and the command line (`sandbox.scope.infer_scope`)."""
    sandbox: SandboxMode = SandboxMode.AUTO
    feedback: FeedbackMode = FeedbackMode.AUTO
    coverage_source: tuple[str, ...] = ()
    """Packages (`pkg`) or directories measured for coverage besides the server's own code, which
    is inferred from the command line (`python -m pkg`, a script, a console script's package)."""
    name: str | None = None
    """A short name for reports (JUnit classname, SARIF category).

    Derived from the command or URL when unset."""

    @property
    def launched(self) -> bool:
        """Whether fuzzgate starts the server itself (a stdio target, or an HTTP one that names the
        command serving it), and so can restart it and replay findings on fresh servers."""
        return self.kind is TargetKind.STDIO or self.command is not None

    @property
    def display_name(self) -> str:
        if self.name:
            return self.name
        if self.kind is TargetKind.HTTP and self.url:
            # The host and port only: a URL's user, password and query may hold secrets, and the
            # name goes where nothing is redacted after it (the corpus and store paths).
            try:
                return urllib.parse.urlsplit(self.url).netloc.rpartition("@")[2] or "server"
            except ValueError:
                return "server"
        parts = [Path(self.command or "server").name, *self.args]
        script = next((Path(a).stem for a in reversed(parts) if a.endswith((".py", ".js", ".ts"))), None)
        return script or Path(self.command or "server").name


@dataclass(frozen=True, slots=True)
class Shard:
    """`--shard I/N`: this run fuzzes the I-th of N deterministic shares of the target's tools."""

    index: int
    """1-based, as the flag spells it."""
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


@dataclass(frozen=True, slots=True)
class Config:
    """Everything a run needs to know, already validated."""

    target: TargetConfig
    source: Path | None = None
    """The config file this came from (None when the target came only from flags)."""
    target_line: int = 1
    """The line of `source` that declares the target (for SARIF locations)."""
    expanded: tuple[str, ...] = field(default=(), repr=False)
    """Every value a `${VAR}` of `source` expanded to, wherever it went (`[target] args`, `command`,
    `url`, `cwd`, `scope`, `[fuzzgate] store`, ...): each may be a secret, so the redactor takes them."""
    follow_up_flags: tuple[str, ...] = ()
    """The command-line settings the commands a run prints (a replay, `baseline accept`, `baseline
    prune`) repeat after `--config`, as `--flag=value` words (`config._overrides.follow_up_flags`):
    where the report and baseline are, how the server is started and judged; never the target."""

    budget_s: float = 60.0
    cases: int | None = None
    mode: GenerationMode = GenerationMode.MIXED
    concurrency: int = 1
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    max_tools: int | None = None
    seed: int | None = None
    fail_on: Severity = Severity.MEDIUM
    fail_on_sdk: bool = False
    """Whether a new finding the server's SDK causes (`Cause.SDK`, always low) fails the run."""
    out_dir: Path = DEFAULT_OUT_DIR
    """Like `baseline_dir`: relative to the current directory as given here and by a flag;
    `load_config` takes the file's value, and with a file this default, from the file's directory."""
    secret_patterns: tuple[str, ...] = ()
    slow_ms: int = 2000
    max_string: int = 65536
    replays: int = 3
    shrink_tries: int = 24
    """`[fuzzgate] shrink_tries`: the most fresh servers shrinking a confirmed finding's failing call
    takes, and as many for its sequence's calls before it (`fuzzgate.triage.minimize`,
    `fuzzgate.triage.sequence`); 0 keeps each repro as fuzzing sent it."""
    coverage_sampling: int = 8
    """`[fuzzgate] coverage_sampling`: once a tool's calls stop reaching new coverage, the collector
    measures one call of it in this many (`fuzzgate.learn.sampling`); 1 measures every call."""
    protocol: ProtocolMode = ProtocolMode.AUTO
    startup_timeout_ms: int = 30000
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT
    """`[fuzzgate] memory_limit`: the most resident memory, in bytes, the processes of a server
    fuzzgate starts may hold before it stops them (`sandbox.resident`); None: no limit."""
    baseline_dir: Path = DEFAULT_BASELINE_DIR
    corpus: Path = Path(".fuzzgate/corpus")
    """The corpus directory (one subdirectory per target); relative like `baseline_dir`."""
    shard: Shard | None = None
    """`[fuzzgate] shard` / `--shard I/N`: None fuzzes every tool."""
    base: Path | None = None
    """`[fuzzgate] base` / `--base DIR`: the base revision of the repository, checked out and
    installed like the head. Each new finding is replayed on the server started from it: one that
    fails there too is pre-existing, not the change's (`fuzzgate.engine.base_check`). Relative like
    `baseline_dir`; None: every finding not in the baseline is new."""
    changed_files: Path | None = None
    """`[fuzzgate] changed_files` / `--changed-files FILE`: a file naming the paths the change
    touched, one per line, relative to the repository root; None: with `base`, the files that
    differ between the two trees. Tools whose calls reach one get most of the budget."""
    store: str | None = None
    """`[fuzzgate] store` / `--store URL`: a shared store (`redis://...` or a directory) that runs
    and workers read seeds from and write corpus, findings and statistics to; None for none."""

    severity: dict[Kind, Severity] = field(default_factory=lambda: dict(DEFAULT_SEVERITY))
    extra_severity: dict[str, Severity] = field(default_factory=dict)
    """`[severity]` entries for wallfacer kinds fuzzgate never reports (property_failure,
    state_leak, sequence_failure): kept so a wallfacer.toml loads unchanged, otherwise unused."""
    destructive_patterns: tuple[str, ...] = ()
    destructive_replace_defaults: bool = False
    allow_destructive: tuple[str, ...] = ()
    fuzz_guarded_in_sandbox: bool = False
    """`[fuzzgate] fuzz_guarded_in_sandbox` / `--fuzz-guarded-in-sandbox`: tools the destructive
    guard blocks are fuzzed when, and only when, the sandbox holds for that server start."""

    corpus_dir: Path = Path(".wallfacer/corpus")
    lock_timeout_ms: int = 30000
    packs: dict[str, dict[str, str]] = field(default_factory=dict)
