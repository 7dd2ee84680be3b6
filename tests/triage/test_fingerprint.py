"""Fingerprint schemes: the registry, chained upgrades, and rebuilding format-1 signatures."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzgate.model.findings import Finding, Kind, Repro, Severity, Surface
from fuzzgate.triage import fingerprint as fp

FIXTURE = Path(__file__).resolve().parents[1] / "e2e" / "fixtures" / "baseline-format1"


def _upper(kind: Kind, signature: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(part.upper() for part in signature)


def _refuse_rpc(kind: Kind, signature: tuple[str, ...]) -> tuple[str, ...] | None:
    return None if signature[:1] in (("rpc",), ("RPC",)) else signature


def test_the_original_scheme_hashes_what_the_released_version_hashed() -> None:
    # The split_bill bug of the format-1 fixture, written by the released fuzzgate.
    signature = ("trace", "buggy_server.py:split_bill")
    original = fp.SCHEMES.get("fuzzgate/1")
    assert original is not None
    assert original.digest(Kind.INTERNAL_ERROR, Surface.TOOL, "split_bill", signature) == "a009ba3b6837a30dc32c"
    assert fp.verifies("fuzzgate/1", Kind.INTERNAL_ERROR, Surface.TOOL, "split_bill", signature, "a009ba3b6837a30dc32c")


def test_a_later_scheme_needs_an_upgrade_and_a_new_name() -> None:
    registry = fp.SchemeRegistry(fp.Scheme("fuzzgate/1"))
    with pytest.raises(ValueError, match="needs an upgrade"):
        registry.register(fp.Scheme("fuzzgate/2"))
    with pytest.raises(ValueError, match="already registered"):
        registry.register(fp.Scheme("fuzzgate/1", upgrade=_upper))
    assert registry.names() == ("fuzzgate/1",)


def test_with_scheme_leaves_the_registry_as_it_was() -> None:
    extended = fp.SCHEMES.with_scheme(fp.Scheme("test/2", upgrade=_upper))
    assert extended.current.name == "test/2"
    assert fp.SCHEMES.current.name == "fuzzgate/2"


def test_upgrades_chain_in_order_and_stop_at_a_refusal() -> None:
    registry = fp.SchemeRegistry(
        fp.Scheme("fuzzgate/1"), fp.Scheme("test/2", upgrade=_upper), fp.Scheme("test/3", upgrade=_refuse_rpc)
    )
    assert registry.upgrade("fuzzgate/1", Kind.CRASH, ("exit", "exit status 1")) == ("EXIT", "EXIT STATUS 1")
    assert registry.upgrade("test/2", Kind.CRASH, ("exit", "x")) == ("exit", "x")
    assert registry.upgrade("test/3", Kind.CRASH, ("exit", "x")) == ("exit", "x")
    assert registry.upgrade("fuzzgate/1", Kind.INTERNAL_ERROR, ("rpc", "0", "boom")) is None
    assert registry.upgrade("unknown/9", Kind.CRASH, ()) is None


def test_rederive_and_in_current_scheme(monkeypatch: pytest.MonkeyPatch) -> None:
    signature = ("exit", "exit status 1")
    old = fp.fingerprint(Kind.CRASH, Surface.TOOL, "t", signature)
    finding = Finding(
        kind=Kind.CRASH, severity=Severity.CRITICAL, surface=Surface.TOOL, name="t", message="died",
        fingerprint=old, repro=Repro(1, 0, {}, "stdio"), signature=signature,
    )  # fmt: skip
    assert fp.in_current_scheme(finding, "fuzzgate/2") is finding
    monkeypatch.setattr(fp, "SCHEMES", fp.SCHEMES.with_scheme(fp.Scheme("test/3", upgrade=_upper)))
    new = fp.Scheme("test/3").digest(Kind.CRASH, Surface.TOOL, "t", ("EXIT", "EXIT STATUS 1"))
    assert fp.rederive("fuzzgate/2", Kind.CRASH, Surface.TOOL, "t", signature) == (new, ("EXIT", "EXIT STATUS 1"))
    assert fp.in_current_scheme(finding, "fuzzgate/2") == replace(
        finding, fingerprint=new, signature=("EXIT", "EXIT STATUS 1")
    )
    # Without a signature nothing can be re-derived: the finding is left as it was.
    assert fp.in_current_scheme(replace(finding, signature=None), "fuzzgate/2").fingerprint == old


@pytest.mark.parametrize("path", sorted(FIXTURE.glob("*.json")), ids=lambda p: p.stem)
def test_every_format_1_file_of_the_released_version_gets_its_signature_back(path: Path) -> None:
    data = json.loads(path.read_text())
    kind, surface = Kind(data["kind"]), Surface(data["surface"])
    signature = fp.recover_signature(kind, surface, data["name"], data["fingerprint"], data["message"], data["frames"])
    assert signature is not None
    assert fp.verifies("fuzzgate/1", kind, surface, data["name"], signature, data["fingerprint"])


def test_a_rebuilt_signature_that_does_not_verify_is_not_used() -> None:
    frames = ["/srv/app/server.py:10 in handler", "/srv/app/server.py:20 in divide"]
    truth = _original(Kind.INTERNAL_ERROR, Surface.TOOL, "calc", ("trace", "server.py:divide"))
    found = fp.recover_signature(
        Kind.INTERNAL_ERROR, Surface.TOOL, "calc", truth, "unhandled ZeroDivisionError", frames
    )
    assert found == ("trace", "server.py:divide")
    # Recorded from another frame than the ones kept (the raising frame fell outside the last eight):
    elsewhere = _original(Kind.INTERNAL_ERROR, Surface.TOOL, "calc", ("trace", "deep.py:inner"))
    assert fp.recover_signature(Kind.INTERNAL_ERROR, Surface.TOOL, "calc", elsewhere, "unhandled X", frames) is None
    # An RPC message cut before its end normalizes to something else than the recorded signature.
    full = "Failed to load " + "x" * 300 + " for user 42"
    recorded = _original(Kind.INTERNAL_ERROR, Surface.TOOL, "t", ("rpc", "-32603", full[:200]))
    message = f"JSON-RPC internal error -32603 for schema-valid input: {full[:150]}"
    assert fp.recover_signature(Kind.INTERNAL_ERROR, Surface.TOOL, "t", recorded, message, []) is None


@pytest.mark.parametrize(
    ("kind", "message", "signature"),
    [
        (Kind.CRASH, "the server died (killed by SIGSEGV) after KeyError: 'x'", ("exit", "killed by SIGSEGV")),
        (Kind.CRASH, "the server died (exit status 1) after ValueError: bad", ("trace", "ValueError")),
        (Kind.INTERNAL_ERROR, "unhandled exception ('Error executing tool t', ...)", ("sdk-unhandled",)),
        (
            Kind.INTERNAL_ERROR,
            "JSON-RPC internal error 0 for schema-valid input: no row 42 in '/var/db.sqlite'",
            ("rpc", "0", "no row <num> in <str>"),
        ),
        (Kind.PROTOCOL_ERROR, "the server sent a line too long to be a message: 'aaaa'", ("oversized",)),
        (Kind.SCHEMA_VIOLATION, "structuredContent does not match ... (at the root)", ("",)),
        (Kind.SECRET_LEAK, "the reply contains a secret (custom:x(y)z)", ("custom:x(y)z",)),
        (Kind.SLOW, "took 3.0s (slow threshold 2s)", ()),
    ],
)
def test_recovery_per_kind(kind: Kind, message: str, signature: tuple[str, ...]) -> None:
    recorded = _original(kind, Surface.TOOL, "t", signature)
    assert fp.recover_signature(kind, Surface.TOOL, "t", recorded, message, []) == signature


_parts = st.lists(st.text(max_size=12), max_size=3).map(tuple)


@given(st.sampled_from(list(Kind)), _parts, st.text(max_size=10))
def test_a_signature_verifies_only_under_its_own_scheme_and_bug(
    kind: Kind, signature: tuple[str, ...], name: str
) -> None:
    recorded = _original(kind, Surface.TOOL, name, signature)
    assert fp.verifies("fuzzgate/1", kind, Surface.TOOL, name, signature, recorded)
    assert not fp.verifies("unknown/1", kind, Surface.TOOL, name, signature, recorded)
    assert not fp.verifies("fuzzgate/1", kind, Surface.TOOL, name, (*signature, "more"), recorded)


def _original(kind: Kind, surface: Surface, name: str, signature: tuple[str, ...]) -> str:
    """The fingerprint fuzzgate/1 recorded (format 1 files and older entries hold these)."""
    scheme = fp.SCHEMES.get(fp.ORIGINAL_SCHEME)
    assert scheme is not None
    return scheme.digest(kind, surface, name, signature)
