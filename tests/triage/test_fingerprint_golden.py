"""Golden fingerprints: the exact fingerprint of every bug in a fixed corpus of real inputs.

Every user's baseline is keyed on these values. A change to traceback parsing, message or
schema-path normalization, the oracles' signatures or the hash that moves any of them would turn
every known bug of every user into a "new" one plus a "fixed" one and fail their pull requests.
These tests make such a change visible; docs/fingerprints.md ("Schemes and the policy for changing
fingerprints") says what to do when it is intended.
"""

from __future__ import annotations

import pytest

from fuzzgate.model.findings import Kind
from fuzzgate.triage import fingerprint as fp
from fuzzgate.triage.finding_set import subject
from tests.triage.fingerprint_corpus import CASES

CRASH, HANG, SLOW = Kind.CRASH, Kind.HANG, Kind.SLOW
INTERNAL, PROTOCOL, SCHEMA, SECRET = Kind.INTERNAL_ERROR, Kind.PROTOCOL_ERROR, Kind.SCHEMA_VIOLATION, Kind.SECRET_LEAK
ESCAPE, INJECTION = Kind.SCOPE_ESCAPE, Kind.INJECTION

Golden = dict[str, list[tuple[Kind, tuple[str, ...], str]]]

FUZZGATE_1: Golden = {
    "python sdk log, stderr": [(INTERNAL, ("trace", "buggy_server.py:split_bill"), "a009ba3b6837a30dc32c")],
    "python traceback as the reply": [
        (INTERNAL, ("reply-trace", "buggy_server.py:parse_config"), "274bb18ef0d7574636ee")
    ],
    "python library frames only, stderr": [(INTERNAL, ("trace", "decoder.py:raw_decode"), "47013185bb0bbed8ca49")],
    "python crash with a traceback": [(CRASH, ("trace", "buggy_server.py:split_bill"), "5f6bf7ef5fe4f04aac16")],
    "rich traceback through a lambda": [(INTERNAL, ("trace", "server.py:lookup_order"), "50127197070c1a0c4012")],
    "rich chained, wrapped paths": [(INTERNAL, ("trace", "catalog.py:load_catalog"), "ab5224a92c64815192b9")],
    "node commonjs, stderr": [(INTERNAL, ("trace", "tools.js:countWords"), "279eeb1445aeaf90cf88")],
    "node esm crash": [(CRASH, ("trace", "index.mjs:readNote"), "ba76455fdeb77cd681f8")],
    "node stack in the reply": [(INTERNAL, ("reply-trace", "tools.js:countWords"), "9f0e12f533c494cb616e")],
    "sdk unhandled message": [(INTERNAL, ("sdk-unhandled",), "2ffc183a91ef18bc4d45")],
    "rpc path and date": [
        (
            INTERNAL,
            ("rpc", "-32603", "Internal error: ENOENT: no such file or directory, open <str>"),
            "2942d9890a904eb94a55",
        )
    ],
    "rpc uuid, quoted user, float": [
        (
            INTERNAL,
            ("rpc", "-32603", "Failed to fetch order <uuid> for user <str>: timeout after <num>s"),
            "890042d3f7f04b62bc0b",
        )
    ],
    "rpc code 0, hex id, windows path, two lines": [
        (
            INTERNAL,
            ("rpc", "0", "Error executing tool lookup: KeyError at <hex> in <path> line <num>"),
            "ae133de1b7b3e0fcceee",
        )
    ],
    "rpc backticks, long hex, numbers": [
        (
            INTERNAL,
            ("rpc", "-32603", "Cannot read properties of undefined (reading <str>) at index <num> of <hex>"),
            "e7939f296fe51b2b1e04",
        )
    ],
    "schema: real message, wrong type": [(SCHEMA, ("properties/quantity/type",), "979d522c8b6e9c96ab99")],
    "schema: index 3 in nested arrays": [
        (SCHEMA, ("properties/items/items/prefixItems/*/minimum",), "7d62f667340ec6a0c30c")
    ],
    "schema: index 12 in nested arrays": [
        (SCHEMA, ("properties/items/items/prefixItems/*/minimum",), "7d62f667340ec6a0c30c")
    ],
    "schema: no structured content": [(SCHEMA, ("structuredContent",), "250cfc2e5386b8bb2320")],
    "protocol: non_json": [(PROTOCOL, ("non_json",), "2af6dfca878faf8d067f")],
    "protocol: invalid_message": [(PROTOCOL, ("invalid_message",), "7000d138698301f45569")],
    "protocol: wrong_id": [(PROTOCOL, ("wrong_id",), "48ec6b6f0137c3fd68d0")],
    "protocol: oversized": [(PROTOCOL, ("oversized",), "a2cdc6cf8c4effb5d640")],
    "secret: github token": [(SECRET, ("github_token",), "57edb2c33c8ff49b6271")],
    "secret: aws key id": [(SECRET, ("aws_access_key_id",), "c1c4aa8a91ff4b2d60a4")],
    "secret: private key": [(SECRET, ("private_key",), "716422687e9212ffb2b6")],
    "secret: canary": [(SECRET, ("canary",), "46a45cf0871912ad9c76")],
    "secret: custom pattern": [(SECRET, ("custom:corp-[0-9]{6}",), "4abe7051fa6960917506")],
    "hang": [(HANG, (), "5a94068ad782d63e4879")],
    "slow": [(SLOW, (), "ab2071f294f96e058237")],
    "crash: exit status 1": [(CRASH, ("exit", "exit status 1"), "05e15e2bcfcca25ce6c7")],
    "crash: exit status 3": [(CRASH, ("exit", "exit status 3"), "a5ac6bee66c44f5c64b9")],
    "crash: SIGSEGV": [(CRASH, ("exit", "killed by SIGSEGV"), "194561fd675d3a6e49fb")],
    "crash: SIGKILL": [(CRASH, ("exit", "killed by SIGKILL"), "8f3f78e76f040f1406e0")],
    "crash: connection closed": [(CRASH, ("exit", "connection closed"), "b3b2202e05de79e5ccdd")],
    # Added with the kinds and signatures for bugs that answer politely (fuzzgate/1 is unchanged:
    # new signatures only). A silent death is the crash it would be during the call.
    "crash: never answered, then exit status 3": [(CRASH, ("exit", "exit status 3"), "a5ac6bee66c44f5c64b9")],
    # Server-wide (Surface.SERVER, "transport"): one fingerprint whichever tool the request named.
    "protocol: unanswered lone surrogate, set_title": [
        (PROTOCOL, ("unanswered", "lone-surrogate"), "7de6b95b818570d90486")
    ],
    "protocol: unanswered lone surrogate, echo": [(PROTOCOL, ("unanswered", "lone-surrogate"), "7de6b95b818570d90486")],
    "crash: unanswered lone surrogate, then died": [
        (CRASH, ("unanswered-then-died", "lone-surrogate"), "58e1859602fbe57d55ba")
    ],
    "protocol: unanswered lone surrogate, then stuck": [
        (PROTOCOL, ("unanswered-then-stuck", "lone-surrogate"), "09ed057d934685d27b02")
    ],
    "scope_escape: created path": [(ESCAPE, ("write", "path"), "1bb1a6ba2ee71901c722")],
    "scope_escape: created probe path": [(ESCAPE, ("write", "folder"), "9d4d646a1541eda165cc")],
    "scope_escape: deleted canary": [(ESCAPE, ("write", "path"), "20a1191e2ce47f1bad51")],
    "scope_escape: read canary": [(ESCAPE, ("read", "path"), "80fa41ea60185ca32708")],
    "injection: option": [(INJECTION, ("option", "ref"), "ebf9c99cf5b5bd971f18")],
    "injection: shell": [(INJECTION, ("shell", "pattern"), "4bb98b80fc8f982dac5f")],
}
"""What fuzzgate/1 gives for the corpus. Kept as it is when a later scheme arrives: entries recorded
under fuzzgate/1 are verified and migrated against exactly these values."""

GOLDEN_SCHEME = "fuzzgate/1"
GOLDEN: Golden = FUZZGATE_1
"""What the current scheme gives for the corpus (a new scheme gets a table of its own)."""

POLICY = (
    "the fingerprints of real bugs changed ({what}). Every user's baseline is keyed on them: shipped as "
    "it is, this change turns each known bug into a new one plus a fixed one. If it is intended, register a "
    "new scheme in src/fuzzgate/triage/fingerprint.py with an upgrade from the current one, give it its own "
    "golden table here (keep FUZZGATE_1 as it is) and follow docs/fingerprints.md, "
    "'Schemes and the policy for changing fingerprints'."
)


def test_the_corpus_and_the_golden_table_cover_the_same_cases() -> None:
    assert sorted(CASES) == sorted(GOLDEN) == sorted(FUZZGATE_1)
    assert {kind for items in GOLDEN.values() for kind, _, _ in items} == set(Kind)


def test_the_current_scheme_is_the_golden_one() -> None:
    current = fp.current_scheme().name
    assert current == GOLDEN_SCHEME, POLICY.format(
        what=f"the current scheme is {current}, the golden table's is {GOLDEN_SCHEME}"
    )


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_fingerprints(case: str) -> None:
    tool = CASES[case].tool
    observations = CASES[case].observe()
    assert all(subject(o, tool) == CASES[case].subject for o in observations)
    observed = [(o.kind, o.signature, fp.fingerprint(o.kind, *subject(o, tool), o.signature)) for o in observations]
    assert observed == GOLDEN[case], POLICY.format(what=f"case {case!r}: now {observed}, pinned {GOLDEN[case]}")


@pytest.mark.parametrize("case", sorted(FUZZGATE_1))
def test_the_fuzzgate_1_hash_is_frozen(case: str) -> None:
    """Entries recorded under fuzzgate/1 are verified against its hash forever after."""
    original = fp.SCHEMES.get("fuzzgate/1")
    assert original is not None
    for kind, signature, expected in FUZZGATE_1[case]:
        digest = original.digest(kind, *CASES[case].subject, signature)
        assert digest == expected, POLICY.format(
            what=f"the fuzzgate/1 hash gives {digest} for {case!r}, not {expected}"
        )


@pytest.mark.parametrize("case", sorted(FUZZGATE_1))
def test_every_fuzzgate_1_bug_is_carried_to_the_current_scheme(case: str) -> None:
    """The registered upgrades map each bug's fuzzgate/1 signature to the one the current scheme
    observes for it, so entries recorded under fuzzgate/1 stay known."""
    carried = [
        (kind, upgraded, fp.fingerprint(kind, *CASES[case].subject, upgraded))
        for kind, signature, _ in FUZZGATE_1[case]
        if (upgraded := fp.SCHEMES.upgrade("fuzzgate/1", kind, signature)) is not None
    ]
    assert carried == GOLDEN[case], f"the upgrades from fuzzgate/1 do not carry {case!r} to {GOLDEN_SCHEME}"
