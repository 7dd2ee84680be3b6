"""The Redactor: known values in their common encodings, cuts that never leave a piece behind."""

from __future__ import annotations

import base64
import json
import re
import urllib.parse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzgate.check.secrets import REDACTED, Redactor, encodings, redactor_for
from fuzzgate.config.model import Config, TargetConfig, TargetKind
from fuzzgate.config.views import ServerSettings

SECRET = 'hunter2/Päss+wörd"\\%x'


def test_every_common_encoding_of_a_value_is_redacted() -> None:
    redact = Redactor([SECRET])
    raw = SECRET.encode()
    written = [
        SECRET,
        json.dumps(SECRET)[1:-1],
        json.dumps(SECRET, ensure_ascii=False)[1:-1],
        urllib.parse.quote(SECRET),
        urllib.parse.quote(SECRET, safe=""),
        urllib.parse.quote_plus(SECRET),
        re.sub("%[0-9A-F]{2}", lambda m: m.group(0).lower(), urllib.parse.quote(SECRET, safe="")),
        base64.b64encode(raw).decode(),
        base64.b64encode(raw).decode().rstrip("="),
        base64.urlsafe_b64encode(raw).decode(),
        base64.urlsafe_b64encode(raw).decode().rstrip("="),
        repr(SECRET)[1:-1],
    ]
    for form in written:
        assert redact.text(f"token={form};") == f"token={REDACTED};", form


def test_short_values_are_not_redacted_by_value() -> None:
    assert Redactor(["abcde", "true"]).text("abcde is true") == "abcde is true"
    assert "abcdef" not in Redactor(["abcdef"]).text("x abcdef y")


def test_a_private_key_goes_with_its_header() -> None:
    key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----"
    assert Redactor([]).text(f"a\n{key}\nb") == f"a\n{REDACTED}\nb"
    assert Redactor([]).text(key[:60]) == REDACTED


@given(st.integers(0, 40), st.integers(1, 60))
def test_a_cut_never_leaves_part_of_a_secret(before: int, limit: int) -> None:
    secret = "Zq8vW3xKp0Lm5Rt7"
    cut = Redactor([secret]).cut("." * before + secret + "...", limit, "…")
    assert not any(secret[i : i + 4] in cut for i in range(len(secret) - 3))
    assert len(cut.rstrip("…")) <= limit
    # A cut never splits the marker either: it is whole or absent.
    assert REDACTED in cut or "[" not in cut


def test_an_open_end_that_could_begin_a_secret_is_redacted() -> None:
    redact = Redactor(["Zq8vW3xKp0Lm5Rt7"])
    assert redact.open_end("log: Zq8vW3x") == f"log: {REDACTED}"
    assert redact.open_end("log: Zq8vW3xKp0Lm5Rt7 and Z") == f"log: {REDACTED} and {REDACTED}"
    assert redact.open_end("log: nothing") == "log: nothing"
    assert redact.open_end("b64: " + base64.b64encode(b"Zq8vW3xKp0Lm5Rt7").decode()[:9]) == f"b64: {REDACTED}"


def test_the_run_redactor_knows_env_header_canary_and_url_password() -> None:
    config = Config(
        target=TargetConfig(
            kind=TargetKind.HTTP,
            url="https://bot:s%40fe-pass@mcp.example/mcp",
            headers={"Authorization": "Bearer tok-123456"},
            env={"API_KEY": "env-value-1"},
        ),
        secret_patterns=(r"corp-[0-9]{6}",),
    )
    redact = redactor_for(ServerSettings.of(config), {"FUZZGATE_CANARY_TOKEN": "fzgcanary0123456789"})
    text = "s%40fe-pass s@fe-pass Bearer tok-123456 env-value-1 fzgcanary0123456789 corp-123456"
    assert redact.text(text) == " ".join([REDACTED] * 5) + f" {REDACTED}"


@pytest.mark.parametrize(
    "store",
    [
        "redis://db:6379/0?password=st0re-pass%21",
        "redis://:st0re-pass!@db:6379/0",
        "rediss://user:st0re-pass%21@db/0",
        "rediss://db/0?ssl_password=st0re-pass!&ssl_cert_reqs=none",
        "unix:///run/redis.sock?db=0&password=st0re-pass!",
    ],
)
def test_the_store_password_is_redacted_in_every_form_a_url_holds_it(store: str) -> None:
    config = Config(target=TargetConfig(kind=TargetKind.STDIO, command="server"), store=store)
    redact = redactor_for(ServerSettings.of(config), {})
    assert redact.text("auth st0re-pass! st0re-pass%21") == f"auth {REDACTED} {REDACTED}"
    assert redact.text("user db 6379 ssl_cert_reqs none") == "user db 6379 ssl_cert_reqs none"


def test_values_expanded_from_the_environment_are_redacted() -> None:
    config = Config(target=TargetConfig(kind=TargetKind.STDIO, command="server"), expanded=("tok-in-the-args",))
    assert redactor_for(ServerSettings.of(config), {}).text("--token=tok-in-the-args") == f"--token={REDACTED}"


def test_encodings_include_the_value_itself() -> None:
    assert SECRET in encodings(SECRET)
