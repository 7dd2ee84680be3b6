"""Where a shared store lives and what goes wrong there: a `redis://`, `rediss://` or `unix://` URL
or else a directory (`is_url`), the URL with its credentials masked for messages and logs
(`mask_url`), and `StoreError`, which the store and each of its backends raise. The backends
(`set_directory.py`, `redis_db.py`) import this, never `shared.py`, which opens them."""

from __future__ import annotations

from urllib.parse import unquote_plus, urlsplit

from fuzzgate.model.errors import FuzzgateError

URL_SCHEMES = ("redis://", "rediss://", "unix://")


class StoreError(FuzzgateError):
    """The shared store cannot be reached, read or written; the message names the store."""

    title = "store error"


def is_url(spec: str) -> bool:
    """Whether `spec` names a Redis server (else it is a directory)."""
    return spec.startswith(URL_SCHEMES)


CREDENTIAL_PARAMETERS = frozenset({"password", "username", "ssl_password"})
"""Query parameters through which redis-py takes credentials (`redis://host/0?password=...`)."""


def mask_url(url: str) -> str:
    """`url` with its credentials replaced by `***`, fit for messages and logs: the password of its
    userinfo (`redis://user:***@host`) and the values of the query's `password`, `username` and
    `ssl_password`, which redis-py takes as well. A URL that does not parse is masked whole after
    its scheme, since where its credentials sit cannot be told."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return url.split("://", 1)[0] + "://***" if "://" in url else url
    # Edited in place rather than rebuilt: `urlunsplit` would drop the empty host of `unix:///path`.
    head, question, rest = url.partition("?")
    query, hash_sign, fragment = rest.partition("#")
    if password:
        head = head.replace(parts.netloc, f"{parts.username or ''}:***@{parts.netloc.rpartition('@')[2]}", 1)
    query = "&".join(_masked_parameter(item) for item in query.split("&"))
    return head + question + query + hash_sign + fragment


def _masked_parameter(item: str) -> str:
    name, equals, _value = item.partition("=")
    return f"{name}=***" if equals and unquote_plus(name).lower() in CREDENTIAL_PARAMETERS else item
