"""Reserved hosts: every host a generated value names is one reserved for documentation and tests.

Where no sandbox runs (the Docker action, macOS, `--sandbox off`) what the server under test
fetches goes out for real, so the rule holds always, sandbox or not. Reserved are `example.com`,
`example.org`, `example.net` and their subdomains; the `.test`, `.invalid`, `.example` and
`.localhost` names and `localhost`; 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24 and
2001:db8::/32; loopback (127.0.0.0/8, ::1) and the unspecified addresses (0.0.0.0, ::), which
reach only this machine.

`Confinement.apply` rewrites a JSON value. In every string it finds the host of each URL (after
`scheme://` for a scheme a client connects through, `NETWORK_SCHEMES`; after `http:`, `https:`,
`ws:`, `wss:`, `ftp:` with any slashes or none, as browsers read them; after `//` at the start),
of each e-mail address, the whole string when it is an IP address, and the authority a string
begins with when its key names a host (`host`, `url`, `email`, ... or a property with a host
format) and it begins with no `scheme://`. A name outside the reserved ones keeps its text
(characters a resolver could read otherwise become `-`) and gets `.example` appended
(`api.github.com` -> `api.github.com.example`, `8.8.8.8.8` -> `8.8.8.8.8.example`); an IPv4
address keeps its last octet in 192.0.2.0/24, an IPv6 address its low 96 bits under 2001:db8::/32.

Values the schema fixes (`enum`, `const`) are kept: a rewritten one could never be valid, and the
server takes no other. Everything else is confined, the schema's own `examples` and `default`
too: they are sent, and the author wrote them as illustrations. Pure and deterministic.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

RESERVED_NAMES: Final = ("example.com", "example.org", "example.net", "example", "test", "invalid", "localhost")
"""A host is reserved when it is one of these or ends with a dot and one of these."""
RESERVED_NETWORKS: Final = tuple(
    ipaddress.ip_network(cidr)
    for cidr in (
        "192.0.2.0/24",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "127.0.0.0/8",
        "0.0.0.0/32",
        "2001:db8::/32",
        "::1/128",
        "::/128",
    )
)
HOST_FORMATS: Final = frozenset(
    {"hostname", "idn-hostname", "email", "idn-email", "ipv4", "ipv6", "uri", "url", "iri"}
    | {"uri-reference", "iri-reference"}
)
HOST_WORDS: Final = frozenset(
    {
        "host", "hosts", "hostname", "hostnames", "domain", "domains", "server", "servers", "addr", "address",
        "ip", "ips", "ipv4", "ipv6", "email", "emails", "mail", "endpoint", "endpoints", "url", "urls", "uri",
        "uris", "link", "links", "href", "website", "site", "origin", "proxy", "remote", "upstream", "webhook",
        "callback",
    }
)  # fmt: skip
"""A key holding one of these words names a host: a bare string there is read as one."""

_MAX_CACHED: Final = 1024
_SUFFIX: Final = ".example"
_DOCUMENTATION_V4: Final = 0xC0000200  # 192.0.2.0
_DOCUMENTATION_V6: Final = 0x20010DB8 << 96
_LOW_96: Final = (1 << 96) - 1
_SPECIAL_SCHEMES: Final = frozenset({"http", "https", "ws", "wss", "ftp"})
NETWORK_SCHEMES: Final = _SPECIAL_SCHEMES | frozenset(
    {
        "file", "ftps", "sftp", "tftp", "gopher", "dict", "ldap", "ldaps", "smtp", "smtps", "imap", "imaps",
        "pop3", "pop3s", "telnet", "ssh", "git", "svn", "redis", "rediss", "mysql", "postgres", "postgresql",
        "mongodb", "amqp", "amqps", "mqtt", "mqtts", "nats", "kafka", "irc", "ircs", "xmpp", "sip", "sips",
        "rtsp", "rtmp", "nntp", "news", "dns", "s3", "gs", "ipp", "nfs", "smb", "cifs", "vnc", "rdp",
    }
)  # fmt: skip
"""Schemes whose authority a client connects to (a part of `git+ssh`, `mongodb+srv` counts): only
their hosts are confined; an MCP resource's own scheme (`notes://1`) names no host on the network."""
_SCHEME: Final = re.compile(r"(?<![A-Za-z0-9])([A-Za-z][A-Za-z0-9+.-]*):([/\\]*)")
_AUTHORITY: Final = re.compile(r"[^/?#\\\s\"'<>`]*")
_SPECIAL: Final = re.compile(r"(?<![A-Za-z0-9])(?:https?|wss?|ftp):[/\\]*", re.IGNORECASE)
_OPAQUE: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_EMAIL: Final = re.compile(r"(?<=[^\s@])@(\[[^\]\s]*\]|[^\s@/?#\\<>()\[\]\"',;:`]+)")
_WORD: Final = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def is_reserved_host(host: str) -> bool:
    """Whether `host` (a name or an IP address, brackets allowed) is in the reserved set."""
    address = host[1:-1].partition("%")[0] if host.startswith("[") and host.endswith("]") else host
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return _host(host) == host
    return _confined_ip(parsed) == parsed


def names_host(key: str) -> bool:
    """Whether a key's words say its value is a host, an address or a URL (`base_url`, `smtpHost`)."""
    return any(word.lower() in HOST_WORDS for word in _WORD.findall(key))


_CONFINEMENTS: dict[int, tuple[Any, Confinement]] = {}
"""`Confinement.of` by schema identity."""


@dataclass(frozen=True, slots=True)
class Confinement:
    """The confinement of one schema's values: what it keeps, and which keys name hosts."""

    kept: frozenset[str] = frozenset()
    """Strings the schema fixes (`enum`, `const`), sent as they are."""
    host_keys: frozenset[str] = frozenset()
    """Property names whose schema has a host format, read as hosts like `HOST_WORDS` keys."""

    @classmethod
    def of(cls, schema: Any) -> Confinement:
        """The confinement of `schema`, worked out once per schema object (schemas are never changed)."""
        cached = _CONFINEMENTS.get(id(schema))
        if cached is not None and cached[0] is schema:
            return cached[1]
        made = cls._of(schema)
        if len(_CONFINEMENTS) >= _MAX_CACHED:
            _CONFINEMENTS.clear()
        # The schema is held with it: its id names no other object while it is here.
        _CONFINEMENTS[id(schema)] = (schema, made)
        return made

    @classmethod
    def _of(cls, schema: Any) -> Confinement:
        kept: set[str] = set()
        keys: set[str] = set()
        for node in _nodes(schema):
            fixed = node.get("enum")
            if isinstance(fixed, list):
                kept.update(value for value in fixed if isinstance(value, str))
            if isinstance(node.get("const"), str):
                kept.add(node["const"])
            properties = node.get("properties")
            if isinstance(properties, Mapping):
                keys.update(
                    str(name)
                    for name, sub in properties.items()
                    if isinstance(sub, Mapping) and sub.get("format") in HOST_FORMATS
                )
        return cls(frozenset(kept), frozenset(keys))

    def apply(self, value: Any, key: str = "") -> Any:
        """`value` with every host it names confined; `value` itself when nothing changed."""
        if isinstance(value, str):
            return self.text(value, key)
        if isinstance(value, list):
            items = [self.apply(item, key) for item in value]
            return value if all(a is b for a, b in zip(items, value, strict=True)) else items
        if isinstance(value, dict):
            entries = {name: self.apply(item, str(name)) for name, item in value.items()}
            return value if all(entries[name] is item for name, item in value.items()) else entries
        return value

    def text(self, text: str, key: str = "") -> str:
        """One string confined, read as a host too when `key` names one."""
        if text in self.kept:
            return text
        host_key = bool(key) and (key in self.host_keys or names_host(key))
        confined = confine_text(text, bare=host_key)
        return text if confined == text else confined


def confine_text(text: str, *, bare: bool = False) -> str:
    """`text` with the hosts of its URLs and e-mail addresses confined, and the whole of it when it
    is an IP address; with `bare`, also the authority it begins with when it begins with no URL
    (`evil.com:80/x`, `user@evil.com`)."""
    whole = _ip(text)
    if whole is not None:
        return str(whole)
    parts: list[str] = []
    done = 0
    for start, end in sorted(set(_authorities(text))):
        if start < done:
            continue  # `git+ssh://` is read as `ssh://` too
        if not _has_host(text[start:end]):
            # Nothing to confine (`http::x`): a URL inside it (`http::x[http:evil`) is still read.
            continue
        parts += [text[done:start], _authority(text[start:end])]
        done = end
    parts.append(text[done:])
    confined = "".join(parts)
    if bare and confined[:1].strip() and _url_start(confined) < 0 and not _OPAQUE.match(confined):
        _, end = _span(confined, 0)
        confined = _authority(confined[:end]) + confined[end:]
    return _EMAIL.sub(_email_domain, confined)


def _authorities(text: str) -> Iterator[tuple[int, int]]:
    """Where each URL's authority lies in `text`."""
    if text.startswith("//"):
        yield _span(text, 2)
    if ":" not in text:
        return
    for match in _SPECIAL.finditer(text):
        yield _span(text, match.end())
    for match in _SCHEME.finditer(text):
        if match.group(2).startswith("//") and _network(match.group(1).lower()):
            yield _span(text, match.start(2) + 2)


def _url_start(text: str) -> int:
    """Where the authority of a URL `text` begins with lies, -1 when it begins with none."""
    if text.startswith("//"):
        return 2
    match = _SCHEME.match(text)
    if match is None:
        return -1
    if match.group(1).lower() in _SPECIAL_SCHEMES:
        return match.end()
    return match.start(2) + 2 if match.group(2).startswith("//") and _network(match.group(1).lower()) else -1


def _network(scheme: str) -> bool:
    return any(part in NETWORK_SCHEMES for part in scheme.split("+"))


def _span(text: str, start: int) -> tuple[int, int]:
    end = _AUTHORITY.match(text, start)
    return start, end.end() if end else start


def _has_host(authority: str) -> bool:
    """Whether `authority` names a host (`_authority` leaves one that does not as it is)."""
    hostport = authority.rpartition("@")[2]
    return hostport.startswith("[") or bool(hostport.partition(":")[0])


def _authority(authority: str) -> str:
    userinfo, at, hostport = authority.rpartition("@")
    if hostport.startswith("["):
        close = hostport.find("]")
        host, rest = (hostport[1:close], hostport[close + 1 :]) if close >= 0 else (hostport[1:], "")
        return f"{userinfo}{at}[{_bracketed(host)}]{rest}"
    host, colon, port = hostport.partition(":")
    if not host:
        return authority
    return f"{userinfo}{at}{_host(host)}{colon}{port}"


def _bracketed(host: str) -> str:
    address, _, _ = host.partition("%")
    try:
        return str(_confined_ip(ipaddress.IPv6Address(address)))
    except ValueError:
        return "2001:db8::1"


def _email_domain(match: re.Match[str]) -> str:
    domain = match.group(1)
    if domain.startswith("["):
        inner = domain[1:-1] if domain.endswith("]") else domain[1:]
        found = _ip(inner.removeprefix("IPv6:"))
        literal = "192.0.2.1" if found is None else str(found)
        return f"@[{'IPv6:' if inner.startswith('IPv6:') else ''}{literal}]"
    return "@" + _host(domain)


def _host(host: str) -> str:
    """A host name or IP address, confined."""
    if host.startswith("[") and host.endswith("]"):
        return f"[{_bracketed(host[1:-1])}]"
    found = _ip(host)
    if found is not None:
        return str(found)
    clean = "".join(c if _name_char(c) else "-" for c in host)
    name = clean.rstrip(".").lower()
    if any(name == reserved or name.endswith("." + reserved) for reserved in RESERVED_NAMES):
        return clean
    return clean.rstrip(".") + _SUFFIX + ("." if clean.endswith(".") else "")


def _name_char(char: str) -> bool:
    """Letters, digits, `-`, `.`, `_`: a resolver or IDNA may read anything else as another
    character (`%00` ends the name in C, `\u3002` is a dot) or end the host there."""
    return char.isalnum() or (char.isascii() and char in "-._")


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """`text` as a confined IP address, None when it is not one."""
    # An address has a `.` (IPv4) or a `:` (IPv6): a reply's words and numbers, most of what is
    # confined, never do, and `ip_address` refusing them raised (and formatted) an error each.
    if not text or not (text[0].isdigit() or text[0] in ":abcdefABCDEF") or ("." not in text and ":" not in text):
        return None
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    return _confined_ip(address)


def _confined_ip(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    if any(address in network or (mapped is not None and mapped in network) for network in RESERVED_NETWORKS):
        return address
    if isinstance(address, ipaddress.IPv4Address):
        return ipaddress.IPv4Address(_DOCUMENTATION_V4 | (int(address) & 0xFF))
    return ipaddress.IPv6Address(_DOCUMENTATION_V6 | (int(address) & _LOW_96))


def _nodes(schema: Any) -> Iterator[Mapping[str, Any]]:
    pending = [schema]
    while pending:
        node = pending.pop()
        if isinstance(node, Mapping):
            yield node
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
