"""The oracle for requests a server makes for its caller (server-side request forgery).

A jailed server with its own loopback has fuzzgate's listener there (`fuzzgate.sandbox.listener`),
and its URL-like fields get canary URLs pointing at it (`fuzzgate.generate.probes`, class `url`),
each with a marker in its path that only that probe's URL holds. The evidence, for a call whose
arguments carry the marker:

- the listener reported a request whose path holds the marker: the server fetched the URL (through
  the listener's redirect too, when the path says so);
- the reply holds the listener's page for that marker (`PAGE_MARKER` + the marker's digits), or the
  content of the file canary a `file://` probe names, and the arguments did not carry it.

A request reported while the call was pending whose marker the call's arguments do not carry is
another call's (made late, after that call returned) and is not evidence for this one.

The signature is `("fetch", field)`: one bug per tool and argument, whichever spelling of loopback,
redirect or scheme reached it, and never the URL itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from fuzzgate.check.observation import Observation
from fuzzgate.check.registry import CallContext, CheckEnv, check
from fuzzgate.check.secrets import Redactor
from fuzzgate.model.findings import Details, Kind
from fuzzgate.sandbox.listener import FILE_CANARY, FILE_MARKER, MARKER_HEX, PAGE_MARKER, URL_MARKER, Request

VALUE_CHARS = 120
UNKNOWN_FIELD = "?"
_PAGE = re.compile(rf"{re.escape(PAGE_MARKER)}([0-9a-f]{{{MARKER_HEX}}})")
_FILE = re.compile(rf"{re.escape(FILE_MARKER)}[0-9a-f]{{{MARKER_HEX}}}")


def _field_holding(arguments: Mapping[str, Any], needle: str) -> str:
    """The top-level argument whose value holds `needle`, else `?`."""
    for name, value in arguments.items():
        if needle in json.dumps(value, ensure_ascii=False):
            return str(name)
    return UNKNOWN_FIELD


def _shown(value: Any, redact: Redactor) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return repr(redact.cut(text, VALUE_CHARS))


def _label(marker: str, env: CheckEnv) -> str:
    """The probe's label (`decimal loopback`, `redirect`) when this run built it."""
    probe = env.probes.get(marker)
    label = getattr(probe, "label", None)
    return f" ({label})" if isinstance(label, str) else ""


@check(order=65)
def server_side_request(ctx: CallContext, env: CheckEnv) -> Iterator[Observation]:
    """The call made the server request a canary URL, or answered with a canary URL's content."""
    sent = json.dumps(ctx.arguments, ensure_ascii=False)
    evidence: dict[str, str] = {}
    """field -> what showed it (the first evidence per field)."""
    for request in (e for e in ctx.effects if isinstance(e, Request)):
        for marker in request.markers():
            if marker not in sent:
                continue
            field = _field_holding(ctx.arguments, marker)
            how = "followed the listener's redirect to" if request.followed else "requested"
            evidence.setdefault(field, f"{how} the canary URL{_label(marker, env)} on its own loopback")
    if ctx.replied:
        reply = ctx.outcome.payload or ctx.outcome.text or ""
        for digits in dict.fromkeys(_PAGE.findall(reply)):
            marker = URL_MARKER + digits
            if marker in sent and PAGE_MARKER + digits not in sent:
                field = _field_holding(ctx.arguments, marker)
                evidence.setdefault(field, f"answered with the content of the canary URL{_label(marker, env)}")
        if FILE_CANARY in sent and any(m not in sent for m in _FILE.findall(reply)):
            field = _field_holding(ctx.arguments, FILE_CANARY)
            evidence.setdefault(field, "answered with the content of the file:// canary outside its scope")
    for field, what in evidence.items():
        led = f" (argument `{field}` = {_shown(ctx.arguments[field], env.redact)})" if field in ctx.arguments else ""
        message = f"fetched a URL its caller gave it: {what}{led}"
        yield Observation(Kind.SSRF, env.redact.text(message), ("fetch", field), Details(error=None))
