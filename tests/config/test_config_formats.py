"""wallfacer.toml loads unchanged; TOML and YAML say the same thing; `[target]` is located."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from fuzzgate.config import (
    Config,
    FeedbackMode,
    GenerationMode,
    Overrides,
    ProtocolMode,
    TargetConfig,
    TargetKind,
    load_config,
)
from fuzzgate.model.findings import Kind, Severity

Loader = Callable[..., tuple[Config, list[str]]]

WALLFACER_TOML = """\
# wallfacer configuration for the notes server, as committed in its repository.

[target]
kind = "stdio"
command = "node"
args = ["dist/server.js", "--stdio"]
env = { NOTES_DB = "/tmp/notes.db", NOTES_TOKEN = "${NOTES_TOKEN}" }
timeout_ms = 8000

[output]
corpus_dir = ".wallfacer/corpus"
lock_timeout_ms = 60000

[severity]
crash = "critical"
hang = "medium"
protocol_error = "high"
schema_violation = "low"
property_failure = "high"
state_leak = "critical"
sequence_failure = "medium"

[destructive]
patterns = ["^admin_", "(?i)erase"]
replace_defaults = true

[allow_destructive]
tools = ["^reset_cache$"]

[packs.auth]
header = "Authorization"
scheme = "Bearer"

[packs.pagination]
max_pages = "5"
"""

WALLFACER_HTTP = """\
[target]
kind = "http"
url = "https://mcp.example.test/mcp"
timeout_ms = 2500

[target.headers]
Authorization = "Bearer ${API_TOKEN}"
X-Tenant = "acme"
"""


def test_wallfacer_toml_loads_unchanged(load: Loader, tmp_path: Path) -> None:
    config, warnings = load(WALLFACER_TOML, "wallfacer.toml", environ={"NOTES_TOKEN": "tok-123"})
    assert warnings == []
    target = config.target
    assert target.kind is TargetKind.STDIO
    assert (target.command, target.args) == ("node", ("dist/server.js", "--stdio"))
    assert target.env == {"NOTES_DB": "/tmp/notes.db", "NOTES_TOKEN": "tok-123"}
    assert target.timeout_ms == 8000
    assert target.cwd == tmp_path  # the file's directory: its command line runs from there
    assert config.source == Path("wallfacer.toml").absolute()
    assert config.target_line == 3
    assert config.corpus_dir == Path(".wallfacer/corpus")
    assert config.lock_timeout_ms == 60000
    assert config.severity[Kind.HANG] is Severity.MEDIUM
    assert config.severity[Kind.SCHEMA_VIOLATION] is Severity.LOW
    assert config.severity[Kind.SECRET_LEAK] is Severity.CRITICAL  # not in the file: default
    assert config.extra_severity == {
        "property_failure": Severity.HIGH,
        "state_leak": Severity.CRITICAL,
        "sequence_failure": Severity.MEDIUM,
    }
    assert config.destructive_patterns == ("^admin_", "(?i)erase")
    assert config.destructive_replace_defaults is True
    assert config.allow_destructive == ("^reset_cache$",)
    assert config.packs == {
        "auth": {"header": "Authorization", "scheme": "Bearer"},
        "pagination": {"max_pages": "5"},
    }
    # Nothing fuzzgate-specific in the file: fuzzgate's defaults apply, directories beside the file.
    assert config.budget_s == 60.0
    assert config.out_dir == tmp_path / ".fuzzgate/out"
    assert config.baseline_dir == tmp_path / ".fuzzgate/baseline"


def test_wallfacer_http_target(load: Loader) -> None:
    config, warnings = load(WALLFACER_HTTP, "wallfacer.toml", environ={"API_TOKEN": "s3cr3t"})
    assert warnings == []
    assert config.target.kind is TargetKind.HTTP
    assert config.target.url == "https://mcp.example.test/mcp"
    assert config.target.headers == {"Authorization": "Bearer s3cr3t", "X-Tenant": "acme"}
    assert config.target.timeout_ms == 2500


def test_secrets_stay_out_of_the_config_repr(load: Loader) -> None:
    config, _ = load(WALLFACER_HTTP, environ={"API_TOKEN": "s3cr3t"})
    assert "s3cr3t" not in repr(config)


FULL_TOML = """\
[target]
kind = "stdio"
command = "python"
args = ["-m", "notes.server"]
env = { LOG_LEVEL = "debug" }
cwd = "server"
timeout_ms = 4000
feedback = "behaviour"
coverage_source = ["notes", "lib/shared"]

[fuzzgate]
name = "notes"
budget = "2m"
cases = 200
mode = "adversarial"
concurrency = 4
include = ["notes_*"]
exclude = ["notes_delete"]
max_tools = 10
seed = "0x2a"
fail_on = "high"
out = "reports/fuzz"
baseline = "fuzz/baseline"
corpus = "fuzz/corpus"
secret_patterns = ["sk-[A-Za-z0-9]{20,}"]
slow = "1500ms"
max_string = "1MiB"
replays = 5
protocol = "legacy"
startup_timeout = "45s"

[severity]
slow = "medium"

[output]
corpus_dir = "corpus"
"""

FULL_YAML = """\
target:
  kind: stdio
  command: python
  args: ["-m", "notes.server"]
  env:
    LOG_LEVEL: debug
  cwd: server
  timeout_ms: 4000
  feedback: behaviour
  coverage_source: [notes, lib/shared]
fuzzgate:
  name: notes
  budget: 2m
  cases: 200
  mode: adversarial
  concurrency: 4
  include:
    - "notes_*"
  exclude: [notes_delete]
  max_tools: 10
  seed: "0x2a"
  fail_on: high
  out: reports/fuzz
  baseline: fuzz/baseline
  corpus: fuzz/corpus
  secret_patterns: ['sk-[A-Za-z0-9]{20,}']
  slow: 1500ms
  max_string: 1MiB
  replays: 5
  protocol: legacy
  startup_timeout: 45s
severity:
  slow: medium
output:
  corpus_dir: corpus
"""


def _expected_full(tmp_path: Path) -> Config:
    return Config(
        target=TargetConfig(
            kind=TargetKind.STDIO,
            command="python",
            args=("-m", "notes.server"),
            env={"LOG_LEVEL": "debug"},
            cwd=tmp_path / "server",
            timeout_ms=4000,
            feedback=FeedbackMode.BEHAVIOUR,
            coverage_source=("notes", "lib/shared"),
            name="notes",
        ),
        budget_s=120.0,
        cases=200,
        mode=GenerationMode.ADVERSARIAL,
        concurrency=4,
        include=("notes_*",),
        exclude=("notes_delete",),
        max_tools=10,
        seed=42,
        fail_on=Severity.HIGH,
        out_dir=tmp_path / "reports/fuzz",
        baseline_dir=tmp_path / "fuzz/baseline",
        corpus=tmp_path / "fuzz/corpus",
        secret_patterns=("sk-[A-Za-z0-9]{20,}",),
        slow_ms=1500,
        max_string=1024 * 1024,
        replays=5,
        protocol=ProtocolMode.LEGACY,
        startup_timeout_ms=45000,
        corpus_dir=Path("corpus"),
    )


@pytest.mark.parametrize(("text", "name"), [(FULL_TOML, "fuzzgate.toml"), (FULL_YAML, "fuzzgate.yaml")])
def test_every_fuzzgate_key_is_read(load: Loader, tmp_path: Path, text: str, name: str) -> None:
    config, warnings = load(text, name)
    assert warnings == []
    expected = _expected_full(tmp_path)
    expected.severity[Kind.SLOW] = Severity.MEDIUM
    assert replace(config, source=None, target_line=1) == expected


def test_toml_and_yaml_give_the_same_config(load: Loader) -> None:
    from_toml, _ = load(FULL_TOML, "fuzzgate.toml")
    from_yaml, _ = load(FULL_YAML, "fuzzgate.yml")
    assert replace(from_toml, source=None) == replace(from_yaml, source=None)


def test_wallfacer_sample_as_yaml_is_the_same(load: Loader) -> None:
    yaml_text = """\
target:
  kind: stdio
  command: node
  args: [dist/server.js, --stdio]
  env: {NOTES_DB: /tmp/notes.db, NOTES_TOKEN: "${NOTES_TOKEN}"}
  timeout_ms: 8000
output: {corpus_dir: .wallfacer/corpus, lock_timeout_ms: 60000}
severity:
  crash: critical
  hang: medium
  protocol_error: high
  schema_violation: low
  property_failure: high
  state_leak: critical
  sequence_failure: medium
destructive: {patterns: ["^admin_", "(?i)erase"], replace_defaults: true}
allow_destructive: {tools: ["^reset_cache$"]}
packs:
  auth: {header: Authorization, scheme: Bearer}
  pagination: {max_pages: "5"}
"""
    environ = {"NOTES_TOKEN": "t"}
    from_toml, _ = load(WALLFACER_TOML, "wallfacer.toml", environ=environ)
    from_yaml, warnings = load(yaml_text, "fuzzgate.yaml", environ=environ)
    assert warnings == []
    assert replace(from_toml, source=None, target_line=1) == replace(from_yaml, source=None, target_line=1)


def test_target_cwd_out_and_baseline_are_relative_to_the_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    path = conf_dir / "fuzzgate.toml"
    path.write_text('[target]\ncommand = "srv"\ncwd = "../server"\n[fuzzgate]\nout = "o"\nbaseline = "b"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    warnings: list[str] = []
    config = load_config(path, Overrides(), {}, warn=warnings.append)
    assert warnings == []
    assert config.target.cwd == conf_dir / "../server"
    assert config.out_dir == conf_dir / "o"
    assert config.baseline_dir == conf_dir / "b"


def test_absolute_target_cwd_is_kept(load: Loader) -> None:
    config, _ = load('[target]\ncommand = "srv"\ncwd = "/srv/app"\n')
    assert config.target.cwd == Path("/srv/app")


@pytest.mark.parametrize(
    ("text", "name", "line"),
    [
        ('# c\n\n[fuzzgate]\nbudget = "1s"\n\n[target]\ncommand = "x"\n', "fuzzgate.toml", 6),
        ('  [ target ]  # spaced\ncommand = "x"\n', "fuzzgate.toml", 1),
        ('# c\ntarget = { command = "x" }\n[fuzzgate]\n', "fuzzgate.toml", 2),
        ('# c\n\ntarget.command = "x"\n', "fuzzgate.toml", 3),
        ('[fuzzgate]\nreplays = 1\n[target.env]\nA = "b"\n[target]\ncommand = "x"\n', "fuzzgate.toml", 5),
        ('[packs.x]\ntarget = "y"\n[target]\ncommand = "x"\n', "fuzzgate.toml", 3),
        ("# c\nfuzzgate:\n  replays: 1\n\ntarget:\n  command: x\n", "fuzzgate.yaml", 5),
        ("fuzzgate: {replays: 1}\n'target': {command: x}\n", "fuzzgate.yml", 2),
        ("{fuzzgate: {}, target: {command: x}}\n", "fuzzgate.yml", 1),
    ],
)
def test_target_line_is_found(load: Loader, text: str, name: str, line: int) -> None:
    config, _ = load(text, name)
    assert config.target_line == line


def test_target_line_survives_variable_expansion(load: Loader) -> None:
    config, _ = load('[fuzzgate]\nname = "${N}"\n\n[target]\ncommand = "x"\n', environ={"N": "svc"})
    assert config.target_line == 4
    assert config.target.name == "svc"


def test_target_from_flags_only_has_no_source(load: Loader) -> None:
    config = load_config(None, Overrides(command="python", args=("s.py",)), {}, warn=pytest.fail)
    assert config.source is None
    assert config.target_line == 1
    assert config.target.command == "python"


def test_empty_yaml_file_needs_a_target(load: Loader) -> None:
    config, _ = load("", "fuzzgate.yaml", overrides=Overrides(url="http://localhost:1/mcp"))
    assert config.target.kind is TargetKind.HTTP


def test_yaml_null_means_unset(load: Loader) -> None:
    config, warnings = load("target:\n  command: x\n  args:\nfuzzgate:\n  budget:\n", "fuzzgate.yaml")
    assert warnings == []
    assert config.target.args == ()
    assert config.budget_s == 60.0


def test_byte_order_mark_is_accepted(load: Loader) -> None:
    config, _ = load('\ufeff[target]\ncommand = "x"\n')
    assert config.target.command == "x"


def test_examples_in_the_reference_load(load: Loader) -> None:
    docs = (Path(__file__).parents[2] / "docs" / "configuration.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```(toml|yaml)\n(.*?)```", docs, re.S)
    assert len(blocks) >= 4
    configs = []
    for language, block in blocks:
        config, warnings = load(block, f"fuzzgate.{language}", environ={"MCP_TOKEN": "t", "API_TOKEN": "t"})
        assert warnings == [], block
        configs.append(replace(config, source=None, target_line=1))
    # The YAML example says what the first TOML example says.
    assert configs[0] == configs[1]
