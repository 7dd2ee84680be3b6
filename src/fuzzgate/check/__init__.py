"""The check stage: what in a call's outcome is a bug, and the signature that identifies which bug.

- In: a `CallOutcome` with its `CallContext` (the request, the effects outside the scope).
- Out: `Observation`s, each with a payload-free signature (`observation.py`; `normalize.py` takes
  the payload out of messages and schema paths) that `triage` turns into a fingerprint.
- Never: send anything, or decide which bug an observation is (that is `triage.fingerprint`).

Each kind of bug is a check of its own (`registry.check`: `CallContext`, `CheckEnv`,
`@check(order=...)`), in a module of its own (`crash.py` (crash and hang), `protocol.py`,
`internal_error.py`, `output_schema.py`, `secret_leak.py`, `slow.py`, `effects.py`, `ssrf.py` (what the
listener on a jailed server's loopback saw: `fuzzgate.sandbox.listener`)); the first use of
this package's names (or of `registry.registered_checks()`) imports them, which registers them, and
`Oracles` (`oracles.py`) runs every registered check on each call, in their order. The package
itself imports nothing, so `secrets.py` and `patterns.py` cost no more than their own code.

Checks read the raw outcome (tracebacks, signatures and the secret scan need it as sent), and every
text they put into an observation is redacted whole before it is cut or quoted.

Also here, and read by the target stage too: `patterns.py`, what a traceback, the SDK's
unhandled-exception reply and an internal-error code look like (it imports nothing); `secrets.py`,
the secret patterns, canaries and the `Redactor` (known values also in their JSON, repr, percent
and base64 forms; `cut` redacts before cutting), which depends only on config. `traceback.py`
parses tracebacks (Python plain and rich, exception groups, Node.js); `headline.py` names an
exception in a message (its type and first line, redacted, escaped, capped). `protocol_probes.py`
holds the protocol probes (each a raw JSON-RPC message with what it expects: an answer, a
rejection, tolerated silence, silence) and their judge, which is not a registered check (probes are
not tool calls). `sdk.py` names the MCP SDK a server runs on and tells its symptoms from the
server's bugs (`Cause.SDK`: the lone-surrogate drop of the SDK's transport, a death whose
traceback is the SDK's alone, a rejection the SDK raised before the server's code ran).
`environment.py` reads from an error's text whether the sandbox caused it (a refused connection, a
name that does not resolve, a read-only file system): in the jail such an exception is a note of
the run, not a finding.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fuzzgate.check import crash, effects, internal_error, output_schema, protocol, secret_leak, slow, ssrf
    from fuzzgate.check.crash import has_lone_surrogate
    from fuzzgate.check.internal_error import RPC_MESSAGE_CHARS
    from fuzzgate.check.normalize import normalize_message, normalize_schema_path
    from fuzzgate.check.observation import FRAMES_KEPT, STDERR_EXCERPT_LINES, Observation
    from fuzzgate.check.oracles import Oracles
    from fuzzgate.check.output_schema import SCHEMA_ERROR_CHARS
    from fuzzgate.check.patterns import INTERNAL_ERROR_CODES
    from fuzzgate.check.protocol import PROTOCOL_EXCERPT_CHARS
    from fuzzgate.check.registry import CallContext, Check, CheckEnv, check, registered_checks

# Imported on first use, not with the package: `secrets.py` and `patterns.py` are read before the
# server starts (the sandbox, the target), and the checks pull in the generation stage.
_SOURCES = {
    "has_lone_surrogate": "crash",
    "RPC_MESSAGE_CHARS": "internal_error",
    "normalize_message": "normalize",
    "normalize_schema_path": "normalize",
    "FRAMES_KEPT": "observation",
    "STDERR_EXCERPT_LINES": "observation",
    "Observation": "observation",
    "Oracles": "oracles",
    "SCHEMA_ERROR_CHARS": "output_schema",
    "INTERNAL_ERROR_CODES": "patterns",
    "PROTOCOL_EXCERPT_CHARS": "protocol",
    "CallContext": "registry",
    "Check": "registry",
    "CheckEnv": "registry",
    "check": "registry",
    "registered_checks": "registry",
}


_CHECK_MODULES = frozenset(
    {"crash", "effects", "internal_error", "output_schema", "protocol", "secret_leak", "slow", "ssrf"}
)


def __getattr__(name: str) -> Any:
    if name in _CHECK_MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    source = _SOURCES.get(name)
    if source is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{source}"), name)
    globals()[name] = value
    return value


__all__ = [
    "FRAMES_KEPT",
    "INTERNAL_ERROR_CODES",
    "PROTOCOL_EXCERPT_CHARS",
    "RPC_MESSAGE_CHARS",
    "SCHEMA_ERROR_CHARS",
    "STDERR_EXCERPT_LINES",
    "CallContext",
    "Check",
    "CheckEnv",
    "Observation",
    "Oracles",
    "check",
    "crash",
    "effects",
    "has_lone_surrogate",
    "internal_error",
    "normalize_message",
    "normalize_schema_path",
    "output_schema",
    "protocol",
    "registered_checks",
    "secret_leak",
    "slow",
    "ssrf",
]
