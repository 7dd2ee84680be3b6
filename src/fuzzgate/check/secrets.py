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
FRAGMENT_LEN = 8
"""A run of this many characters of a known secret is redacted wherever it stands: the prefix a
mutation cut off a token, the last path component a frame label took from a key with `/` in it,
the start of a token an excerpt ended in. Only for values known to be secrets (`Redactor`'s
`strong`): a run of 8 characters of a path or a host name is in every other path and URL."""
_SECRET_NAME = re.compile(r"(?i)key|token|secret|passw|pwd|auth|cred|private|session|cookie|signature|bearer|jwt")
"""The names (of an env variable, an option, a URL's query parameter) whose values are secrets."""
_TOKEN_END = re.compile(r"[A-Za-z0-9_+/=.~-]{1,128}\Z")
"""The last characters of a text, when they are a token's: at a cut, a secret's first characters
that no pattern matches any more (a cut `ghp_...` is no longer 36 characters long)."""


_HIDDEN = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])"
    r"|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)
"""What a terminal does not show: escape sequences (CSI, OSC, two-character), the other control
characters but tab and line ends, and the invisible format characters (zero-width, bidi, soft
hyphen, BOM). A secret with one of them inside reads whole in a CI log, yet no value or pattern
matches it as written."""


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
    whose end fuzzgate never sees (an over-long stderr line). The `strong` values, known to be
    secrets, are also redacted in part (`FRAGMENT_LEN`), for the cuts made where no redactor was
    at hand (a mutation's half of a value, a file name taken from a path).
    """

    def __init__(self, values: Iterable[str], patterns: Iterable[str] = (), strong: Iterable[str] = ()) -> None:
        strong = [v for v in strong if len(v) > FRAGMENT_LEN]
        forms = {form for v in (*values, *strong) if len(v) >= _MIN_SECRET_LEN for form in encodings(v)}
        # Longest first: a padded base64 form contains the unpadded one, an escaped form the raw one's pieces.
        self._values = sorted(forms, key=lambda f: (-len(f), f))
        self._patterns = [re.compile(rx) for rx in (_PRIVATE_KEY_BLOCK, *BUILTIN_PATTERNS.values(), *patterns)]
        # Every run of FRAGMENT_LEN characters of a strong value, with where it stands in which value,
        # so that a match can be followed to the end of what the text holds of that value.
        self._runs: dict[str, list[tuple[str, int]]] = {}
        for value in sorted(set(strong)):
            for start in range(len(value) - FRAGMENT_LEN + 1):
                self._runs.setdefault(value[start : start + FRAGMENT_LEN], []).append((value, start))
        self._run_pattern = re.compile("|".join(map(re.escape, sorted(self._runs)))) if self._runs else None

    def __call__(self, text: str | None) -> str | None:
        if not text:
            return text
        redacted = self._redacted(text)
        if _HIDDEN.search(redacted) is None:
            return redacted
        # A secret split by what a terminal hides (`sk-live-\x1b[0m0123...`) is matched in the text
        # as it reads; such a text loses its hidden characters, which mean nothing in a report.
        shown = _HIDDEN.sub("", redacted)
        again = self._redacted(shown)
        return again if again != shown else redacted

    def _redacted(self, text: str) -> str:
        for value in self._values:
            text = text.replace(value, REDACTED)
        for pattern in self._patterns:
            text = pattern.sub(REDACTED, text)
        return self._without_fragments(text)

    def _without_fragments(self, text: str) -> str:
        """`text` with every run of FRAGMENT_LEN or more characters of a strong value redacted, each
        taken to its longest (a run matched at its start is followed as far as the value goes)."""
        if self._run_pattern is None or len(text) < FRAGMENT_LEN:
            return text
        pieces: list[str] = []
        pos = 0
        while (match := self._run_pattern.search(text, pos)) is not None:
            end = run_end = match.end()
            for value, start in self._runs[match.group(0)]:
                more = 0
                while (
                    run_end + more < len(text)
                    and start + FRAGMENT_LEN + more < len(value)
                    and text[run_end + more] == value[start + FRAGMENT_LEN + more]
                ):
                    more += 1
                end = max(end, run_end + more)
            pieces += [text[pos : match.start()], REDACTED]
            pos = end
        return "".join([*pieces, text[pos:]])

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

    def open_end(self, text: str, *, cut: bool = False) -> str:
        """`text` redacted, for a text cut off by someone else: an end that could be the first
        characters of a known value (in any of its forms) is redacted too. With `cut` (fuzzgate cut
        the text there, wherever that fell) so is an end that is a token's (up to its last 128
        characters), which could be a pattern's secret cut short."""
        text = self.text(text)
        partial = 0
        for value in self._values:
            for size in range(min(len(value) - 1, len(text)), partial, -1):
                if text.endswith(value[:size]):
                    partial = size
                    break
        token = _TOKEN_END.search(text) if cut else None
        if cut and token is not None and not text.endswith(REDACTED):
            partial = max(partial, len(token.group(0)))
        return text[: len(text) - partial] + REDACTED if partial else text


def url_secrets(url: str | None) -> list[str]:
    """The secrets written into `url`: its userinfo's password (also `user:password` in base64, as
    HTTP's Basic authentication sends it) and the values of query parameters named like a
    secret (`password`, `ssl_password` as redis-py takes them, `api_key`, `token`, `sig`, ...), each
    as written and decoded. A URL that does not parse is a secret whole; a directory (no `://`)
    holds none."""
    if not url or "://" not in url:
        return []
    try:
        parts = urllib.parse.urlsplit(url)
        found = [parts.password or ""]
        if parts.password:
            basic = f"{parts.username or ''}:{parts.password}".encode()
            found += [base64.b64encode(basic).decode("ascii"), base64.urlsafe_b64encode(basic).decode("ascii")]
    except ValueError:
        return [url]
    found += [
        value
        for name, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
        if _SECRET_NAME.search(name) or name.lower() == "sig"
    ]
    return [form for value in found if value for form in {value, urllib.parse.unquote(value)}]


def header_secrets(value: str) -> list[str]:
    """A header's value and its parts: the credentials after a scheme (`Bearer TOKEN`), and for
    `Basic` the decoded `user:password` and its password, which a server may log on their own."""
    scheme, _, credentials = value.strip().partition(" ")
    found = [value, *(part for part in credentials.split() if len(part) >= _MIN_SECRET_LEN)]
    if scheme.lower() == "basic" and credentials.strip():
        try:
            decoded = base64.b64decode(credentials.strip(), validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            decoded = ""
        found += [decoded, decoded.partition(":")[2]] if decoded else []
    return [part for part in found if part]


def argument_secrets(args: Iterable[str]) -> list[str]:
    """The secrets on a command line: the value of an option named like a secret (`--token=T`,
    `--api-key T`, `API_KEY=T`) and the secrets of a URL (`url_secrets`)."""
    found: list[str] = []
    words = list(args)
    for index, word in enumerate(words):
        name, equals, value = word.partition("=")
        if "://" in word:
            found += url_secrets(word if "://" in name else value)
        if equals and _SECRET_NAME.search(name):
            found.append(value)
        elif (
            word.startswith("-")
            and not equals
            and _SECRET_NAME.search(word)
            and index + 1 < len(words)
            and not words[index + 1].startswith("-")
        ):
            found.append(words[index + 1])
    return found


def _pathlike(value: str) -> bool:
    return value.startswith(("/", "./", "../", "~")) or "://" in value


def redactor_for(config: ServerSettings, canaries: Mapping[str, str]) -> Redactor:
    """The run's redactor: the target's env and header values, the canaries, every value a `${VAR}`
    of the config file expanded to, the secrets of the command line and of a target or store URL
    (`argument_secrets`, `url_secrets`), the built-in and the configured secret patterns.

    The values known to be secrets (a header's, an env variable's or an option's named like a
    secret, a URL's password or token, a canary), unless they are paths, are redacted in part too
    (`FRAGMENT_LEN`)."""
    target = config.target
    named = [v for k, v in target.env.items() if _SECRET_NAME.search(k)]
    headers = [header_secrets(value) for value in target.headers.values()]
    # A value with a scheme ("Bearer T") is strong by its credentials: "Bearer s" is in other texts.
    credentials = [part for parts in headers for part in (parts[1:] or parts)]
    urls = url_secrets(target.url) + url_secrets(config.store)
    arguments = argument_secrets(target.args)
    values = [*target.env.values(), *(p for parts in headers for p in parts), *canaries.values(), *config.expanded]
    values += urls + arguments
    strong = [v for v in (*named, *credentials, *urls, *arguments, *canaries.values()) if not _pathlike(v)]
    return Redactor(values, config.secret_patterns, strong)
