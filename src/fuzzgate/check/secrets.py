"""Secrets in what a server sends back: well-known token formats, the user's own patterns, and
canary values fuzzgate plants in the stdio server's environment."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

BUILTIN_PATTERNS: dict[str, str] = {
    "github_token": r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36}\b|\bgithub_pat_[A-Za-z0-9_]{60,}",
    "aws_access_key_id": r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    "private_key": r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY(?: BLOCK)?-----",
    "slack_token": r"\bxox[abprs]-[A-Za-z0-9-]{10,}",
    "openai_api_key": r"\bsk-(?:proj-)?[A-Za-z0-9_-]{32,}",
    "stripe_live_key": r"\b[rs]k_live_[A-Za-z0-9]{20,}",
    "google_api_key": r"\bAIza[0-9A-Za-z_-]{35}\b",
}

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


class Redactor:
    """Removes secrets from anything that goes into a report, a trace or the console."""

    def __init__(self, values: Iterable[str], patterns: Iterable[str] = ()) -> None:
        self._values = sorted({v for v in values if len(v) >= _MIN_SECRET_LEN}, key=len, reverse=True)
        self._patterns = [re.compile(rx) for rx in (*BUILTIN_PATTERNS.values(), *patterns)]

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
