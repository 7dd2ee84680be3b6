"""bench-fetcher: a page-fetching MCP server (MCPServer) whose two buggy tools fetch URLs for their
caller (server-side request forgery). Both answer normally; only the request they make shows the
bug. Bugs FET-1, FET-2.

    python fetcher.py    # stdio; set BENCH_GROUND_TRUTH=FILE to record triggered bugs

The clean look-alike: `fetch_page_safe` fetches only http(s) URLs whose host resolves to public
addresses only, and follows no redirect. A fuzzer sees these bugs only where the server's loopback
is its own (fuzzgate's sandbox runs a listener there); outside a sandbox a fuzzer must not send
them loopback URLs at all.
"""

from __future__ import annotations

import ipaddress
import socket
import urllib.error
import urllib.parse
import urllib.request
from typing import Annotated

import _truth
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

MAX_BYTES = 4096
TIMEOUT_S = 3.0

app = MCPServer("bench-fetcher", log_level="WARNING")

Url = Annotated[str, Field(max_length=2000, description="The URL of the page to fetch.")]


def _public(host: str, port: int) -> bool:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return False
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if not address.is_global or address.is_multicast:
            return False
    return bool(infos)


def _internal(url: str) -> bool:
    """Whether fetching `url` reaches what only this machine should: a file, or a host that is not public."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "file":
        return True
    try:
        port = parts.port or 80
    except ValueError:
        return False
    return bool(parts.hostname) and not _public(parts.hostname, port)


def _read(opener: urllib.request.OpenerDirector, url: str) -> str:
    try:
        with opener.open(url, timeout=TIMEOUT_S) as response:
            return response.read(MAX_BYTES).decode("utf-8", "replace")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise ToolError(f"cannot fetch the page: {type(exc).__name__}") from None


@app.tool()
def fetch_page(url: Url) -> str:
    """Fetch a web page and return its text."""
    if _internal(url):
        _truth.triggered("FET-1")
    return _read(urllib.request.build_opener(), url)


@app.tool()
def preview_link(link: Annotated[str, Field(max_length=2000, description="A link to preview.")]) -> str:
    """Return the start of the page a link leads to."""
    host = (urllib.parse.urlsplit(link).hostname or "").lower()
    if host in ("localhost", "127.0.0.1", "::1"):
        raise ToolError("links to this machine are not allowed")
    if _internal(link):
        _truth.triggered("FET-2")
    return _read(urllib.request.build_opener(), link)[:200]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        raise ToolError("the page redirects elsewhere")


@app.tool()
def fetch_page_safe(url: Url) -> str:
    """Fetch a public web page and return its text."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ToolError("only http and https URLs are fetched")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise ToolError("the URL's port is not a number") from None
    if not _public(parts.hostname, port):
        raise ToolError("the URL's host is not a public address")
    return _read(urllib.request.build_opener(_NoRedirect), url)


@app.tool()
def word_count(text: Annotated[str, Field(max_length=10_000)]) -> int:
    """Count the words of a text."""
    return len(text.split())


if __name__ == "__main__":
    app.run("stdio")
