"""Secrets in what a server sends back: well-known token formats, the user's own patterns, and
canary values fuzzgate plants in the stdio server's environment; and the redaction of every text
fuzzgate writes. Detection reads the raw text; redaction is for what is written."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from fuzzgate.config.views import ServerSettings

BUILTIN_PATTERNS: dict[str, str] = {
    "github_token": r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36}\b|\bgithub_pat_[A-Za-z0-9_]{60,}",
    "aws_access_key_id": r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    "private_key": r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY(?: BLOCK)?-----",
    "slack_token": r"\bxox[abprs]-[A-Za-z0-9-]{10,}",
    "openai_api_key": r"\bsk-(?:proj-)?[A-Za-z0-9_-]{32,}",
    "stripe_live_key": r"\b[rs]k_live_[A-Za-z0-9]{20,}",
    "google_api_key": r"\bAIza[0-9A-Za-z_-]{35}\b",
}

_PRIVATE_KEY_BLOCK = (
    r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY(?: BLOCK)?-----"
    r"(?:[\s\S]*?-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----|[\s\S]*)"
)
"""Detection needs only a private key's header; redaction takes the key with it, to its END line or,
when the text was cut before that, to the end of the text."""

CANARY_NAMES = ("FUZZGATE_CANARY_TOKEN", "FUZZGATE_CANARY_API_KEY")
REDACTED = "[REDACTED]"
_MIN_SECRET_LEN = 6
"""Shorter env or header values ("1", "true") are not secrets and would redact half of every text."""


def canary_environment(seed: int) -> dict[str, str]:
    """Canary values for the server's environment: deterministic per seed, unguessable by a fuzzer."""
    return {name: "fzgcanary" + hashlib.sha256(f"{name}:{seed}".encode()).hexdigest()[:24] for name in CANARY_NAMES}


@dataclass(frozen=True, slots=True)
class SecretHit:
    pattern: str
    """`canary`, a built-in pattern's name, or `custom:<regex>`."""
    value: str


class SecretScanner:
    def __init__(self, custom_patterns: Iterable[str], canaries: Mapping[str, str]) -> None:
        self._patterns = [(name, re.compile(rx)) for name, rx in BUILTIN_PATTERNS.items()]
        self._patterns += [(f"custom:{rx}", re.compile(rx)) for rx in custom_patterns]
        self._canaries = tuple(v for v in canaries.values() if v)

    def scan(self, text: str, sent: Any) -> list[SecretHit]:
        """Secrets in `text` that the request (`sent`) did not itself contain: an echo is no leak."""
        if not text:
            return []
        echoed = json.dumps(sent, ensure_ascii=False)
        hits: list[SecretHit] = []
        for canary in self._canaries:
            if canary in text:
                hits.append(SecretHit("canary", canary))
        for name, pattern in self._patterns:
            for match in pattern.finditer(text):
                value = match.group(0)
                if value and value not in echoed:
                    hits.append(SecretHit(name, value))
                    break
        return hits


def encodings(value: str) -> set[str]:
    """`value` as written and as it reads after the encodings a server passes text through before
    it reaches a reply or a log: JSON string escapes (ASCII-only or not), Python's `repr`,
    percent-encoding (`quote`, `quote_plus`, upper- or lower-case hex) and base64 of the whole value
    (standard or URL-safe, padded or not)."""
    raw = value.encode("utf-8", "surrogatepass")
    percent = {urllib.parse.quote(value, safe=safe) for safe in ("", "/")}
    percent |= {urllib.parse.quote_plus(value, safe=safe) for safe in ("", "/")}
    percent |= {re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), p) for p in percent}
    b64 = {base64.b64encode(raw).decode("ascii"), base64.urlsafe_b64encode(raw).decode("ascii")}
    b64 |= {b.rstrip("=") for b in b64}
    return {
        value,
        json.dumps(value, ensure_ascii=True)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        repr(value)[1:-1],
        *percent,
        *b64,
    }


class Redactor:
    """Removes secrets from anything that goes into a report, a trace, a baseline file or the console.

    Known values (env and header values, canaries) are matched as written and in their common
    encodings (`encodings`); the built-in and the user's patterns are matched as written. Redact a
    text whole *before* cutting, escaping or excerpting it: once a secret is cut in two or escaped,
    no whole value matches any more. `cut` does both in that order; `open_end` is for the rare text
    whose end fuzzgate never sees (an over-long stderr line).
    """

    def __init__(self, values: Iterable[str], patterns: Iterable[str] = ()) -> None:
        forms = {form for v in values if len(v) >= _MIN_SECRET_LEN for form in encodings(v)}
        # Longest first: a padded base64 form contains the unpadded one, an escaped form the raw one's pieces.
        self._values = sorted(forms, key=lambda f: (-len(f), f))
        self._patterns = [re.compile(rx) for rx in (_PRIVATE_KEY_BLOCK, *BUILTIN_PATTERNS.values(), *patterns)]

    def __call__(self, text: str | None) -> str | None:
        if not text:
            return text
        for value in self._values:
            text = text.replace(value, REDACTED)
        for pattern in self._patterns:
            text = pattern.sub(REDACTED, text)
        return text

    def text(self, text: str) -> str:
        return self(text) or ""

    def cut(self, text: str, limit: int, ellipsis: str = "") -> str:
        """`text` redacted whole, then cut to at most `limit` characters (never inside a `[REDACTED]`),
        with `ellipsis` after a cut."""
        redacted = self.text(text)
        if len(redacted) <= limit:
            return redacted
        straddling = redacted.find(REDACTED, max(0, limit - len(REDACTED) + 1), limit + len(REDACTED) - 1)
        return redacted[: straddling if 0 <= straddling < limit else limit] + ellipsis

    def open_end(self, text: str) -> str:
        """`text` redacted, for a text cut off by someone else: an end that could be the first
        characters of a known value (in any of its forms) is redacted too."""
        text = self.text(text)
        partial = 0
        for value in self._values:
            for size in range(min(len(value) - 1, len(text)), partial, -1):
                if text.endswith(value[:size]):
                    partial = size
                    break
        return text[: len(text) - partial] + REDACTED if partial else text


_CREDENTIAL_PARAMETERS = frozenset({"password", "ssl_password"})
"""The query parameters through which redis-py takes secrets (`redis://host/0?password=...`)."""


def url_secrets(url: str | None) -> list[str]:
    """The secrets written into `url`: its userinfo's password and the values of a `password` or
    `ssl_password` query parameter, each as written and decoded. A URL that does not parse is a
    secret whole; a directory (no `://`) holds none."""
    if not url or "://" not in url:
        return []
    try:
        parts = urllib.parse.urlsplit(url)
        found = [parts.password or ""]
    except ValueError:
        return [url]
    found += [
        value
        for name, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
        if name.lower() in _CREDENTIAL_PARAMETERS
    ]
    return [form for value in found if value for form in {value, urllib.parse.unquote(value)}]


def redactor_for(config: ServerSettings, canaries: Mapping[str, str]) -> Redactor:
    """The run's redactor: the target's env and header values, the canaries, every value a `${VAR}`
    of the config file expanded to, the password of a target URL or store URL with credentials in
    it, the built-in and the configured secret patterns."""
    target = config.target
    values = [*target.env.values(), *target.headers.values(), *canaries.values(), *config.expanded]
    values += url_secrets(target.url) + url_secrets(config.store)
    return Redactor(values, config.secret_patterns)
