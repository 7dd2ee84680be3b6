"""String formats: how to generate them, edge samples of each, and the checks jsonschema lacks here.

jsonschema asserts `date-time`, `time`, `uri` and `hostname` only when optional packages are
installed; without them a broken timestamp would count as schema-valid and the engine would blame
the server for rejecting it. `format_checker` adds plain RFC 3339 / RFC 3986 / RFC 1123 checks for
whatever the installed jsonschema cannot check itself.
"""

from __future__ import annotations

import ipaddress
import re
import string
from datetime import UTC, date, datetime, time, timedelta, timezone
from typing import Any, Final

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy
from jsonschema import FormatChecker

_OFFSETS: Final = (
    UTC,
    timezone(timedelta(hours=5, minutes=30)),
    timezone(timedelta(hours=-8)),
    timezone(timedelta(hours=14)),
)

_DATE_TIME: Final = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?"
    r"([Zz]|[+-]([0-9]{2}):([0-9]{2}))",
    re.ASCII,
)
_TIME: Final = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?([Zz]|[+-]([0-9]{2}):([0-9]{2}))", re.ASCII)
_URI: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*", re.ASCII)
_LABEL: Final = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?", re.ASCII)
_URL_SAFE: Final = string.ascii_letters + string.digits + "-._~"
_LABEL_CHARS: Final = string.ascii_letters + string.digits
_LOCAL_CHARS: Final = string.ascii_letters + string.digits + "+-_"
_RESERVED_DOMAINS: Final = ("example.com", "example.org", "example.net", "example", "test", "invalid")
"""Generated names, e-mail and URL hosts lie under these (`reserved` says why)."""
_DOCUMENTATION_V4: Final = ("192.0.2", "198.51.100", "203.0.113", "127.0.0")


def _is_date_time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    match = _DATE_TIME.fullmatch(value)
    if match is None:
        return False
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    try:
        date(year, month, day)
    except ValueError:
        return False
    offset_ok = match.group(9) is None or (int(match.group(9)) < 24 and int(match.group(10)) < 60)
    return hour < 24 and minute < 60 and second <= 60 and offset_ok


def _is_time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    match = _TIME.fullmatch(value)
    if match is None:
        return False
    hour, minute, second = (int(match.group(i)) for i in range(1, 4))
    offset_ok = match.group(6) is None or (int(match.group(6)) < 24 and int(match.group(7)) < 60)
    return hour < 24 and minute < 60 and second <= 60 and offset_ok


def _is_uri(value: object) -> bool:
    return not isinstance(value, str) or _URI.fullmatch(value) is not None


def _is_hostname(value: object) -> bool:
    if not isinstance(value, str):
        return True
    name = value.removesuffix(".")
    return 0 < len(name) <= 253 and all(_LABEL.fullmatch(label) for label in name.split("."))


_FALLBACK_CHECKS: Final = {
    "date-time": _is_date_time,
    "time": _is_time,
    "uri": _is_uri,
    "hostname": _is_hostname,
}


def format_checker(validator_class: Any) -> FormatChecker:
    """The validator class's own format checker, plus the checks its optional dependencies would add."""
    checker = FormatChecker(formats=list(validator_class.FORMAT_CHECKER.checkers))
    for name, check in _FALLBACK_CHECKS.items():
        if name not in checker.checkers:
            checker.checks(name)(check)
    return checker


def _rfc3339(moment: datetime | time) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def _domain(labels: list[str], tld: str) -> str:
    return ".".join([*labels, tld])


def _email(local: list[str], domain: str) -> str:
    return f"{'.'.join(local)}@{domain}"


def _url(scheme: str, host: str, path: list[str], query: str) -> str:
    return f"{scheme}://{host}/{'/'.join(path)}{'?q=' + query if query else ''}"


def _ipv4(prefix: str, last: int) -> str:
    return f"{prefix}.{last}"


def _ipv6(low: int) -> str:
    return str(ipaddress.IPv6Address((0x20010DB8 << 96) | low))


def _domains() -> SearchStrategy[str]:
    # Hypothesis's own domains() draws real TLDs (and costs ~1.5 ms a value): a server that fetches
    # what it is given would reach a third party. Labels under reserved names only.
    labels = st.lists(st.text(alphabet=_LABEL_CHARS, min_size=1, max_size=12), min_size=1, max_size=3)
    return st.builds(_domain, labels, st.sampled_from(_RESERVED_DOMAINS))


def _emails() -> SearchStrategy[str]:
    atoms = st.lists(st.text(alphabet=_LOCAL_CHARS, min_size=1, max_size=8), min_size=1, max_size=3)
    return st.builds(_email, atoms, _domains())


def _urls() -> SearchStrategy[str]:
    segments = st.lists(st.text(alphabet=_URL_SAFE, min_size=1, max_size=8), max_size=3)
    query = st.one_of(st.just(""), st.text(alphabet=_URL_SAFE, min_size=1, max_size=8))
    return st.builds(
        _url,
        st.sampled_from(("https", "http")),
        _domains(),
        segments,
        query,
    )


def format_strategy(name: str) -> SearchStrategy[str] | None:
    """Values of a known format; None when the format is unknown (it is then only an annotation)."""
    if name == "date-time":
        return st.datetimes(timezones=st.sampled_from(_OFFSETS)).map(_rfc3339)
    if name == "date":
        return st.dates().map(date.isoformat)
    if name == "time":
        return st.times(timezones=st.sampled_from(_OFFSETS)).map(_rfc3339)
    if name in ("email", "idn-email"):
        return _emails()
    if name in ("uri", "url", "iri", "uri-reference", "iri-reference"):
        return _urls()
    if name == "uuid":
        return st.uuids().map(str)
    if name == "ipv4":
        return st.builds(_ipv4, st.sampled_from(_DOCUMENTATION_V4), st.integers(0, 255))
    if name == "ipv6":
        return st.one_of(st.just("::1"), st.integers(0, 2**96 - 1).map(_ipv6))
    if name in ("hostname", "idn-hostname"):
        return _domains()
    if name in VALID_SAMPLES:
        return st.sampled_from(VALID_SAMPLES[name])
    return None


VALID_SAMPLES: Final[dict[str, tuple[str, ...]]] = {
    "date-time": ("2024-01-01T00:00:00Z", "1970-01-01T00:00:00Z", "2024-02-29T23:59:59.999999-12:00"),
    "date": ("2024-01-01", "0001-01-01", "9999-12-31", "2024-02-29"),
    "time": ("12:00:00Z", "00:00:00Z", "23:59:59.999+14:00"),
    "email": ("user@example.com", "a@b.test", "first.last+tag@sub.example.org"),
    "idn-email": ("user@example.com",),
    "uri": ("https://example.com/", "http://127.0.0.1:1/", "file:///etc/passwd", "urn:isbn:0451450523"),
    "url": ("https://example.com/", "http://127.0.0.1:1/", "http://[::1]:8080/path?q=1#frag"),
    "iri": ("https://example.com/",),
    "uri-reference": ("https://example.com/", "/relative/path", "#fragment"),
    "iri-reference": ("https://example.com/",),
    "uri-template": ("https://example.com/{id}",),
    "uuid": (
        "123e4567-e89b-42d3-a456-426614174000",
        "00000000-0000-0000-0000-000000000000",
        "ffffffff-ffff-ffff-ffff-ffffffffffff",
    ),
    "ipv4": ("192.0.2.1", "0.0.0.0", "203.0.113.255", "127.0.0.1"),
    "ipv6": ("2001:db8::1", "::", "::1", "::ffff:127.0.0.1"),
    "hostname": ("example.com", "localhost", "a" * 63 + ".example"),
    "idn-hostname": ("example.com",),
    "regex": ("^a+$", ".*"),
    "json-pointer": ("/a", "", "/a~1b/0"),
    "relative-json-pointer": ("0", "1/a"),
    "duration": ("P1D", "PT1H30M"),
}

INVALID_SAMPLES: Final[dict[str, tuple[str, ...]]] = {
    "date-time": ("not-a-date-time", "2024-13-45T25:61:00Z", "2024-01-01 00:00:00"),
    "date": ("not-a-date", "2024-02-30", "24-1-1"),
    "time": ("not-a-time", "25:00:00Z"),
    "email": ("not-an-email",),
    "uri": ("not a uri", "//no-scheme"),
    "uuid": ("not-a-uuid", "123e4567e89b42d3a456426614174000z"),
    "ipv4": ("256.256.256.256", "1.2.3"),
    "ipv6": ("not-an-ipv6", "1:2:3:4:5:6:7:8:9"),
    "hostname": ("-bad-.example", "a" * 64 + ".example"),
    "regex": ("(unclosed",),
    "json-pointer": ("no-leading-slash",),
}
