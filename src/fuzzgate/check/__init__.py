"""The check stage: what in a call's outcome is a bug, and the signature that identifies which bug.

Each kind of bug is a check of its own (`registry.check`), in a module of its own; importing this
package registers the built-in ones, and `Oracles` runs every registered check on each call.

Checks read the raw outcome (tracebacks, signatures and the secret scan need it as sent), and every
text they put into an observation is redacted whole before it is cut or quoted.
"""

from __future__ import annotations

# Importing a check's module registers it (`registry.check`).
from fuzzgate.check import crash, effects, internal_error, output_schema, protocol, secret_leak, slow
from fuzzgate.check.crash import has_lone_surrogate
from fuzzgate.check.internal_error import RPC_MESSAGE_CHARS
from fuzzgate.check.normalize import normalize_message, normalize_schema_path
from fuzzgate.check.observation import FRAMES_KEPT, STDERR_EXCERPT_LINES, Observation
from fuzzgate.check.oracles import Oracles
from fuzzgate.check.output_schema import SCHEMA_ERROR_CHARS
from fuzzgate.check.patterns import INTERNAL_ERROR_CODES
from fuzzgate.check.protocol import PROTOCOL_EXCERPT_CHARS
from fuzzgate.check.registry import CallContext, Check, CheckEnv, check, registered_checks

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
]
