"""The effect oracles: what a call did outside the server's scope, and canary content in a reply,
read through the real `Oracles` with real probes (`outside_effects`, `canary_content`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fuzzgate.check import CallContext, Observation, Oracles
from fuzzgate.check.effects import UNKNOWN_FIELD, Effect, canary_read_observations
from fuzzgate.check.secrets import Redactor, SecretScanner
from fuzzgate.generate.probes import OUTSIDE, Probe, ProbeClass, probe_cases
from fuzzgate.model.findings import Kind
from fuzzgate.model.outcome import CallOutcome, OutcomeStatus
from fuzzgate.sandbox.boundary import SIBLING_SUFFIXES, Boundary

SECRET = "sk-live-" + "Zq81xWv3Lm5Pt7Rk9Hs2"
"""A value the run knows as secret (a target env value, say): it must never reach a message."""


@dataclass(frozen=True, slots=True)
class FakeCanary:
    kind: str
    relpath: str
    markers: tuple[str, ...]
    names: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()


FILE_CANARY = FakeCanary("file", "fuzzgate-canary.txt", ("fzgcanary0f1e2d3c4b5a69788796a5b4",))
ENV_CANARY = FakeCanary("env", ".env", ("fzgcanaryaa11bb22cc33dd44ee55ff66",))
SCHEMA = {"type": "object", "properties": {"ref": {"type": "string"}, "path": {"type": "string"}}}
PROBES = {
    c.probe.marker: c.probe
    for c in probe_cases("git_log", SCHEMA, {}, "token-1", [FILE_CANARY.relpath, ENV_CANARY.relpath])
    if c.probe.marker is not None
}


def _probe(field: str, label: str) -> Probe:
    return next(p for p in PROBES.values() if p.field == field and p.label == label)


def _oracles(probes: dict[str, Probe] | None = None) -> Oracles:
    return Oracles(
        slow_s=10.0,
        scanner=SecretScanner([], {}),
        redact=Redactor([SECRET]),
        probes=PROBES if probes is None else probes,
        canaries=[FILE_CANARY, ENV_CANARY],
    )


def _observe(
    arguments: dict[str, Any],
    effects: tuple[Effect, ...] = (),
    reply: str = "done",
    concurrent: int = 1,
    probes: dict[str, Probe] | None = None,
) -> list[Observation]:
    outcome = CallOutcome(OutcomeStatus.OK, 0.01, text=reply, payload=reply, concurrent=concurrent)
    return _oracles(probes).observe_call(CallContext("git_log", arguments, True, outcome, effects))


def _seen(observations: list[Observation]) -> list[tuple[Kind, tuple[str, ...]]]:
    return [(o.kind, o.signature) for o in observations]


def test_a_file_only_an_injection_probe_names_is_an_injection_of_that_probe() -> None:
    option = _probe("ref", "--upload-pack=")
    shell = _probe("path", "$(...)")
    assert option.marker is not None and shell.marker is not None
    (obs,) = _observe({"ref": option.value}, (Effect("created", option.marker),))
    assert (obs.kind, obs.signature) == (Kind.INJECTION, ("option", "ref"))
    assert "--upload-pack=" in obs.message and option.marker in obs.message
    (obs,) = _observe({"path": shell.value}, (Effect("created", shell.marker),))
    assert (obs.kind, obs.signature) == (Kind.INJECTION, ("shell", "path"))


def test_a_created_escape_probe_path_is_a_scope_escape_on_the_probed_field() -> None:
    probe = _probe("path", "new path outside")
    assert probe.marker is not None and probe.probe_class is ProbeClass.SCOPE
    # A folder and a file in it: one bug, one observation.
    effects = (Effect("created", probe.marker), Effect("created", f"{probe.marker}/note.txt"))
    assert _seen(_observe({"path": probe.value}, effects)) == [(Kind.SCOPE_ESCAPE, ("write", "path"))]


def test_a_changed_or_deleted_canary_is_a_write_scope_escape_and_the_message_names_the_canary() -> None:
    effects = (Effect("changed", ".env", "env"), Effect("deleted", "fuzzgate-canary.txt", "file"))
    observed = _observe({"path": "../../.env", "ref": "main"}, effects)
    # Both through the argument that climbs out of the scope: one bug.
    assert _seen(observed) == [(Kind.SCOPE_ESCAPE, ("write", "path"))]
    assert "changed the env canary" in observed[0].message
    observed = _observe({"path": "notes/a.md", "ref": "main"}, effects)
    assert _seen(observed) == [(Kind.SCOPE_ESCAPE, ("write", UNKNOWN_FIELD))]
    assert "changed the env canary" in observed[0].message


def test_an_unknown_created_path_names_the_argument_that_mentions_it_else_none() -> None:
    effects = (Effect("created", "drafts"), Effect("created", "drafts/today.md"))
    named = _observe({"ref": "main", "path": "../../drafts/today.md"}, effects)
    assert _seen(named) == [(Kind.SCOPE_ESCAPE, ("write", "path"))]
    assert "argument `path`" in named[0].message
    unnamed = _observe({"ref": "main"}, effects)
    assert _seen(unnamed) == [(Kind.SCOPE_ESCAPE, ("write", UNKNOWN_FIELD))]
    assert "argument" not in unnamed[0].message


def test_the_argument_must_name_the_path_not_merely_contain_its_letters() -> None:
    # Otherwise the signature, so the fingerprint, would depend on what else the payload held.
    effects = (Effect("created", "a"),)
    assert _seen(_observe({"ref": "main", "count": 10}, effects)) == [(Kind.SCOPE_ESCAPE, ("write", UNKNOWN_FIELD))]
    assert _seen(_observe({"ref": "main", "path": "../../a"}, effects)) == [(Kind.SCOPE_ESCAPE, ("write", "path"))]
    assert _seen(_observe({"ref": "x; mkdir a"}, (Effect("created", "drafts"),))) == [
        (Kind.SCOPE_ESCAPE, ("write", UNKNOWN_FIELD))
    ]


def test_one_observation_per_signature_in_first_seen_order() -> None:
    probe = _probe("ref", "-o")
    assert probe.marker is not None
    effects = (
        Effect("created", "a"),
        Effect("created", "b"),  # same signature as "a": no argument names either
        Effect("created", probe.marker),
        Effect("deleted", "a"),
        Effect("created", probe.marker),
    )
    # Creating and deleting through the same unnamed path are one write escape.
    assert _seen(_observe({"ref": probe.value}, effects)) == [
        (Kind.SCOPE_ESCAPE, ("write", UNKNOWN_FIELD)),
        (Kind.INJECTION, ("option", "ref")),
    ]


def test_effects_seen_among_concurrent_calls_are_ambiguous() -> None:
    (obs,) = _observe({}, (Effect("created", "x"),), concurrent=2)
    assert obs.ambiguous
    (obs,) = _observe({}, (Effect("created", "x"),))
    assert not obs.ambiguous


def test_canary_content_in_the_reply_is_a_read_scope_escape() -> None:
    reply = f"FUZZGATE_CANARY_SECRET={ENV_CANARY.markers[0]}\n"
    observed = _observe({"path": "../../.env"}, reply=reply)
    assert _seen(observed) == [(Kind.SCOPE_ESCAPE, ("read", "path"))]
    assert "argument `path`" in observed[0].message and ENV_CANARY.markers[0] not in observed[0].message


def test_canary_content_the_arguments_carried_is_not_evidence() -> None:
    marker = FILE_CANARY.markers[0]
    assert _observe({"text": f"remember {marker}"}, reply=f"saved: remember {marker}") == []


def test_a_reply_echoing_only_a_canarys_path_is_not_a_read() -> None:
    reply = f"no such file: {OUTSIDE}/fuzzgate-canary.txt and {OUTSIDE}/.env"
    assert _observe({"path": f"{OUTSIDE}/fuzzgate-canary.txt"}, reply=reply) == []


def test_no_canary_check_without_a_reply() -> None:
    outcome = CallOutcome(OutcomeStatus.CLOSED, 0.01, text=FILE_CANARY.markers[0], exit_code=1)
    observed = _oracles().observe_call(CallContext("git_log", {}, True, outcome))
    assert Kind.SCOPE_ESCAPE not in [o.kind for o in observed]


def test_messages_are_redacted() -> None:
    shell = _probe("path", ";")
    assert shell.marker is not None
    injected = _observe({"path": f"{shell.value} {SECRET}"}, (Effect("created", shell.marker),))
    escaped = _observe({"path": f"../../drafts/{SECRET}"}, (Effect("created", "drafts"),))
    read = _observe({"path": f"../../.env#{SECRET}"}, reply=f"{ENV_CANARY.markers[0]}")
    for observations in (injected, escaped, read):
        (obs,) = observations
        assert SECRET not in obs.message and "argument `path`" in obs.message


def test_an_injection_is_recognized_from_the_arguments_when_the_probe_is_not_known() -> None:
    # A replay in another process (`fuzzgate replay`) never built the probe: the file name and the
    # argument that names it say the same.
    option = _probe("ref", "--output=")
    assert option.marker is not None
    effects = (Effect("created", option.marker),)
    (obs,) = _observe({"ref": option.value}, effects, probes={})
    assert (obs.kind, obs.signature) == (Kind.INJECTION, ("option", "ref"))
    shell = _probe("path", "$(...)")
    assert shell.marker is not None
    (obs,) = _observe({"path": shell.value}, (Effect("created", shell.marker),), probes={})
    assert (obs.kind, obs.signature) == (Kind.INJECTION, ("shell", "path"))


def test_an_effect_under_a_directory_an_argument_names_is_that_arguments() -> None:
    effects = (Effect("created", "repo/.git/HEAD", None, "/w/outside/repo/.git/HEAD"),)
    assert _seen(_observe({"ref": "main", "repo_path": "/w/outside/repo"}, effects)) == [
        (Kind.SCOPE_ESCAPE, ("write", "repo_path"))
    ]
    assert _seen(_observe({"ref": "main", "repo_path": "/w/outside/rep"}, effects)) == [
        (Kind.SCOPE_ESCAPE, ("write", UNKNOWN_FIELD))
    ]


def test_an_option_probe_a_command_rejects_as_unknown_is_an_injection() -> None:
    probe = _probe("ref", "--output=")
    assert probe.marker is not None
    value = probe.value.replace("@@FUZZGATE_OUTSIDE@@", "/w/s1/outside")
    reply = f"error: unknown option `{value[2:]}'\nusage: git checkout [<options>] <branch>"
    outcome = CallOutcome(OutcomeStatus.TOOL_ERROR, 0.01, text=reply, payload=reply)
    (obs,) = _oracles().observe_call(CallContext("git_checkout", {"ref": value}, True, outcome))
    assert (obs.kind, obs.signature) == (Kind.INJECTION, ("option", "ref"))
    assert "unknown option" in obs.message


def test_an_echoed_option_probe_or_an_unrelated_unknown_option_is_nothing() -> None:
    probe = _probe("ref", "--output=")
    value = probe.value.replace("@@FUZZGATE_OUTSIDE@@", "/w/s1/outside")
    for reply in (value, f"echo: {value}", "error: unknown option `--verbose'"):
        outcome = CallOutcome(OutcomeStatus.OK, 0.01, text=reply, payload=reply)
        assert _oracles().observe_call(CallContext("echo", {"ref": value}, True, outcome)) == []


def test_time_a_call_asked_for_is_not_slowness() -> None:
    oracles = Oracles(slow_s=2.0, scanner=SecretScanner([], {}), redact=Redactor([]))
    outcome = CallOutcome(OutcomeStatus.OK, 10.2, text="done", payload="done")

    def kinds(arguments: dict[str, Any]) -> list[Kind]:
        return [o.kind for o in oracles.observe_call(CallContext("op", arguments, True, outcome))]

    assert kinds({"duration": 10, "steps": 5}) == []
    assert kinds({"delay_ms": 10_000}) == []
    assert kinds({"depth": 8}) == [Kind.SLOW]
    assert kinds({"duration": 0, "mode": "wait"}) == [Kind.SLOW]


def test_a_name_the_server_made_under_a_path_that_climbs_out_is_that_arguments() -> None:
    effects = (Effect("created", ".git", None, "/w/s1/outside/.git"), Effect("created", ".git/HEAD"))
    assert _seen(_observe({"ref": "main", "repo_path": "../.."}, effects)) == [
        (Kind.SCOPE_ESCAPE, ("write", "repo_path"))
    ]


# the scope's boundary ----------------------------------------------------------------------------

SIBLING = FakeCanary(
    "sibling", "scope/0-proj-backup", ("fzgcanary11112222333344445555aaaa",), ("fzgcanary99998888777766665555bbbb",)
)
LINKED_FILE = FakeCanary("linked", "fuzzgate-linked.txt", ("fzgcanary0000111122223333cccc4444",), (), ("notes.txt",))
BOUNDARY = Boundary(
    ("scope/0-proj",),
    (tuple(f"scope/0-proj{suffix}" for suffix in SIBLING_SUFFIXES),),
    "archive",
    "notes.txt",
    "fuzzgate-canary.txt",
    (),
    (),
)
LISTED = FakeCanary("name", "fzgcanaryddddeeeeffff000011112222", (), ("fzgcanaryddddeeeeffff000011112222",))


def _read(arguments: dict[str, Any], reply: str, *canaries: FakeCanary) -> list[Observation]:
    return list(canary_read_observations(arguments, reply, canaries, Redactor([])))


def test_a_canary_name_in_a_reply_is_a_read_even_without_content() -> None:
    reply = f"fuzzgate-canary.txt\n{SIBLING.names[0]}\n"
    (observed,) = _read({"path": "../0-proj-backup"}, reply, SIBLING)
    assert observed.kind is Kind.SCOPE_ESCAPE and observed.signature == ("read", "path")
    assert observed.message.startswith("answered with the name of a file planted outside its scope")
    assert "listing" in observed.message and "`0-proj-backup`, a prefix sibling" in observed.message


def test_a_canary_name_the_arguments_carried_is_not_evidence() -> None:
    name = SIBLING.names[0]
    assert _read({"path": f"../0-proj-backup/{name}"}, f"no such file: ../0-proj-backup/{name}", SIBLING) == []


def test_the_listing_of_the_watched_directory_names_the_argument_that_named_it() -> None:
    arguments = {"query": "x", "dir": "/var/tmp/fuzzgate-abc/s1/outside"}
    (observed,) = _read(arguments, f"README\n{LISTED.names[0]}\n", LISTED)
    assert observed.signature == ("read", "dir")


def test_a_write_through_a_planted_link_names_the_link_and_the_argument() -> None:
    effect = Effect("changed", "fuzzgate-linked.txt", "linked", "/w/outside/fuzzgate-linked.txt", ("notes.txt",))
    (observed,) = _observe({"text": "a", "path": "notes.txt"}, (effect,))
    assert observed.signature == ("write", "path")
    assert "through the symbolic link `notes.txt` planted in its scope" in observed.message


def test_a_sibling_probe_is_attributed_by_its_file_name() -> None:
    probe = next(
        p
        for c in probe_cases("git_log", SCHEMA, {}, "token-1", [], boundary=BOUNDARY)
        if (p := c.probe).field == "ref" and p.probe_class is ProbeClass.SIBLING and p.marker is not None
    )
    effect = Effect("created", f"scope/0-proj-backup/{probe.marker}", "sibling")
    (observed,) = _observe({"path": "x", "ref": str(probe.value)}, (effect,), probes={str(probe.marker): probe})
    assert observed.signature == ("write", "ref") and "a prefix sibling" in observed.message


def test_a_probes_name_carried_by_another_field_is_that_fields_escape() -> None:
    probe = next(
        p
        for c in probe_cases("git_log", SCHEMA, {}, "token-1", [], boundary=BOUNDARY)
        if (p := c.probe).field == "ref" and p.probe_class is ProbeClass.SIBLING and p.marker is not None
    )
    effect = Effect("created", f"scope/0-proj-backup/{probe.marker}", "sibling")
    # A probe of `path` riding on a call whose `ref` a reply had filled with the other probe's path.
    arguments = {"path": "--output=/x", "ref": f"/srv/scope/0-proj-backup/{probe.marker}"}
    (observed,) = _observe(arguments, (effect,), probes={str(probe.marker): probe})
    assert observed.signature == ("write", "ref")
    moved = {"path": f"/srv/scope/0-proj-backup/{probe.marker}", "ref": "main"}
    (observed,) = _observe(moved, (effect,), probes={str(probe.marker): probe})
    assert observed.signature == ("write", "path")


def test_a_path_created_inside_an_injection_name_is_the_name_used_as_a_path() -> None:
    marker = "fzginj-0123456789abcdef"
    probe = Probe("git_init", "message", ProbeClass.SHELL, "&&", f"x && touch {marker}", marker)
    arguments = {"repo_path": f"/outside/{marker}", "message": "null"}
    effect = Effect("created", f"{marker}/.git/config", None)
    (observed,) = _observe(arguments, (effect,), probes={marker: probe})
    assert observed.kind is Kind.SCOPE_ESCAPE and observed.signature == ("write", "repo_path")
