"""Every mistake is a ConfigError naming file, section and key, expected and found; unknown keys warn."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from fuzzgate.config import Config, Overrides, load_config
from fuzzgate.model.errors import ConfigError, ExitCode

Loader = Callable[..., tuple[Config, list[str]]]

STDIO = '[target]\ncommand = "srv"\n'
HTTP = '[target]\nurl = "http://localhost:8000/mcp"\n'

# (file body, the exact one-line message)
BAD_VALUES = [
    # [fuzzgate]
    (
        STDIO + '[fuzzgate]\nbudget = "fast"\n',
        'fuzzgate.toml: [fuzzgate] budget: expected a duration like "60s" or "2m", got "fast"',
    ),
    (
        STDIO + '[fuzzgate]\nbudget = "0s"\n',
        'fuzzgate.toml: [fuzzgate] budget: expected a duration of at least 1ms, got "0s"',
    ),
    (
        STDIO + "[fuzzgate]\nbudget = true\n",
        'fuzzgate.toml: [fuzzgate] budget: expected a duration like "60s" or "2m", got true',
    ),
    (
        STDIO + "[fuzzgate]\nbudget = -5\n",
        'fuzzgate.toml: [fuzzgate] budget: expected a duration like "60s" or "2m", got -5',
    ),
    (
        STDIO + "[fuzzgate]\ncases = 0\n",
        "fuzzgate.toml: [fuzzgate] cases: expected an integer of at least 1, got 0",
    ),
    (
        STDIO + '[fuzzgate]\ncases = "100"\n',
        'fuzzgate.toml: [fuzzgate] cases: expected an integer of at least 1, got "100"',
    ),
    (
        STDIO + "[fuzzgate]\ncases = 1.5\n",
        "fuzzgate.toml: [fuzzgate] cases: expected an integer of at least 1, got 1.5",
    ),
    (
        STDIO + '[fuzzgate]\nmode = "chaos"\n',
        'fuzzgate.toml: [fuzzgate] mode: expected one of "conform", "adversarial", "mixed", got "chaos"',
    ),
    (
        STDIO + "[fuzzgate]\nconcurrency = 65\n",
        "fuzzgate.toml: [fuzzgate] concurrency: expected an integer from 1 to 64, got 65",
    ),
    (
        STDIO + '[fuzzgate]\ninclude = "search_*"\n',
        'fuzzgate.toml: [fuzzgate] include: expected a list of strings (a glob pattern each), got "search_*"',
    ),
    (
        STDIO + '[fuzzgate]\nexclude = ["ok", 3]\n',
        "fuzzgate.toml: [fuzzgate] exclude[1]: expected a glob pattern, got 3",
    ),
    (
        STDIO + "[fuzzgate]\nmax_tools = 0\n",
        "fuzzgate.toml: [fuzzgate] max_tools: expected an integer of at least 1, got 0",
    ),
    (
        STDIO + "[fuzzgate]\nseed = -1\n",
        'fuzzgate.toml: [fuzzgate] seed: expected a non-negative integer or a hex string like "0x2a", got -1',
    ),
    (
        STDIO + '[fuzzgate]\nseed = "abc"\n',
        'fuzzgate.toml: [fuzzgate] seed: expected a non-negative integer or a hex string like "0x2a", got "abc"',
    ),
    (
        STDIO + '[fuzzgate]\nfail_on = "severe"\n',
        'fuzzgate.toml: [fuzzgate] fail_on: expected one of "low", "medium", "high", "critical", got "severe"',
    ),
    (STDIO + '[fuzzgate]\nout = ""\n', 'fuzzgate.toml: [fuzzgate] out: expected a non-empty string, got ""'),
    (STDIO + "[fuzzgate]\nbaseline = 5\n", "fuzzgate.toml: [fuzzgate] baseline: expected a string, got 5"),
    (
        STDIO + '[fuzzgate]\nslow = "2 seconds"\n',
        'fuzzgate.toml: [fuzzgate] slow: expected a duration like "60s" or "2m", got "2 seconds"',
    ),
    (
        STDIO + '[fuzzgate]\nmax_string = "64 kilobytes"\n',
        'fuzzgate.toml: [fuzzgate] max_string: expected a size like "64KiB" or 65536, got "64 kilobytes"',
    ),
    (
        STDIO + "[fuzzgate]\nmax_string = 0\n",
        "fuzzgate.toml: [fuzzgate] max_string: expected a size of at least 1 byte, got 0",
    ),
    (
        STDIO + '[fuzzgate]\nmax_string = "1025KiB"\n',
        'fuzzgate.toml: [fuzzgate] max_string: expected a size of at most 1MiB, got "1025KiB"',
    ),
    (
        STDIO + "[fuzzgate]\nreplays = 21\n",
        "fuzzgate.toml: [fuzzgate] replays: expected an integer from 0 to 20, got 21",
    ),
    (
        STDIO + "[fuzzgate]\nshrink_tries = 101\n",
        "fuzzgate.toml: [fuzzgate] shrink_tries: expected an integer from 0 to 100, got 101",
    ),
    (
        STDIO + "[fuzzgate]\ncoverage_sampling = 0\n",
        "fuzzgate.toml: [fuzzgate] coverage_sampling: expected an integer from 1 to 1024, got 0",
    ),
    (
        STDIO + '[fuzzgate]\ncoverage_sampling = "often"\n',
        'fuzzgate.toml: [fuzzgate] coverage_sampling: expected an integer from 1 to 1024, got "often"',
    ),
    (
        STDIO + '[fuzzgate]\nprotocol = "2025-06-18"\n',
        'fuzzgate.toml: [fuzzgate] protocol: expected one of "auto", "legacy", "2026-07-28", got "2025-06-18"',
    ),
    (
        STDIO + "[fuzzgate]\nprotocol = 2026-07-28\n",
        'fuzzgate.toml: [fuzzgate] protocol: expected one of "auto", "legacy", "2026-07-28", got a date or time',
    ),
    (
        STDIO + "[fuzzgate]\nstartup_timeout = []\n",
        'fuzzgate.toml: [fuzzgate] startup_timeout: expected a duration like "60s" or "2m", got a list',
    ),
    (
        STDIO + '[fuzzgate]\nname = " "\n',
        'fuzzgate.toml: [fuzzgate] name: expected a non-empty string, got " "',
    ),
    ('fuzzgate = "fast"\n' + STDIO, 'fuzzgate.toml: [fuzzgate]: expected a table, got "fast"'),
    # [target]
    (
        '[target]\nkind = "grpc"\ncommand = "srv"\n',
        'fuzzgate.toml: [target] kind: expected one of "stdio", "http", got "grpc"',
    ),
    ("[target]\ncommand = 5\n", "fuzzgate.toml: [target] command: expected a string, got 5"),
    ('[target]\ncommand = ""\n', 'fuzzgate.toml: [target] command: expected a non-empty string, got ""'),
    (
        STDIO + 'args = "server.py"\n',
        'fuzzgate.toml: [target] args: expected a list of strings (a string each), got "server.py"',
    ),
    (STDIO + "args = [1]\n", "fuzzgate.toml: [target] args[0]: expected a string, got 1"),
    (STDIO + "cwd = 3\n", "fuzzgate.toml: [target] cwd: expected a string, got 3"),
    (
        STDIO + "timeout_ms = 0\n",
        "fuzzgate.toml: [target] timeout_ms: expected an integer of at least 1, got 0",
    ),
    (
        STDIO + 'timeout_ms = "5s"\n',
        'fuzzgate.toml: [target] timeout_ms: expected an integer of at least 1, got "5s"',
    ),
    (
        STDIO + 'env = { "A=B" = "x" }\n',
        "fuzzgate.toml: [target.env]: expected environment variable names without '=' or NUL, got \"A=B\"",
    ),
    (
        '[target]\nkind = "http"\nurl = "ftp://files.example"\n',
        'fuzzgate.toml: [target] url: expected an http:// or https:// URL, got a URL with scheme "ftp"',
    ),
    (
        '[target]\nurl = "localhost:8000/mcp"\n',
        "fuzzgate.toml: [target] url: expected an http:// or https:// URL, got a string without http:// or https://",
    ),
    (
        '[target]\nurl = "http:///mcp"\n',
        "fuzzgate.toml: [target] url: expected an http:// or https:// URL, got a URL without a host",
    ),
    (
        '[target]\nurl = "http://[::1"\n',
        "fuzzgate.toml: [target] url: expected an http:// or https:// URL, got one that does not parse "
        "(Invalid IPv6 URL)",
    ),
    (
        '[target]\nurl = "http://127.0.0.1:99999/mcp"\n',
        "fuzzgate.toml: [target] url: expected an http:// or https:// URL, got one that does not parse "
        "(Port out of range 0-65535)",
    ),
    (
        HTTP + '[target.headers]\n"Bad Name" = "x"\n',
        'fuzzgate.toml: [target.headers]: expected header names made of letters, digits and -, got "Bad Name"',
    ),
    (
        '[target]\ncommand = "srv"\nurl = "http://h/mcp"\n',
        "fuzzgate.toml: [target] kind: missing, required when both command and url are set",
    ),
    ('[target]\nkind = "stdio"\n', 'fuzzgate.toml: [target] command: missing, required when kind = "stdio"'),
    (
        '[target]\nkind = "http"\ncommand = "x"\n',
        'fuzzgate.toml: [target] url: missing, required when kind = "http"',
    ),
    (
        "[target]\ntimeout_ms = 5\n",
        "fuzzgate.toml: [target] command: missing, a target needs command (stdio) or url (http)",
    ),
    ('[fuzzgate]\nbudget = "1m"\n', "fuzzgate.toml: [target]: missing section, a target is required"),
    ('target = "python server.py"\n', 'fuzzgate.toml: [target]: expected a table, got "python server.py"'),
    # wallfacer's other sections
    (STDIO + "[output]\ncorpus_dir = 1\n", "fuzzgate.toml: [output] corpus_dir: expected a string, got 1"),
    (
        STDIO + "[output]\nlock_timeout_ms = -1\n",
        "fuzzgate.toml: [output] lock_timeout_ms: expected an integer of at least 0, got -1",
    ),
    (
        STDIO + '[severity]\ncrash = "fatal"\n',
        'fuzzgate.toml: [severity] crash: expected one of "low", "medium", "high", "critical", got "fatal"',
    ),
    (
        STDIO + "[severity]\nstate_leak = 3\n",
        'fuzzgate.toml: [severity] state_leak: expected one of "low", "medium", "high", "critical", got 3',
    ),
    (
        STDIO + '[destructive]\npatterns = ["[unclosed"]\n',
        'fuzzgate.toml: [destructive] patterns[0]: expected a regular expression, got "[unclosed" '
        "(unterminated character set at position 0)",
    ),
    (
        STDIO + '[destructive]\nreplace_defaults = "yes"\n',
        'fuzzgate.toml: [destructive] replace_defaults: expected true or false, got "yes"',
    ),
    (
        STDIO + '[allow_destructive]\ntools = "reset"\n',
        'fuzzgate.toml: [allow_destructive] tools: expected a list of strings (a regular expression each), got "reset"',
    ),
    (STDIO + "[packs]\nauth = 5\n", "fuzzgate.toml: [packs.auth]: expected a table, got an integer"),
    (
        STDIO + "[packs.auth]\nretries = 5\n",
        "fuzzgate.toml: [packs.auth] retries: expected a string, got an integer",
    ),
    ('packs = "auth"\n' + STDIO, 'fuzzgate.toml: [packs]: expected a table, got "auth"'),
]


@pytest.mark.parametrize(("text", "message"), BAD_VALUES)
def test_bad_value_is_named_precisely(load: Loader, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load(text)
    assert caught.value.message == message
    assert "\n" not in caught.value.message
    assert caught.value.exit_code is ExitCode.USAGE


# The same mistakes in YAML get the same messages, naming the YAML file.
BAD_YAML = [
    (
        "target: {command: srv}\nfuzzgate: {budget: fast}\n",
        "fuzzgate.yaml: [fuzzgate] budget: expected a duration",
    ),
    (
        "target: {command: srv}\nfuzzgate: {include: search_*}\n",
        "fuzzgate.yaml: [fuzzgate] include: expected a list",
    ),
    ("target: {command: srv, args: server.py}\n", "fuzzgate.yaml: [target] args: expected a list of strings"),
    (
        "target: {command: srv}\nfuzzgate: {protocol: 2026-07-28}\n",
        "fuzzgate.yaml: [fuzzgate] protocol: expected one",
    ),
    ("target: {command: srv}\nfuzzgate: []\n", "fuzzgate.yaml: [fuzzgate]: expected a table, got a list"),
    (
        "target: {command: srv, env: {PORT: 8080}}\n",
        "fuzzgate.yaml: [target.env] PORT: expected a string, got an",
    ),
    ("- target\n", "fuzzgate.yaml: expected a mapping of sections"),
    ("target: {command: srv}\n1: x\n", None),
    (
        "target:\n  command: srv\n  7: x\n",
        "fuzzgate.yaml: [target]: expected a table with string keys, got 7",
    ),
]


@pytest.mark.parametrize(("text", "start"), BAD_YAML)
def test_yaml_mistakes(load: Loader, text: str, start: str | None) -> None:
    if start is None:  # a non-string top-level key is only an unknown section
        _, warnings = load(text, "fuzzgate.yaml")
        assert warnings == ["fuzzgate.yaml: 1: unknown top-level key, ignored"]
        return
    with pytest.raises(ConfigError) as caught:
        load(text, "fuzzgate.yaml")
    assert caught.value.message.startswith(start)


def test_unquoted_date_gets_a_quoting_hint(load: Loader) -> None:
    with pytest.raises(ConfigError) as caught:
        load(STDIO + "[fuzzgate]\nprotocol = 2026-07-28\n")
    assert caught.value.hint == 'quote it: "2026-07-28"'


def test_number_for_a_string_gets_a_quoting_hint(load: Loader) -> None:
    with pytest.raises(ConfigError) as caught:
        load("target:\n  command: srv\n  env: {PORT: 9999}\n", "fuzzgate.yaml")
    assert caught.value.hint is not None and "quote it" in caught.value.hint


@pytest.mark.parametrize(
    ("text", "name", "message"),
    [
        (
            '[target]\ncommand = "srv"\nbudget = \n',
            "fuzzgate.toml",
            "fuzzgate.toml: line 3, column 10: invalid TOML: Invalid value",
        ),
        ('[target\ncommand = "x"\n', "fuzzgate.toml", "fuzzgate.toml: line 1, column 8: invalid TOML: "),
        ('[target]\ncommand = "x\n', "fuzzgate.toml", "fuzzgate.toml: line 2, column "),
        ('[target]\ncommand = """x\n', "fuzzgate.toml", "fuzzgate.toml: end of file: invalid TOML: "),
        (
            "target:\n  command: [srv\nfuzzgate: {}\n",
            "fuzzgate.yaml",
            "fuzzgate.yaml: line 3, column 9: invalid YAML: ",
        ),
        (
            "target:\n command: x\n  args: []\n",
            "fuzzgate.yml",
            "fuzzgate.yml: line 3, column 7: invalid YAML: ",
        ),
    ],
)
def test_syntax_errors_name_file_line_and_column(load: Loader, text: str, name: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load(text, name)
    assert caught.value.message.startswith(message)
    assert "\n" not in caught.value.message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "target:\n  command: a\n  command: b\n",
            "fuzzgate.yaml: line 3, column 3: key 'command' is set twice in one mapping (first at line 2)",
        ),
        (
            "target:\n  command: a\n  env:\n    - x\n    - {A: 1, A: 2}\n",
            "fuzzgate.yaml: line 5, column 14: key 'A' is set twice in one mapping (first at line 5)",
        ),
    ],
)
def test_a_yaml_key_set_twice_is_an_error(load: Loader, text: str, message: str) -> None:
    # YAML's loader kept the last one silently (TOML refuses it): the first setting went unused.
    with pytest.raises(ConfigError) as caught:
        load(text, "fuzzgate.yaml")
    assert caught.value.message == message


def test_a_yaml_merge_key_is_not_a_key_set_twice(load: Loader) -> None:
    text = "defaults: &d {command: srv, args: [a]}\ntarget:\n  <<: *d\n  args: [b]\n"
    # The mapping's own `args` overrides the merged one, as YAML means it: no key is set twice.
    assert load(text, "fuzzgate.yaml")[0].target.args == ("b",)


def test_yaml_syntax_error_does_not_quote_the_offending_line(load: Loader) -> None:
    with pytest.raises(ConfigError) as caught:
        load("target:\n  command: srv\n  env: {TOKEN: hunter2\n", "fuzzgate.yaml", environ={})
    assert "hunter2" not in caught.value.message


def test_non_utf8_file(tmp_path: Path) -> None:
    path = tmp_path / "fuzzgate.toml"
    path.write_bytes(b"[target]\ncommand = '\xff'\n")
    with pytest.raises(ConfigError, match=r"^fuzzgate\.toml: not UTF-8 text \(invalid byte at offset 20\)$"):
        load_config(path, Overrides(), {}, warn=pytest.fail)


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^fuzzgate\.toml: cannot read the configuration file"):
        load_config(tmp_path / "fuzzgate.toml", Overrides(), {}, warn=pytest.fail)


def test_misspelled_target_section_is_an_error_with_a_suggestion(load: Loader) -> None:
    with pytest.raises(ConfigError) as caught:
        load('[targte]\ncommand = "srv"\n')
    assert caught.value.message == "fuzzgate.toml: [target]: missing section, a target is required"
    assert caught.value.hint == "did you mean 'target'? [targte] is not a section fuzzgate knows"


@pytest.mark.parametrize(
    ("text", "wanted", "found"),
    [
        ('[target]\ncomand = "srv"\n', "command", "comand"),
        ('[target]\nkind = "stdio"\ncmd = "srv"\n', "command", "cmd"),
        ('[target]\nkind = "http"\nurl_ = "http://h/mcp"\n', "url", "url_"),
        ('[target]\nuri = "http://h/mcp"\n', "url", "uri"),
    ],
)
def test_misspelled_required_key_is_an_error_with_a_suggestion(
    load: Loader, text: str, wanted: str, found: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load(text)
    assert caught.value.message.startswith(f"fuzzgate.toml: [target] {wanted}: missing")
    assert caught.value.hint == f"did you mean '{wanted}'? '{found}' is not a [target] key"


@pytest.mark.parametrize(
    ("text", "warning"),
    [
        (
            STDIO + '[fuzzgate]\nbudgte = "10s"\n',
            "fuzzgate.toml: [fuzzgate] budgte: unknown key, ignored (did you mean 'budget'?)",
        ),
        (
            STDIO + "[fuzzgate]\nfailon = 'low'\n",
            "fuzzgate.toml: [fuzzgate] failon: unknown key, ignored (did you mean 'fail_on'?)",
        ),
        (
            STDIO + "[fuzzgate]\nfrobnicate = 1\n",
            "fuzzgate.toml: [fuzzgate] frobnicate: unknown key, ignored",
        ),
        (
            STDIO + "[fuzgate]\nreplays = 1\n",
            "fuzzgate.toml: [fuzgate]: unknown section, ignored (did you mean 'fuzzgate'?)",
        ),
        (
            'budget = "10s"\n' + STDIO,
            "fuzzgate.toml: budget: unknown top-level key, ignored ('budget' belongs in [fuzzgate])",
        ),
        (
            STDIO + 'budget = "10s"\n',
            "fuzzgate.toml: [target] budget: unknown key, ignored ('budget' belongs in [fuzzgate])",
        ),
        (
            STDIO + '[fuzzgate]\ncorpus_dir = "c"\n',
            "fuzzgate.toml: [fuzzgate] corpus_dir: unknown key, ignored ('corpus_dir' belongs in [output])",
        ),
        (
            STDIO + '[severity]\ncrsh = "low"\n',
            "fuzzgate.toml: [severity] crsh: unknown finding kind, ignored (did you mean 'crash'?)",
        ),
        (
            STDIO + '[output]\ncorpus = "c"\n',
            "fuzzgate.toml: [output] corpus: unknown key, ignored ('corpus' belongs in [fuzzgate])",
        ),
        (
            '[target]\nkind = "stdio"\ncommand = "srv"\nurl = "http://h/mcp"\n',
            "fuzzgate.toml: [target] url: ignored, it applies only to http targets",
        ),
        (
            HTTP + 'env = { A = "b" }\n',
            "fuzzgate.toml: [target] env: ignored, it applies only to a server fuzzgate starts"
            " (a stdio target, or an http target with a command)",
        ),
        (
            "target:\n  command: srv\nfuzzgate:\n  replay: 2\n",
            "fuzzgate.toml: [fuzzgate] replay: unknown key, ignored (did you mean 'replays'?)",
        ),
    ],
)
def test_unknown_keys_warn_once_with_a_suggestion(load: Loader, text: str, warning: str) -> None:
    if text.startswith("target:"):
        config, warnings = load(text, "fuzzgate.toml".replace("toml", "yaml"))
        warning = warning.replace("fuzzgate.toml", "fuzzgate.yaml")
    else:
        config, warnings = load(text)
    assert warnings == [warning]
    assert config.target.command or config.target.url


def test_warnings_are_not_emitted_when_loading_fails(load: Loader) -> None:
    with pytest.raises(ConfigError):
        load(STDIO + '[fuzzgate]\nbudgte = "1s"\nbudget = "never"\n')


SECRET = "hunter2-s3cr3t"


@pytest.mark.parametrize(
    ("text", "name", "overrides"),
    [
        (STDIO + f'env = "{SECRET}"\n', "fuzzgate.toml", None),
        (STDIO + "env = { TOKEN = 20250101 }\n", "fuzzgate.toml", None),
        (HTTP + f'headers = "{SECRET}"\n', "fuzzgate.toml", None),
        (HTTP + f'[target.headers]\nAuthorization = "Bearer {SECRET}\\nX: y"\n', "fuzzgate.toml", None),
        (HTTP + "[target.headers]\nAuthorization = ['x']\n", "fuzzgate.toml", None),
        (STDIO + f'[packs]\nauth = "{SECRET}"\n', "fuzzgate.toml", None),
        (STDIO + f'[fuzzgate]\nsecret_patterns = ["({SECRET}"]\n', "fuzzgate.toml", None),
        ("target:\n  url: http://h/mcp\n  headers: {Authorization: 20250101}\n", "fuzzgate.yaml", None),
        (f'[target]\nurl = "ftp://user:{SECRET}@h/x"\n', "fuzzgate.toml", None),
        (HTTP, "fuzzgate.toml", Overrides(headers=(f"Authorization {SECRET}",))),
        (HTTP, "fuzzgate.toml", Overrides(url=f"h/mcp?token={SECRET}")),
        (STDIO, "fuzzgate.toml", Overrides(secret_patterns=(f"[{SECRET}",))),
    ],
)
def test_env_header_and_secret_values_never_reach_a_message(
    load: Loader, text: str, name: str, overrides: Overrides | None
) -> None:
    with pytest.raises(ConfigError) as caught:
        load(text, name, overrides=overrides)
    shown = f"{caught.value.message} {caught.value.hint} {caught.value.detail}"
    assert SECRET not in shown
    assert "20250101" not in shown


@pytest.mark.parametrize("secret", ["hunter2-hunter2", "s3cr3t-" + "x" * 60])
def test_a_wrong_value_from_the_environment_is_never_quoted(load: Loader, secret: str) -> None:
    # A value expanded from ${VAR} may be a token pasted into the wrong key: the message names the
    # key and what was expected, never the value or the first characters of it.
    with pytest.raises(ConfigError) as raised:
        load(STDIO + '[fuzzgate]\nbudget = "${API_TOKEN}"\n', environ={"API_TOKEN": secret})
    message = raised.value.message
    assert "[fuzzgate] budget" in message and "[REDACTED]" in message
    assert not any(secret[i : i + 6] in message for i in range(len(secret) - 5))


def test_shrink_tries_is_read_and_defaults_to_24(load: Loader) -> None:
    assert load(STDIO)[0].shrink_tries == 24
    assert load(STDIO + "[fuzzgate]\nshrink_tries = 0\n")[0].shrink_tries == 0


def test_coverage_sampling_is_read_and_defaults_to_one_in_eight(load: Loader) -> None:
    assert load(STDIO)[0].coverage_sampling == 8
    assert load(STDIO + "[fuzzgate]\ncoverage_sampling = 1\n")[0].coverage_sampling == 1
