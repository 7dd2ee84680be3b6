"""An MCP server that fetches URLs for its caller: two tools do it for any URL (server-side request
forgery), their clean twin refuses every address that is not public.

    python fetcher.py

- `fetch_page(url)`: bug: `urllib` opens any URL it is given (loopback, `file://` included).
- `preview_link(link)`: bug: refuses `localhost`, `127.0.0.1` and `::1` as written, then follows
  redirects: the decimal form of loopback (or a redirect from elsewhere) gets through.
- `fetch_page_safe(url)`: clean: http(s) only; resolves the host and refuses every address that is
  not global (loopback, private, link-local, reserved, unspecified); follows no redirect.
- `word_count(text)`: clean.

Every fetch is bounded (a short timeout, the first `MAX_BYTES` of the body). Outside a sandbox
fuzzgate never sends these tools a URL of its listener. With `FETCHER_LOG=FILE` set, every URL a tool
is given is appended to FILE first, so a test can tell which URLs the server received.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import socket
import sys
import urllib.error
import urllib.parse
import urllib.request
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

MAX_BYTES = 4096
TIMEOUT_S = 3.0

# Plain text logs: MCPServer would draw each traceback through rich, a CPU-bound third of a second
# per exception (tests/servers/sdk_strict.py keeps rich, as most real servers on the SDK log).
logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
app = MCPServer("fetcher", log_level="WARNING")

Url = Annotated[str, Field(max_length=2000, description="The URL of the page to fetch.")]


def _received(url: str) -> None:
    log = os.environ.get("FETCHER_LOG")
    if log:
        with open(log, "a", encoding="utf-8", errors="backslashreplace") as handle:
            handle.write(url.replace("\n", "\\n") + "\n")


def _read(opener: urllib.request.OpenerDirector, url: str) -> str:
    try:
        with opener.open(url, timeout=TIMEOUT_S) as response:
            return response.read(MAX_BYTES).decode("utf-8", "replace")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise ToolError(f"cannot fetch the page: {type(exc).__name__}") from None


@app.tool()
def fetch_page(url: Url) -> str:
    """Fetch a web page and return its text."""
    _received(url)
    return _read(urllib.request.build_opener(), url)  # planted: any URL, any scheme, any host


@app.tool()
def preview_link(link: Annotated[str, Field(max_length=2000, description="A link to preview.")]) -> str:
    """Return the start of the page a link leads to."""
    _received(link)
    host = (urllib.parse.urlsplit(link).hostname or "").lower()
    if host in ("localhost", "127.0.0.1", "::1"):  # planted: the host as written, not as resolved
        raise ToolError("links to this machine are not allowed")
    return _read(urllib.request.build_opener(), link)[:200]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        raise ToolError("the page redirects elsewhere")


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


@app.tool()
def fetch_page_safe(url: Url) -> str:
    """Fetch a public web page and return its text."""
    _received(url)
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ToolError("only http and https URLs are fetched")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise ToolError("the URL's port is not a number") from None
    if not _public(parts.hostname, port):
        raise ToolError("the URL's host is not a public address")
    # A redirect could lead to an address that was not checked: none is followed.
    return _read(urllib.request.build_opener(_NoRedirect), url)


@app.tool()
def word_count(text: Annotated[str, Field(max_length=10_000)]) -> int:
    """Count the words of a text."""
    return len(text.split())


if __name__ == "__main__":
    app.run("stdio")
