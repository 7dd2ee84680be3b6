"""Golden fingerprints: the exact fingerprint of every bug in a fixed corpus of real inputs.

Every user's baseline is keyed on these values. A change to traceback parsing, message or
schema-path normalization, the oracles' signatures or the hash that moves any of them would turn
every known bug of every user into a "new" one plus a "fixed" one and fail their pull requests.
These tests make such a change visible; docs/fingerprints.md ("Schemes and the policy for changing
fingerprints") says what to do when it is intended.
"""

from __future__ import annotations

import pytest

from fuzzgate.check import Observation
from fuzzgate.model.findings import Kind
from fuzzgate.triage import fingerprint as fp
from fuzzgate.triage.finding_set import subject
from tests.triage.fingerprint_corpus import CASES

CRASH, HANG, SLOW = Kind.CRASH, Kind.HANG, Kind.SLOW
INTERNAL, PROTOCOL, SCHEMA, SECRET = Kind.INTERNAL_ERROR, Kind.PROTOCOL_ERROR, Kind.SCHEMA_VIOLATION, Kind.SECRET_LEAK
ESCAPE, INJECTION, SSRF = Kind.SCOPE_ESCAPE, Kind.INJECTION, Kind.SSRF
MEMORY = Kind.OUT_OF_MEMORY

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
    "ssrf: fetched canary URL": [(SSRF, ("fetch", "url"), "92a180985bf4fca37674")],
    "out_of_memory: stopped past the limit": [(MEMORY, ("memory",), "0ebfdfc43075eefb6937")],
    # Added with fuzzgate/2, as fuzzgate/1 fingerprinted them: the frame a library raised in, the
    # value the message held.
    "rich, an installed server's library raised": [
        (INTERNAL, ("trace", "zipfile.py:_RealGetContents"), "14cf4816f320a7a7a5b9")
    ],
    "rpc bare argument value": [
        (INTERNAL, ("rpc", "-32603", "Invalid resourceType: a. Must be Text or Blob."), "e4fae7aeafc219757c80")
    ],
}
"""What fuzzgate/1 gives for the corpus. Kept as it is when a later scheme arrives: entries recorded
under fuzzgate/1 are verified and migrated against exactly these values."""

FUZZGATE_2: Golden = {
    "python sdk log, stderr": [(INTERNAL, ("trace", "buggy_server.py:split_bill"), "505202eb211e08c3623d")],
    "python traceback as the reply": [
        (INTERNAL, ("reply-trace", "buggy_server.py:parse_config"), "91b024b5c886d37cb859")
    ],
    "python library frames only, stderr": [(INTERNAL, ("trace", "decoder.py:raw_decode"), "4f29e825075d9762ecb5")],
    "python crash with a traceback": [(CRASH, ("trace", "buggy_server.py:split_bill"), "0949a90272ba250affdd")],
    "rich traceback through a lambda": [(INTERNAL, ("trace", "server.py:lookup_order"), "d7374364d6148804d9d3")],
    "rich, an installed server's library raised": [(INTERNAL, ("trace", "server.py:read_doc"), "71f07a54b504fb2aa1bc")],
    "rich chained, wrapped paths": [(INTERNAL, ("trace", "catalog.py:load_catalog"), "9db1769cecc8d0a11eee")],
    "node commonjs, stderr": [(INTERNAL, ("trace", "tools.js:countWords"), "2944cc33ebf7acc7ca06")],
    "node esm crash": [(CRASH, ("trace", "index.mjs:readNote"), "4e6a83f63f8fcab50fd1")],
    "node stack in the reply": [(INTERNAL, ("reply-trace", "tools.js:countWords"), "bc4a3edd153b8af8a516")],
    "sdk unhandled message": [(INTERNAL, ("sdk-unhandled",), "1bc65851314c9ced8765")],
    "rpc bare argument value": [
        (INTERNAL, ("rpc", "-32603", "Invalid resourceType: <arg>. Must be Text or Blob."), "f17c7c61bfa319fa1ad6")
    ],
    "rpc path and date": [
        (
            INTERNAL,
            ("rpc", "-32603", "Internal error: ENOENT: no such file or directory, open <str>"),
            "6f511cecc9c18bc4c22a",
        )
    ],
    "rpc uuid, quoted user, float": [
        (
            INTERNAL,
            ("rpc", "-32603", "Failed to fetch order <uuid> for user <str>: timeout after <num>s"),
            "1b2285d9bb28be8636c3",
        )
    ],
    "rpc code 0, hex id, windows path, two lines": [
        (
            INTERNAL,
            ("rpc", "0", "Error executing tool lookup: KeyError at <hex> in <path> line <num>"),
            "f248ebc939ca93064cab",
        )
    ],
    "rpc backticks, long hex, numbers": [
        (
            INTERNAL,
            ("rpc", "-32603", "Cannot read properties of undefined (reading <str>) at index <num> of <hex>"),
            "608407ec453ba1546856",
        )
    ],
    "schema: real message, wrong type": [(SCHEMA, ("properties/quantity/type",), "1deb36ea2c619ef5630f")],
    "schema: index 3 in nested arrays": [
        (SCHEMA, ("properties/items/items/prefixItems/*/minimum",), "e6d00a26d39ce0e3f11d")
    ],
    "schema: index 12 in nested arrays": [
        (SCHEMA, ("properties/items/items/prefixItems/*/minimum",), "e6d00a26d39ce0e3f11d")
    ],
    "schema: no structured content": [(SCHEMA, ("structuredContent",), "3b6544a2737b602fce1b")],
    "protocol: non_json": [(PROTOCOL, ("non_json",), "886abc470a8276ca088a")],
    "protocol: invalid_message": [(PROTOCOL, ("invalid_message",), "a6d07b4329c321d9412d")],
    "protocol: wrong_id": [(PROTOCOL, ("wrong_id",), "ec6b5d2f86edb709afcd")],
    "protocol: oversized": [(PROTOCOL, ("oversized",), "880fa5ca9a8a78544748")],
    "secret: github token": [(SECRET, ("github_token",), "f2fee2bcb620ec2daede")],
    "secret: aws key id": [(SECRET, ("aws_access_key_id",), "abc2275e3c150fd538b4")],
    "secret: private key": [(SECRET, ("private_key",), "7464e31d222f4c861eb4")],
    "secret: canary": [(SECRET, ("canary",), "1e19a8fbbdbb305649ad")],
    "secret: custom pattern": [(SECRET, ("custom:corp-[0-9]{6}",), "077c24b3f1bf73495554")],
    "hang": [(HANG, (), "dbf132bf12b70266c9c8")],
    "slow": [(SLOW, (), "f6432a0cc5bea1ecaac8")],
    "crash: exit status 1": [(CRASH, ("exit", "exit status 1"), "634b86646bfa2604b6f1")],
    "crash: exit status 3": [(CRASH, ("exit", "exit status 3"), "d116996e4c739bc4d84c")],
    "crash: SIGSEGV": [(CRASH, ("exit", "killed by SIGSEGV"), "1675b8f8d66d83bdbe9f")],
    "crash: SIGKILL": [(CRASH, ("exit", "killed by SIGKILL"), "c77cd00758a7e92d1b1a")],
    "crash: connection closed": [(CRASH, ("exit", "connection closed"), "fe15fa31ace4d3b63ba6")],
    "crash: never answered, then exit status 3": [(CRASH, ("exit", "exit status 3"), "d116996e4c739bc4d84c")],
    "protocol: unanswered lone surrogate, set_title": [
        (PROTOCOL, ("unanswered", "lone-surrogate"), "7ee50159bd63a125eafc")
    ],
    "protocol: unanswered lone surrogate, echo": [(PROTOCOL, ("unanswered", "lone-surrogate"), "7ee50159bd63a125eafc")],
    "crash: unanswered lone surrogate, then died": [
        (CRASH, ("unanswered-then-died", "lone-surrogate"), "bf447b3b16b1347e87d0")
    ],
    "protocol: unanswered lone surrogate, then stuck": [
        (PROTOCOL, ("unanswered-then-stuck", "lone-surrogate"), "d03eaface8cd2908bb08")
    ],
    "scope_escape: created path": [(ESCAPE, ("write", "path"), "2311ca2f42a6f16a0cec")],
    "scope_escape: created probe path": [(ESCAPE, ("write", "folder"), "4d13b4639fbd0c7b0cba")],
    "scope_escape: deleted canary": [(ESCAPE, ("write", "path"), "ac7a55c56ddde31af1fb")],
    "scope_escape: read canary": [(ESCAPE, ("read", "path"), "b7804bc828c044e1cb1f")],
    "injection: option": [(INJECTION, ("option", "ref"), "c5815582cf4916271c21")],
    "injection: shell": [(INJECTION, ("shell", "pattern"), "40f26a7dc62d94eae8f3")],
    "ssrf: fetched canary URL": [(SSRF, ("fetch", "url"), "8c952e72bc1752b745c1")],
    "out_of_memory: stopped past the limit": [(MEMORY, ("memory",), "474c42b76196ae33e69d")],
}
"""What fuzzgate/2 gives for the corpus: the raising frame in the server's own code (an installed
server's package too), the call"s values taken out of internal error messages."""

GOLDEN_SCHEME = "fuzzgate/2"
GOLDEN: Golden = FUZZGATE_2
"""What the current scheme gives for the corpus (a new scheme gets a table of its own)."""

POLICY = (
    "the fingerprints of real bugs changed ({what}). Every user's baseline is keyed on them: shipped as "
    "it is, this change turns each known bug into a new one plus a fixed one. If it is intended, register a "
    "new scheme in src/fuzzgate/triage/fingerprint.py with an upgrade from the current one, give it its own "
    "golden table here (keep FUZZGATE_1 as it is) and follow docs/fingerprints.md, "
    "'Schemes and the policy for changing fingerprints'."
)


def test_the_corpus_and_the_golden_table_cover_the_same_cases() -> None:
    assert sorted(CASES) == sorted(GOLDEN) == sorted(FUZZGATE_1) == sorted(FUZZGATE_2)
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
    observed = CASES[case].observe()
    carried = [
        (kind, upgraded, fp.fingerprint(kind, *CASES[case].subject, upgraded))
        for (kind, signature, _), observation in zip(FUZZGATE_1[case], observed, strict=True)
        if (upgraded := fp.SCHEMES.upgrade("fuzzgate/1", kind, signature, _evidence(case, observation))) is not None
    ]
    assert carried == GOLDEN[case], f"the upgrades from fuzzgate/1 do not carry {case!r} to {GOLDEN_SCHEME}"


def _evidence(case: str, observation: Observation) -> fp.Evidence:
    """What a baseline entry of the case's bug records beside its signature: the call's arguments
    and the last frames kept."""
    return fp.Evidence(CASES[case].arguments, observation.details.frames)


@pytest.mark.parametrize("case", sorted(FUZZGATE_1))
def test_without_evidence_fuzzgate_1_signatures_are_kept(case: str) -> None:
    """An upgrade without the finding's evidence keeps what it cannot tell apart; it carries every
    bug whose signature fuzzgate/2 did not change."""
    for (kind, signature, _), (_, current, _) in zip(FUZZGATE_1[case], GOLDEN[case], strict=True):
        assert fp.SCHEMES.upgrade("fuzzgate/1", kind, signature) == signature
        assert (signature == current) is (case not in _CHANGED_BY_FUZZGATE_2)


_CHANGED_BY_FUZZGATE_2 = {"rich, an installed server's library raised", "rpc bare argument value"}
