"""The parts of a secret: a known secret's runs of characters wherever they stand, a header's
credentials without its scheme, a URL's Basic form and token parameters, an option's value on the
command line, a token cut at the end of an over-long line; and the places a secret could reach
unredacted (a target's name, a trace's origin, the store's statistics)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from fuzzgate.check.secrets import (
    FRAGMENT_LEN,
    REDACTED,
    Redactor,
    argument_secrets,
    header_secrets,
    redactor_for,
    url_secrets,
)
from fuzzgate.config.model import Config, TargetConfig, TargetKind
from fuzzgate.config.views import ServerSettings
from fuzzgate.engine.events import CallFinished
from fuzzgate.fleet.store_sync import StatsRecorder
from fuzzgate.model.outcome import CallOutcome, OutcomeStatus
from fuzzgate.report.trace import TraceWriter
from fuzzgate.store.records import Environment

SECRET = "sk-live-RT0123456789abcdefSECRET"


def _finished(tool: str, arguments: dict[str, object], origin: str = "") -> CallFinished:
    outcome = CallOutcome(OutcomeStatus.OK, duration_s=0.01, text="ok")
    return CallFinished(tool, 0, arguments, True, origin, outcome, 0, 1, 0, 0.1)


def _stdio(**fields: object) -> ServerSettings:
    return ServerSettings.of(Config(target=TargetConfig(kind=TargetKind.STDIO, command="python3", **fields)))  # type: ignore[arg-type]


def test_a_run_of_a_known_secret_is_redacted_as_far_as_it_goes() -> None:
    redact = Redactor((), strong=[SECRET])
    # A mutation's half, a frame label's tail, a piece from the middle: each run taken whole.
    assert redact.text(f"key={SECRET[:16]};") == f"key={REDACTED};"
    assert redact.text(f"{SECRET[-18:]}:handler") == f"{REDACTED}:handler"
    assert redact.text(f"<{SECRET[5:20]}>") == f"<{REDACTED}>"
    # Shorter runs are in every other text: they stay.
    assert redact.text(f"x{SECRET[:FRAGMENT_LEN - 1]}x") == f"x{SECRET[:FRAGMENT_LEN - 1]}x"


@given(st.integers(0, len(SECRET) - FRAGMENT_LEN), st.integers(FRAGMENT_LEN, len(SECRET)), st.text("., ", max_size=5))
def test_no_run_of_eight_characters_of_a_strong_secret_survives(start: int, size: int, around: str) -> None:
    piece = SECRET[start : start + size]
    out = Redactor((), strong=[SECRET]).text(around + piece + around)
    assert not any(SECRET[i : i + FRAGMENT_LEN] in out for i in range(len(SECRET) - FRAGMENT_LEN + 1))


HIDDEN = ["\x1b[0m", "\x1b[38;5;196m", "\x1b]0;title\x07", "\x1b]8;;\x1b\\", "\u200b", "\ufeff", "\x00", "\u202e"]
"""What a terminal does not show, that a server could write inside a secret."""
TOKEN = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0" + "a" * 16


@given(st.sampled_from([SECRET, TOKEN]), st.data())
def test_a_secret_split_by_what_a_terminal_hides_is_redacted(secret: str, data: st.DataObject) -> None:
    """A known value (not a strong one: no fragments) and a pattern's token, each with hidden
    characters at one or two places: what the text reads as holds no secret."""
    cuts = sorted(data.draw(st.lists(st.integers(1, len(secret) - 1), min_size=1, max_size=2, unique=True)))
    pieces = [secret[a:b] for a, b in zip([0, *cuts], [*cuts, len(secret)], strict=True)]
    split = "".join(piece + data.draw(st.sampled_from(HIDDEN)) for piece in pieces[:-1]) + pieces[-1]
    out = Redactor([SECRET]).text(f"token: {split} (end)")
    shown = out
    for hidden in HIDDEN:
        shown = shown.replace(hidden, "")
    assert secret not in shown and REDACTED in out


def test_a_text_whose_hidden_characters_split_no_secret_keeps_them() -> None:
    coloured = "\x1b[31mValueError\x1b[0m: bad input"
    assert Redactor([SECRET]).text(coloured) == coloured
    assert Redactor([SECRET]).text(f"{coloured} {SECRET}") == f"{coloured} {REDACTED}"


def test_only_values_known_to_be_secrets_are_redacted_in_part() -> None:
    settings = _stdio(env={"API_KEY": SECRET, "DATA_DIR": "/srv/data/projects", "MODE": "production-eu-1"})
    redact = redactor_for(settings, {})
    assert redact.text(SECRET[:12]) == REDACTED
    # Whole values are still redacted; a path's or a setting's pieces are not.
    assert redact.text("/srv/data/projects") == REDACTED
    assert redact.text("/srv/data/projects2/x.py") != REDACTED
    assert redact.text("/srv/data/other") == "/srv/data/other"
    assert redact.text("production-eu-2") == "production-eu-2"


def test_a_cut_at_the_end_of_an_over_long_line_takes_the_token_it_fell_in() -> None:
    redact = Redactor(())
    token = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0" + "a" * 16
    assert redact.open_end("x " + token[:24], cut=True) == "x " + REDACTED
    # A last line that the server itself ended is not a cut.
    assert redact.open_end("server listening") == "server listening"


def test_a_headers_credentials_are_secrets_without_its_scheme() -> None:
    assert header_secrets(f"Bearer {SECRET}") == [f"Bearer {SECRET}", SECRET]
    basic = base64.b64encode(b"bot:hunter2-pass").decode()
    assert header_secrets(f"Basic {basic}") == [f"Basic {basic}", basic, "bot:hunter2-pass", "hunter2-pass"]
    headers = {"Authorization": f"Bearer {SECRET}"}
    settings = ServerSettings.of(Config(target=TargetConfig(kind=TargetKind.HTTP, url="http://h/mcp", headers=headers)))
    assert redactor_for(settings, {}).text(f"rejected token {SECRET} (Bearer scheme)") == (
        f"rejected token {REDACTED} (Bearer scheme)"
    )


def test_a_url_password_is_a_secret_in_its_basic_form_and_a_token_parameter_too() -> None:
    found = url_secrets("http://user:pw-0123456789@h:1/mcp?api_key=abcdef0123456&page=2")
    assert "pw-0123456789" in found
    assert base64.b64encode(b"user:pw-0123456789").decode() in found
    assert "abcdef0123456" in found
    assert "2" not in found


def test_an_options_value_named_like_a_secret_is_a_secret() -> None:
    args = ["server.py", "--token", "tok-ARG-9f8e7d6c5b4a3210zz", "--api-key=k-0123456789", "--root", "/srv"]
    args += ["DB_PASSWORD=pw-abcdefgh1", "--url", "https://u:p4ssw0rd-x@db/x"]
    basic = [base64.b64encode(b"u:p4ssw0rd-x").decode(), base64.urlsafe_b64encode(b"u:p4ssw0rd-x").decode()]
    named = ["tok-ARG-9f8e7d6c5b4a3210zz", "k-0123456789", "pw-abcdefgh1", "p4ssw0rd-x"]
    assert argument_secrets(args) == [*named, *basic]
    redact = redactor_for(_stdio(args=tuple(args)), {})
    assert redact.text("invalid token tok-ARG-9f8e7d6c") == f"invalid token {REDACTED}"
    assert redact.text("root is /srv") == "root is /srv"


def test_a_targets_name_holds_no_part_of_its_urls_credentials_or_query() -> None:
    def name(url: str) -> str:
        return TargetConfig(kind=TargetKind.HTTP, url=url).display_name

    assert name(f"http://user:{SECRET}@127.0.0.1:18731/mcp") == "127.0.0.1:18731"
    assert name(f"http://127.0.0.1:18732?api_key={SECRET}") == "127.0.0.1:18732"
    assert name("https://mcp.example/mcp") == "mcp.example"
    assert name("http://[::1]:8080/mcp") == "[::1]:8080"


def test_the_trace_redacts_a_cases_origin(tmp_path: Path) -> None:
    redact = Redactor((), strong=[SECRET])
    trace = TraceWriter(tmp_path / "trace.jsonl", redact)
    trace(_finished("pick", {"mode": SECRET[:12]}, f'enum:/properties/mode="{SECRET[:12]}..."(len 32)'))
    trace.close()
    line = (tmp_path / "trace.jsonl").read_text()
    assert SECRET[:FRAGMENT_LEN] not in line
    assert json.loads(line)["origin"].startswith("enum:/properties/mode=")


def test_the_stores_statistics_name_tools_redacted() -> None:
    recorder = StatsRecorder("w1", "t")
    recorder(_finished(f"get_{SECRET}", {}))
    snapshot = recorder.snapshot(Environment.detect(server=None, cwd=Path.cwd()), redact=Redactor([SECRET]))
    assert list(snapshot.tools) == [f"get_{REDACTED}"]


def test_a_frame_label_takes_its_file_name_from_the_path_redacted_whole() -> None:
    # An env value that is a path (whole-value only) named the raising frame's file: its last
    # characters went into the finding's stored signature, the baseline and the store.
    from fuzzgate.check.traceback import parse_traces, root_cause

    plugin = "/opt/acme/plugin_7f3a9c2b1e4d5a6b.py"
    stderr = (
        "Traceback (most recent call last):\n"
        f'  File "{plugin}", line 3, in run_plugin\n'
        "    raise ValueError('bad')\n"
        "ValueError: bad\n"
    )
    trace = root_cause(parse_traces(stderr))
    assert trace is not None
    redact = redactor_for(_stdio(env={"PLUGIN_PATH": plugin}), {})
    assert trace.signature() == ("plugin_7f3a9c2b1e4d5a6b.py:run_plugin",)
    assert trace.signature(redact.text) == (f"{REDACTED}:run_plugin",)
    assert trace.signature(redactor_for(_stdio(), {}).text) == ("plugin_7f3a9c2b1e4d5a6b.py:run_plugin",)
